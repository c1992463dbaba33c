"""Credential tables: OAuth tokens, API keys, uploaded resources, verification codes and
WebAuthn challenges."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import Named, Row, UTCDateTime, big_int, long_text, moment, named_keys, text


class Token(Named, table=True):
    __tablename__ = "token"
    __table_args__ = named_keys(
        "token",
        sa.Index("ix_token_org_created", "organization", "created_time", "pk"),
        sa.Index("ix_token_org_user", "organization", "user"),
        # the OAuth endpoints resolve a token by code or by token hash
        sa.Index("ix_token_code", "code"),
        sa.Index("ix_token_access_hash", "access_token_hash"),
        sa.Index("ix_token_refresh_hash", "refresh_token_hash"),
        sa.Index("ix_token_user_code", "user_code"),
        sa.Index("ix_token_family", "family"),
    )

    json_aliases: ClassVar[dict[str, str]] = {"d_po_p_jkt": "dPoPJkt"}
    # the server's bookkeeping of a grant in progress, not part of Casdoor's object
    json_hidden: ClassVar[frozenset[str]] = frozenset({
        "pk", "access_token_hash", "refresh_token_hash", "nonce", "redirect_uri", "user_code", "family",
        "public_client"})
    # what makes a token usable is the server's alone: no client sets a code or a token
    json_server_set: ClassVar[frozenset[str]] = frozenset({
        "code", "access_token", "refresh_token", "code_challenge", "code_is_used", "code_expire_in", "resource",
        "d_po_p_jkt"})

    application: str = text(100)
    organization: str = text(100)
    user: str = text(100)
    code: str = text(100)  # the SHA-256 of the authorization code
    # never the token itself: its fingerprint (oauth/oauth.py fingerprint); found by the hashes below
    access_token: str = long_text()
    refresh_token: str = long_text()
    access_token_hash: str = text(100)
    refresh_token_hash: str = text(100)
    expires_in: int = 0  # seconds
    scope: str = text(255)
    token_type: str = text(100)
    grant_type: str = text(100)
    code_challenge: str = text(100)
    code_is_used: bool = False
    code_expire_in: int = big_int()  # unix time, as in Casdoor
    resource: str = text(255)  # RFC 8707 resource indicator
    d_po_p_jkt: str = text(100)  # DPoP key thumbprint
    nonce: str = text(255)  # the OpenID nonce of the authorization request, for the id_token
    redirect_uri: str = text(1000)  # where the code was sent: the exchange must name the same
    user_code: str = text(20)  # a device authorization's code, typed on the verification page
    # the name of the first row of its chain of refresh rotations: replaying a rotated refresh
    # token revokes the whole chain (oauth/oauth.py)
    family: str = text(100)
    public_client: bool = False  # the chain began without the client's secret (PKCE, device flow)


class Key(Named, table=True):
    """An API key (Casdoor's Key): an access key and secret that act as its user, or as its
    application's client (signin/credentials.py). The secret is kept as its SHA-256."""

    __tablename__ = "key"
    __table_args__ = named_keys("key", sa.UniqueConstraint("access_key", name="uq_key_access_key"))
    json_secrets: ClassVar[frozenset[str]] = frozenset({"access_secret"})
    json_secrets_revealable: ClassVar[bool] = False
    json_server_set: ClassVar[frozenset[str]] = frozenset({"updated_time"})

    updated_time: datetime | None = moment()
    display_name: str = text(100)
    type: str = text(100)  # Organization, Application, User or General
    organization: str = text(100)
    application: str = text(100)
    user: str = text(100)
    access_key: str = text(100)
    access_secret: str = text(100)
    expire_time: datetime | None = moment()
    state: str = text(100)  # Active or Inactive


class Resource(Named, table=True):
    __tablename__ = "resource"
    __table_args__ = named_keys(
        "resource",
        sa.Index("ix_resource_owner_user", "owner", "user", "created_time"),
    )

    # Casdoor names resources by their storage path, which outgrows 100 chars
    name: str = text(255)

    user: str = text(100)
    provider: str = text(100)
    application: str = text(100)
    tag: str = text(100)
    parent: str = text(100)
    file_name: str = text(255)
    file_type: str = text(100)
    file_format: str = text(100)
    file_size: int = big_int()  # bytes
    url: str = text(500)
    description: str = text(500)


class Verification(Named, table=True):
    """Casdoor's VerificationRecord: a code sent by email or SMS (signin/verifications.py)."""

    __tablename__ = "verification"
    __table_args__ = named_keys(
        "verification",
        sa.Index("ix_verification_owner_receiver", "owner", "receiver", "created_time"),
        # the resend limit and the code check find a receiver's (and a user's) latest code
        sa.Index("ix_verification_receiver_time", "receiver", "time"),
        sa.Index("ix_verification_user_time", "user", "time"),
    )
    # the server's count of checks against the code, not part of Casdoor's object
    json_hidden: ClassVar[frozenset[str]] = frozenset({"pk", "attempts"})
    # a code not yet used signs someone in or resets a password
    json_own_admin_secrets: ClassVar[frozenset[str]] = frozenset({"code"})

    remote_addr: str = text(100)
    type: str = text(100)
    user: str = text(100)
    provider: str = text(100)
    receiver: str = text(255)  # an email address or a phone number
    code: str = text(100)
    time: int = big_int()  # unix seconds, as in Casdoor
    is_used: bool = False
    attempts: int = 0  # checks made against this code: it is void after the limit


class WebAuthnChallenge(Row, table=True):
    """A WebAuthn ceremony (signin/webauthn.py): the challenge the server sent, found by
    the SHA-256 of the random cookie set with it, never by anything the client echoes back.
    Marked used by the first finish; kept until expires_at, so that the ceremonies of the
    last few minutes can be counted per client address."""

    __tablename__ = "webauthn_challenge"
    __table_args__ = (
        sa.UniqueConstraint("token_hash", name="uq_webauthn_challenge_token_hash"),
        sa.Index("ix_webauthn_challenge_expires", "expires_at"),
        sa.Index("ix_webauthn_challenge_ip", "client_ip", "expires_at"),
    )

    token_hash: str = text(64)
    purpose: str = text(20)  # "signup" (registration) | "signin" (authentication)
    challenge: str = text(100)  # base64url
    owner: str = text(100)  # the user it was issued for
    user_name: str = text(100)
    application: str = text(100)  # signin: the application named at begin
    session_id: str = text(100)  # signup: the console session that asked for it
    client_ip: str = text(100)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    used: bool = False



class UpstreamState(Row, table=True):
    """A sign-in at an upstream identity provider under way (federation/upstream.py): found by the
    SHA-256 of the `state` sent to the provider, bound to the SHA-256 of the browser's cookie,
    the application, the provider, the target (signin, signup, link; the user for a link),
    the authorization request the sign-in answers and the invitation code a sign-up spends.
    Consumed by the first callback; kept, with the error a refused callback met, until expires_at."""

    __tablename__ = "upstream_state"
    __table_args__ = (
        sa.UniqueConstraint("state_hash", name="uq_upstream_state_state_hash"),
        sa.Index("ix_upstream_state_expires", "expires_at"),
        sa.Index("ix_upstream_state_error_id", "error_id"),
    )

    state_hash: str = text(64)
    browser_hash: str = text(64)
    application: str = text(100)
    provider: str = text(100)
    method: str = text(20)  # signin | signup | link
    user: str = text(201)  # owner/name of the account a link is for
    code_verifier: str = text(128)  # PKCE (RFC 7636): sent once, with the code
    nonce: str = text(64)
    authorize_query: str = long_text()  # the OAuth authorize request answered after the sign-in
    return_to: str = text(500)  # a path of this server: where a plain sign-in goes on to
    invitation_code: str = text(100)  # the sign-up page's invitationCode, for a sign-up the flow opens
    used: bool = False
    error_id: str = text(64)  # a refused callback's error, shown once on the sign-in page
    error: str = text(500)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
