"""Who is calling, resolved from any of Casdoor's credentials (casdoor-api.md §3).

An Actor is one of: anonymous, a user (global admin, organization admin or
ordinary user) or an application client, which Casdoor treats as a global admin."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from sqlmodel import Session, select

from ..models import Application, User
from . import builtin as b
from . import lookup
from .auth import account_for_token
from .errors import ServiceError
from .tokens import live_token


@dataclass(frozen=True)
class Actor:
    user: User | None = None
    application: Application | None = None  # set for an application client
    session_id: str = ""  # the console session the call came through, if it did (AuthSession.session_id)

    @property
    def is_anonymous(self) -> bool:
        return self.user is None and self.application is None

    @property
    def is_app(self) -> bool:
        return self.application is not None and self.user is None

    @property
    def is_global_admin(self) -> bool:
        if self.is_app:
            return True
        return self.user is not None and self.user.is_admin and self.user.owner == b.BUILT_IN_ORG

    @property
    def is_org_admin(self) -> bool:
        return self.user is not None and self.user.is_admin and not self.is_global_admin

    @property
    def is_admin(self) -> bool:
        return self.is_global_admin or self.is_org_admin

    @property
    def organization(self) -> str:
        """The caller's organization ('' for anonymous; 'admin' for an application client)."""
        if self.user is not None:
            return self.user.owner
        return b.ADMIN_OWNER if self.application is not None else ""

    @property
    def name(self) -> str:
        if self.user is not None:
            return self.user.name
        return self.application.name if self.application is not None else "anonymous"

    @property
    def id(self) -> str:
        """As Casdoor records it: org/user, app/<application>, or anonymous."""
        if self.is_app:
            return f"app/{self.application.name}"
        return f"{self.organization}/{self.name}" if self.user else "anonymous"


ANONYMOUS = Actor()


def _usable(user: User | None) -> bool:
    return user is not None and not user.is_deleted and not user.is_forbidden


def from_session(db: Session, token: str) -> Actor | None:
    found = account_for_token(db, token)
    return Actor(user=found[0], session_id=found[1].session_id) if found else None


def from_client_credentials(db: Session, client_id: str, client_secret: str) -> Actor:
    """clientId/clientSecret from the query or HTTP Basic; wrong ones are an error."""
    application = db.exec(select(Application).where(Application.client_id == client_id)).first()
    if application is None:
        raise ServiceError("Application not found for client ID: %s", client_id[:100])
    if not hmac.compare_digest(application.client_secret.encode(), client_secret.encode()):
        raise ServiceError("Incorrect client secret for application: %s", application.name)
    return Actor(application=application)


def from_access_key(db: Session, access_key: str, access_secret: str) -> Actor:
    user = db.exec(select(User).where(User.access_key == access_key)).first() if access_key else None
    if not _usable(user) or not hmac.compare_digest(user.access_secret.encode(), access_secret.encode()):
        raise ServiceError("Invalid access key or secret")
    return Actor(user=user)


def from_bearer(db: Session, token: str) -> Actor:
    """An access token issued by this server: live, of a usable user or of an application."""
    row = live_token(db, token)
    application = lookup.application(db, row.application) if row is not None else None
    if row is not None and row.grant_type == "client_credentials":
        if application is None:
            raise ServiceError("Access token is invalid or expired")
        return Actor(application=application)
    user = lookup.user(db, row.organization, row.user) if row is not None else None
    if not _usable(user):
        raise ServiceError("Access token is invalid or expired")
    return Actor(user=user, application=application)
