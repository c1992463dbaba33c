"""Who is calling, resolved from any of Casdoor's credentials, and how far it reaches.

An Actor is anonymous, a user (global admin, organization admin or ordinary
user) or an application client. A console session and an access key act as
their user. A credential issued through an application is bounded by that
application's organization (docs/security.md, "Who may do what"):
- an application's client acts as an admin of the application's organization;
- a bearer token acts as its user, with admin rights only within the organization
  of the application that issued it (a global admin's token from an application
  of organization A is an admin of A, nothing more).
Only what belongs to the built-in organization acts globally: its admins' sessions
and access keys, and the clients of (and tokens from) its applications."""

from __future__ import annotations

import hmac
from dataclasses import dataclass

from sqlmodel import Session, select

from ..models import Application, User
from . import builtin as b
from . import lookup
from .auth import account_for_token
from .errors import ServiceError
from .passwords import secret_matches
from .tokens import live_token


@dataclass(frozen=True)
class Actor:
    user: User | None = None
    # the client itself (user None), or the application a bearer token was issued through
    application: Application | None = None
    session_id: str = ""  # the console session the call came through, if it did (AuthSession.session_id)

    @property
    def is_anonymous(self) -> bool:
        return self.user is None and self.application is None

    @property
    def is_app(self) -> bool:
        return self.application is not None and self.user is None

    @property
    def bound(self) -> str | None:
        """The organization an application's credential confines the caller to (None: not confined)."""
        if self.application is None or self.application.organization == b.BUILT_IN_ORG:
            return None
        return self.application.organization

    @property
    def is_global_admin(self) -> bool:
        if self.bound is not None:
            return False
        if self.is_app:
            return True  # a client of an application of the built-in organization
        return self.user is not None and self.user.is_admin and self.user.owner == b.BUILT_IN_ORG

    @property
    def is_org_admin(self) -> bool:
        if self.is_app:
            return self.bound is not None
        if self.user is None or not self.user.is_admin or self.is_global_admin:
            return False
        # a token through an organization's application: an admin there, if the user is one there or everywhere
        return self.bound is None or self.user.owner in (self.bound, b.BUILT_IN_ORG)

    @property
    def is_admin(self) -> bool:
        return self.is_global_admin or self.is_org_admin

    @property
    def organization(self) -> str:
        """The organization the caller acts in ('' for anonymous)."""
        if self.is_app:
            return self.application.organization
        if self.user is None:
            return ""
        if self.bound is not None and self.is_org_admin:
            return self.bound  # a global admin's token from an organization's application
        return self.user.owner

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
        return f"{self.user.owner}/{self.user.name}" if self.user else "anonymous"


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
    # an application without a secret (a public client) has no client credentials at all
    if not application.client_secret or not hmac.compare_digest(application.client_secret.encode(),
                                                                client_secret.encode()):
        raise ServiceError("Incorrect client secret for application: %s", application.name)
    return Actor(application=application)


def from_access_key(db: Session, access_key: str, access_secret: str) -> Actor:
    user = db.exec(select(User).where(User.access_key == access_key)).first() if access_key else None
    if not _usable(user) or not secret_matches(user.access_secret, access_secret):
        raise ServiceError("Invalid access key or secret")
    return Actor(user=user)


def from_bearer(db: Session, token: str) -> Actor:
    """An access token issued by this server: live, of a usable user or of an application,
    bounded by the organization of the application it was issued through."""
    row = live_token(db, token)
    application = lookup.application(db, row.application) if row is not None else None
    if application is None:  # without its application a token would be bound to nothing
        raise ServiceError("Access token is invalid or expired")
    if row.grant_type == "client_credentials":
        return Actor(application=application)
    user = lookup.user(db, row.organization, row.user)
    if not _usable(user):
        raise ServiceError("Access token is invalid or expired")
    return Actor(user=user, application=application)
