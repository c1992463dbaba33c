"""Sign-in state: console sessions, sign-ins in flight and their second factors, verification
codes, WebAuthn challenges and the throttles."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import (
    Named,
    Row,
    UTCDateTime,
    big_int,
    created,
    json_list,
    named_keys,
    text,
)


class Session(Row, table=True):
    """Casdoor's session object: one row per user and application, listing the
    ids of that user's live sign-ins (what /sessions and the SDKs show)."""

    __tablename__ = "session"
    __table_args__ = (
        sa.UniqueConstraint("owner", "name", "application", name="uq_session_owner_name_app"),
        sa.Index("ix_session_owner_created", "owner", "created_time", "pk"),
        sa.Index("ix_session_created", "created_time", "pk"),
    )

    owner: str = text(100)
    name: str = text(100)
    application: str = text(100)
    created_time: datetime = created()
    session_id: list = json_list()


class AuthSession(Row, table=True):
    """A console sign-in, found by the SHA-256 of the cookie value.

    The cookie holds a random token; only its hash is stored, so a database
    leak does not hand out live sessions."""

    __tablename__ = "auth_session"
    __table_args__ = (
        sa.UniqueConstraint("token_hash", name="uq_auth_session_token_hash"),
        sa.Index("ix_auth_session_user", "owner", "user_name"),
    )

    token_hash: str = text(64)
    session_id: str = text(100)  # public id listed in Session.session_id
    owner: str = text(100)
    user_name: str = text(100)
    application: str = text(100)
    created_time: datetime = created()
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    client_ip: str = text(100)
    user_agent: str = text(255)
    # the global admin (owner/name) acting as this session's user (identity/impersonation.py)
    impersonator: str = text(200)
    # how the sign-in was made ("Password", "Password+app" after a second factor, "WebAuthn"):
    # the ID tokens answered from this session name its level (acr, oauth/oauth.py)
    signin_method: str = text(100)


class PendingSignIn(Row, table=True):
    """A sign-in whose password was right and whose second factor is still owed.

    Found by the SHA-256 of a short-lived HttpOnly cookie; no session exists
    until a code (or a recovery code) completes it (signin/auth.py)."""

    __tablename__ = "pending_signin"
    __table_args__ = (sa.UniqueConstraint("token_hash", name="uq_pending_signin_token_hash"),)

    token_hash: str = text(64)
    owner: str = text(100)
    user_name: str = text(100)
    application: str = text(100)
    auto_signin: bool = False
    signin_method: str = text(100)
    created_time: datetime = created()
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    attempts: int = 0


class MfaSetup(Row, table=True):
    """A second factor being set up: the secret the server chose at initiate (a TOTP
    seed, or the address codes go to), the hash of the recovery code shown then,
    and whether a code has proven it. Enable stores only what is here."""

    __tablename__ = "mfa_setup"
    __table_args__ = (sa.UniqueConstraint("owner", "user_name", "mfa_type", name="uq_mfa_setup_user_type"),)

    owner: str = text(100)
    user_name: str = text(100)
    mfa_type: str = text(20)
    secret: str = text(100)
    recovery_code_hash: str = text(100)
    verified: bool = False
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


class Throttle(Row, table=True):
    """Counters and one-time marks under a key, living until `expires` (Unix time):
    the code checks per account and per client address, and the TOTP time steps
    already used (core/throttle.py)."""

    __tablename__ = "throttle"
    __table_args__ = (sa.UniqueConstraint("key", name="uq_throttle_key"), sa.Index("ix_throttle_expires", "expires"))

    key: str = text(200)
    count: int = 0
    expires: int = Field(default=0, sa_type=sa.BigInteger)


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
