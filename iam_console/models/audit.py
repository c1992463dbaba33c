"""Sign-in sessions and the audit trail."""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import Named, Row, UTCDateTime, created, json_list, long_text, text


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


class Record(Named, table=True):
    """One audited request: every write, sign-in and sign-out."""

    __tablename__ = "record"
    # records are not unique by name; the integer key is Casdoor's "id". Each filter of the
    # list (organization, user, action, method; a time range on any of them) is an equality on
    # the first column of an index in the list's order (docs/architecture.md, "The audit trail")
    __table_args__ = (
        sa.Index("ix_record_owner_created", "owner", "created_time", "pk"),
        sa.Index("ix_record_organization_created", "organization", "created_time", "pk"),
        sa.Index("ix_record_created", "created_time", "pk"),
        sa.Index("ix_record_user_created", "user", "created_time", "pk"),
        # MySQL's index keys stop at 3072 bytes: the 1000-character action is indexed by its start
        sa.Index("ix_record_action_created", "action", "created_time", "pk", mysql_length={"action": 255}),
        sa.Index("ix_record_method_created", "method", "created_time", "pk"),
    )
    json_aliases: ClassVar[dict[str, str]] = {"pk": "id"}
    json_hidden: ClassVar[frozenset[str]] = frozenset()
    json_exact_search: ClassVar[frozenset[str]] = frozenset({"organization", "user", "action", "method"})

    organization: str = text(100)
    client_ip: str = text(100)
    user: str = text(255)  # an owner/name id: two names of 100 and the slash
    method: str = text(100)
    request_uri: str = text(1000)
    action: str = text(1000)
    language: str = text(100)
    object: str = long_text()
    response: str = long_text()
    status_code: int = 0
    detail: str = long_text()
    is_triggered: bool = False





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


class SamlRequest(Row, table=True):
    """An AuthnRequest this server sent to a SAML provider, waiting for its Response. The
    Response's InResponseTo must name one, once: the ACS deletes it as it accepts the Response
    (saml/saml_sp.py)."""

    __tablename__ = "saml_request"
    __table_args__ = (sa.UniqueConstraint("request_id", name="uq_saml_request_request_id"),
                      sa.Index("ix_saml_request_expires_at", "expires_at"))

    request_id: str = text(100)
    provider_owner: str = text(100)
    provider_name: str = text(100)
    application: str = text(100)  # the application signed in to
    return_to: str = text(1000)  # the same-site path the browser goes to after sign-in
    created_time: datetime = created()
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)


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
