"""The account a checked SAML assertion signs in to (saml/saml_sp.py proves the identity),
under the upstream-identity rules of federation/federation.py.

As Casdoor's SAML providers: the application must list the provider (of its organization, or a
shared one), with canSignIn on; the NameID names the user of the application's organization by
name, email or phone (an IdP's NameID is one of those), and a forbidden or deleted account is
refused. Otherwise the identity goes through federation.resolve (the account linked to the
NameID, then sign-up when the application and the provider row allow it) for every type: Custom
links in the user's `custom` field, Keycloak and Aliyun IDaaS (no field of their own) in the
property oauth_<Type>_id."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core.errors import ServiceError
from iam_console.federation import federation
from iam_console.saml.saml_sp import Assertion, mapped
from iam_console.signin import auth


def account(db: Session, application: m.Application, assertion: Assertion, *, method: str = federation.SIGN_IN,
            client_ip: str = "", invitation_code: str = "") -> m.User:
    """`method`: signin (the sign-in page's button, or a sign-in the page did not start) or
    signup (the sign-up page's: a new account needs canSignUp, an existing one canSignIn).
    `invitation_code`: spent by a sign-up, under the sign-up form's rules (federation.resolve)."""
    provider = assertion.provider
    row = federation.provider_row(application, provider.name)
    if row is None or provider.owner not in (application.organization, b.ADMIN_OWNER):
        raise ServiceError(federation.NOT_ENABLED, provider.name)
    if method == federation.SIGN_IN and not row.can_sign_in:
        raise ServiceError(federation.NO_SIGN_IN, provider.name, application.name)
    fields = mapped(assertion)
    identity = federation.UpstreamIdentity(
        provider_type=provider.type, id=fields["id"], username=fields["username"],
        display_name=fields["displayName"], email=fields["email"], avatar=fields["avatarUrl"],
        extra={k: v[0] for k, v in assertion.attributes.items() if k and v})
    user = auth.find_user(db, application.organization, identity.id)
    if user is not None:
        if user.is_deleted or user.is_forbidden:
            raise ServiceError(federation.FORBIDDEN)
        if not row.can_sign_in:
            raise ServiceError(federation.NO_SIGN_IN, provider.name, application.name)
    else:
        user = federation.resolve(db, application, provider, row, identity, method=method, client_ip=client_ip,
                                  invitation_code=invitation_code).user
    auth.refuse_if_frozen(db, user, application)
    audit(db, organization=user.owner, user=user.name, action="saml-login", request_uri="/api/acs",
          client_ip=client_ip, obj={"provider": provider.name, "application": application.name})
    return user
