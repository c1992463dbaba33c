"""The account a checked SAML assertion signs in to (services/saml_sp.py proves the identity).

As Casdoor's SAML providers: the application must list the provider, with canSignIn on; the
NameID names the user of the application's organization by name, email or phone (the NameID
of an IdP is one of those); a forbidden or deleted account is refused."""

from __future__ import annotations

from sqlmodel import Session

from .. import models as m
from . import auth
from .errors import ServiceError
from .records import audit
from .saml_sp import Assertion, mapped

NOT_ENABLED = "The provider: %s is not enabled for the application"
NO_SIGN_IN = "The provider: %s cannot be used to sign in to the application %s"
NO_ACCOUNT = ("The account for provider: %s and username: %s (%s) does not exist and is not allowed to sign up as "
              "new account, please contact your IT support")
FORBIDDEN = "The user is forbidden to sign in, please contact the administrator"


def provider_entry(application: m.Application, provider_name: str) -> dict | None:
    return next((item for item in application.providers or []
                 if isinstance(item, dict) and item.get("name") == provider_name), None)


def account(db: Session, application: m.Application, assertion: Assertion, *, client_ip: str = "") -> m.User:
    provider = assertion.provider
    entry = provider_entry(application, provider.name)
    if entry is None:
        raise ServiceError(NOT_ENABLED, provider.name)
    if entry.get("canSignIn") is not True:
        raise ServiceError(NO_SIGN_IN, provider.name, application.name)
    identity = mapped(assertion)
    user = auth.find_user(db, application.organization, identity["id"])
    if user is None or user.is_deleted:
        raise ServiceError(NO_ACCOUNT, provider.type, identity["username"], identity["displayName"])
    if user.is_forbidden:
        raise ServiceError(FORBIDDEN)
    audit(db, organization=user.owner, user=user.name, action="saml-login", request_uri="/api/acs",
          client_ip=client_ip, obj={"provider": provider.name, "application": application.name})
    return user
