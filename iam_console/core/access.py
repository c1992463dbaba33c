"""Who is calling, and how far it reaches (signin/credentials.py finds the Actor
behind each of Casdoor's credentials).

An Actor is anonymous, a user (global admin, organization admin or ordinary
user) or an application client. A console session and an access key act as
their user. A credential issued through an application is bounded by that
application's organization (docs/security.md, "Who may do what"):
- an application's client acts as an admin of the application's organization;
- a bearer token acts as its user, with admin rights only within the organization
  of the application that issued it (a global admin's token from an application
  of organization A is an admin of A, nothing more).
Only what belongs to the built-in organization acts globally: its admins' sessions
and access keys, and the clients of (and tokens from) its applications. A dynamically registered client
(oauth/registration.py), and every token through it, has no admin rights at all."""

from __future__ import annotations

from dataclasses import dataclass

from iam_console.core import builtin as b
from iam_console.models import Application, User


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
    def registered_dynamically(self) -> bool:
        """Through a client that registered itself (RFC 7591): never an admin (docs/security.md)."""
        return self.application is not None and bool(self.application.registration_access_token)

    @property
    def is_global_admin(self) -> bool:
        if self.bound is not None or self.registered_dynamically:
            return False
        if self.is_app:
            return True  # a client of an application of the built-in organization
        return self.user is not None and self.user.is_admin and self.user.owner == b.BUILT_IN_ORG

    @property
    def is_org_admin(self) -> bool:
        if self.registered_dynamically:
            return False
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
