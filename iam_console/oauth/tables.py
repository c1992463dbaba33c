"""OAuth tokens and access keys."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import sqlalchemy as sa

from iam_console.models.base import Named, Row, big_int, json_dict, long_text, moment, named_keys, text


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
        sa.Index("ix_token_sid", "sid"),
    )

    json_aliases: ClassVar[dict[str, str]] = {"d_po_p_jkt": "dPoPJkt"}
    # the server's bookkeeping of a grant in progress, not part of Casdoor's object
    json_hidden: ClassVar[frozenset[str]] = frozenset({
        "pk", "access_token_hash", "refresh_token_hash", "nonce", "redirect_uri", "user_code", "family",
        "public_client", "sid"})
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
    # the browser session (its AuthSession's session_id) the grant was given in: the ID token's
    # `sid`, and how its logout finds the applications it signed in to (oauth/logout.py)
    sid: str = text(100)


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


class PushedRequest(Row, table=True):
    """An authorization request a client pushed (RFC 9126), found by the SHA-256 of its
    request_uri. It may open the authorization endpoint until `expires`; the first opening gives
    the user time to sign in (oauth/pushed.py), and the code it leads to marks it used: one code
    per push (docs/security.md, "PAR, JAR and DPoP")."""

    __tablename__ = "pushed_request"
    __table_args__ = (sa.UniqueConstraint("uri_hash", name="uq_pushed_request_uri_hash"),
                      sa.Index("ix_pushed_request_expires", "expires"))

    uri_hash: str = text(64)
    application: str = text(100)  # the client that pushed it: no other client may use it
    parameters: dict = json_dict()  # the authorization request's parameters, checked at the push
    expires: int = big_int()  # Unix time
    opened: bool = False
    used: bool = False
