"""Accounts for upstream identities: who a person signed in at another identity provider
(an OAuth 2.0 / OpenID Connect provider, a wallet...) is here. Independent of the protocol: the
protocol's code (federation/upstream.py for OAuth) proves the identity, then calls `resolve`,
`link` or `unlink`. docs/security.md, "Upstream identity providers", states the rules.

The link is Casdoor's: the user's field named after the provider type (`github`, `google`,
`custom`...: User.third_party_ids) holds the upstream id; a type without such a field (the SAML
types Keycloak and Aliyun IDaaS) is linked by its property `oauth_<Type>_id` alone, which
Casdoor writes for every type. The properties
`oauth_<Type>_id`, `_username`, `_displayName`, `_email`, `_avatarUrl` (and `_extra`, the mapped
claims as JSON) what the provider said last. The provider's access and refresh tokens are not
kept.

Order of `resolve`, as Casdoor's /api/login with a provider: the user linked to the upstream id
signs in; else, when the application's enableLinkWithEmail is on, the user of the application's
organization with the identity's email (only an email the provider says is verified, and only to an
account whose own email is trusted: `email_trusted`) is linked and signs in; else a user is
signed up when the application and the provider row allow it, under the sign-up form's invitation
rules (signin/signup.invitation_for). The application's provider row must allow sign-in
(canSignIn) for every sign-in, and its country codes bound where a signed-up account may come from."""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, patterns
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity import invitations
from iam_console.identity.tables import THIRD_PARTY_KEYS
from iam_console.signin import signup

MAX_FIELD = 100
MAX_EXTRA = 50  # mapped claims kept in oauth_<Type>_extra
SIGN_IN, SIGN_UP, LINK = "signin", "signup", "link"
METHODS = (SIGN_IN, SIGN_UP, LINK)
ALL_COUNTRIES = frozenset({"", "All", "all"})
NOT_IN_USERNAME = re.compile(r"[\s/\\\x00-\x1f\x7f]+")

NOT_ENABLED = "The provider: %s is not enabled for the application"
NO_SIGN_IN = "The provider: %s cannot be used to sign in to the application %s"
NOT_ALLOWED_TO_SIGN_UP = ("The account for provider: %s and username: %s (%s) does not exist and is not allowed "
                          "to sign up as new account, please contact your IT support")
NOT_ALLOWED_VIA = ("The account for provider: %s and username: %s (%s) does not exist and is not allowed to sign "
                   "up as new account via %s, please use another way to sign up")
LINKED_ELSEWHERE = ("The account for provider: %s and username: %s (%s) is already linked to another account: "
                    "%s (%s)")
FORBIDDEN = "The user is forbidden to sign in, please contact the administrator"
UNVERIFIED_EMAIL = ("The account with the email %s has not verified it, so it is not linked by email: sign in to "
                    "it and link the provider from the account page, or ask an administrator")
REGION_REFUSED = "Your region is not allow to signup by phone"


@dataclass(frozen=True)
class UpstreamIdentity:
    """Who the upstream provider says signed in. `id` is the provider's stable id of the person;
    `email_verified` whether the provider vouches for the email (linking by email needs it)."""
    provider_type: str
    id: str
    username: str = ""
    display_name: str = ""
    email: str = ""
    phone: str = ""
    avatar: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    email_verified: bool = False
    country_code: str = ""


@dataclass(frozen=True)
class ProviderRow:
    """An application's provider entry: which provider, and what it may do for the application."""
    name: str
    can_sign_up: bool = False
    can_sign_in: bool = False
    can_unlink: bool = False
    prompted: bool = False
    signup_group: str = ""
    rule: str = ""
    country_codes: tuple[str, ...] = ()

    @classmethod
    def of(cls, item: dict) -> ProviderRow:
        codes = item.get("countryCodes")
        return cls(name=str(item.get("name") or ""), can_sign_up=item.get("canSignUp") is True,
                   can_sign_in=item.get("canSignIn") is True, can_unlink=item.get("canUnlink") is True,
                   prompted=item.get("prompted") is True, signup_group=str(item.get("signupGroup") or ""),
                   rule=str(item.get("rule") or ""),
                   country_codes=tuple(str(c) for c in codes if isinstance(c, str)) if isinstance(codes, list)
                   else ())

    def country_allowed(self, country_code: str) -> bool:
        """Casdoor's country-code match: no codes, All, or the identity's own."""
        return not self.country_codes or any(c in ALL_COUNTRIES or c.upper() == country_code.upper()
                                             for c in self.country_codes)


@dataclass(frozen=True)
class Resolved:
    user: m.User
    signed_up: bool = False
    linked_by_email: bool = False


def link_key(provider_type: str) -> str:
    """The user field a provider type's link lives in (Casdoor: the type, lower-cased)."""
    key = link_column(provider_type)
    if key is None:
        raise ServiceError("The provider type: %s is not supported", provider_type[:MAX_FIELD])
    return key


def link_column(provider_type: str) -> str | None:
    """The user field of the type's link; None for a type without one (linked by its property)."""
    key = provider_type.replace(" ", "").lower()
    return key if key in THIRD_PARTY_KEYS else None


def link_property(provider_type: str) -> str:
    return f"oauth_{provider_type}_id"


def linked_value(user: m.User, provider_type: str) -> str:
    """The upstream id the account is linked to for the type ("" when not linked)."""
    key = link_column(provider_type)
    value = (user.third_party_ids or {}).get(key) if key else (user.properties or {}).get(link_property(provider_type))
    return str(value or "")


def provider_row(application: m.Application, provider_name: str) -> ProviderRow | None:
    for item in application.providers or []:
        if isinstance(item, dict) and item.get("name") == provider_name:
            return ProviderRow.of(item)
    return None


def provider_of(db: Session, application: m.Application, provider_name: str,
                categories: tuple[str, ...] = ("OAuth",)) -> tuple[m.Provider, ProviderRow]:
    """An application's provider by name (its organization's own, else a shared one) with the
    application's row for it; refused when the application does not list it."""
    name = str(provider_name or "")[:MAX_FIELD]
    own_first = sa.case((m.Provider.owner == application.organization, 0), else_=1)
    provider = db.exec(select(m.Provider).where(
        m.Provider.name == name, m.Provider.owner.in_((application.organization, b.ADMIN_OWNER)))
        .order_by(own_first).limit(1)).first()
    if provider is None:
        raise ServiceError("The provider: %s does not exist", name)
    row = provider_row(application, name)
    if row is None or provider.category not in categories:
        raise ServiceError(NOT_ENABLED, name)
    return provider, row


def linked_user(db: Session, organization: str, provider_type: str, upstream_id: str) -> m.User | None:
    """The user of the organization whose link for the provider type holds the upstream id."""
    if not upstream_id:
        return None
    key = link_column(provider_type)  # a JSON path both ways: SQLite, PostgreSQL and MariaDB read it
    column = m.User.third_party_ids[key].as_string() if key else \
        m.User.properties[link_property(provider_type)].as_string()
    return db.exec(select(m.User).where(m.User.owner == organization, column == upstream_id).limit(1)).first()


def _checked(identity: UpstreamIdentity, provider: m.Provider) -> UpstreamIdentity:
    if not isinstance(identity.id, str) or not identity.id.strip():
        raise ServiceError("Failed to login in: %s", "the provider did not give the user's id")
    if len(identity.id) > MAX_FIELD:
        raise ServiceError("Failed to login in: %s", "the user's id is too long")
    if provider.email_regex and identity.email:
        try:
            matched = patterns.fullmatch(provider.email_regex, identity.email)
        except patterns.PatternError:
            raise ServiceError("Failed to login in: %s", "the provider's email regex is not valid") from None
        if not matched:
            raise ServiceError("Email is invalid")
    cut = {name: str(getattr(identity, name) or "").strip()[:MAX_FIELD]
           for name in ("username", "display_name", "email", "phone", "country_code")}
    return UpstreamIdentity(provider_type=identity.provider_type, id=identity.id.strip(),
                            avatar=str(identity.avatar or "")[:500], extra=dict(identity.extra or {}),
                            email_verified=identity.email_verified is True, **cut)


def _email_free(db: Session, user: m.User, email: str) -> bool:
    return db.exec(select(m.User.pk).where(m.User.owner == user.owner, sa.func.lower(m.User.email) == email.lower(),
                                           m.User.pk != user.pk).limit(1)).first() is None


def _set_properties(db: Session, user: m.User, provider: m.Provider, identity: UpstreamIdentity) -> None:
    """Casdoor's SetUserOAuthProperties, without the tokens: what the provider said, and the
    fields the account leaves empty."""
    props = dict(user.properties or {})
    prefix = f"oauth_{provider.type}_"
    for suffix, value in (("id", identity.id), ("username", identity.username),
                          ("displayName", identity.display_name), ("email", identity.email),
                          ("avatarUrl", identity.avatar)):
        if value:
            props[prefix + suffix] = value
    if identity.extra:
        extra = {str(k)[:MAX_FIELD]: str(v)[:500] for k, v in list(identity.extra.items())[:MAX_EXTRA]
                 if isinstance(v, str | int | float | bool)}
        props[prefix + "extra"] = json.dumps(extra, sort_keys=True)
    user.properties = props
    if not user.display_name:
        user.display_name = identity.display_name or identity.username or identity.id
    if identity.email and not user.email and _email_free(db, user, identity.email):
        user.email = identity.email.lower()
        user.email_verified = identity.email_verified
    if identity.avatar and not user.avatar:
        user.avatar = identity.avatar


def _link(db: Session, user: m.User, provider: m.Provider, identity: UpstreamIdentity) -> None:
    _set_properties(db, user, provider, identity)  # oauth_<Type>_id: the link of a type without a field
    key = link_column(provider.type)
    if key:
        user.third_party_ids = {**(user.third_party_ids or {}), key: identity.id}
    db.add(user)
    db.flush()


def email_trusted(user: m.User) -> bool:
    """Whether an account's email may receive a link by email: the account proved it (a code, or a
    provider that vouched for it), or the account was not made by sign-up (an admin's add-user, an
    import, a syncer, LDAP: an administrator gave the address). A self-made account's unproven email
    is anyone's claim (docs/security.md, "Upstream identity providers")."""
    return user.email_verified or user.register_type != signup.SELF_SIGN_UP


def _usable(user: m.User) -> m.User:
    if user.is_deleted or user.is_forbidden:
        raise ServiceError(FORBIDDEN)
    return user


def _username(db: Session, organization: m.Organization, identity: UpstreamIdentity) -> str:
    """The new account's name: the upstream username (the email where the organization uses
    emails as usernames), made unique in the organization as Casdoor does (`name_<part>`)."""
    wanted = identity.email if organization.use_email_as_username and identity.email else identity.username
    prefix = link_column(identity.provider_type) or identity.provider_type.replace(" ", "").lower()
    name = NOT_IN_USERNAME.sub("_", wanted).strip("_")[:80] or f"{prefix}_{identity.id}"
    name = NOT_IN_USERNAME.sub("_", name)[:80]
    while lookup.user(db, organization.name, name) is not None:
        name = f"{name[:80]}_{uuid.uuid4().hex[:4]}"
    return name


def _group(organization: m.Organization, group: str) -> list[str]:
    return [group if "/" in group else f"{organization.name}/{group}"] if group else []


def _sign_up(db: Session, application: m.Application, organization: m.Organization, provider: m.Provider,
             row: ProviderRow, identity: UpstreamIdentity, client_ip: str, invitation_code: str) -> m.User:
    if not application.enable_sign_up:
        raise ServiceError(NOT_ALLOWED_TO_SIGN_UP, provider.type, identity.username, identity.display_name)
    if not row.can_sign_up:
        raise ServiceError(NOT_ALLOWED_VIA, provider.type, identity.username, identity.display_name, provider.type)
    if not row.country_allowed(identity.country_code):
        raise ServiceError(REGION_REFUSED)
    email = identity.email.lower()
    if email and db.exec(select(m.User.pk).where(m.User.owner == organization.name,
                                                 sa.func.lower(m.User.email) == email).limit(1)).first():
        email = ""  # another account holds it; enableLinkWithEmail decides whether that one is linked
    name = _username(db, organization, identity)
    # the sign-up form's invitation rules (required, quota, application, bound account); the
    # invitation's group wins over the provider row's
    invitation = signup.invitation_for(db, application, invitation_code, username=name, email=identity.email,
                                       phone=identity.phone)
    groups = _group(organization, invitation.signup_group if invitation is not None and invitation.signup_group
                    else row.signup_group or application.default_group)
    count = db.exec(select(sa.func.count()).select_from(m.User).where(m.User.owner == organization.name)).one()
    body = {
        "owner": organization.name, "name": name, "type": "normal-user", "password": uuid.uuid4().hex,
        "displayName": identity.display_name or identity.username or identity.id, "email": email,
        "emailVerified": bool(email) and identity.email_verified, "avatar": identity.avatar or
        organization.default_avatar, "countryCode": identity.country_code, "region": identity.country_code,
        "score": organization.init_score, "isAdmin": False, "signupApplication": application.name,
        "groups": groups, "tag": application.default_tag, "registerType": signup.SELF_SIGN_UP,
        "invitation": invitation.name if invitation is not None else "",
        "invitationCode": invitation_code.strip() if invitation is not None else "",
        "registerSource": f"{organization.name}/{application.name}", "createdIp": client_ip[:100],
        "properties": {"no": str(count + 2)},
    }
    system = Actor(application=lookup.application(db, b.BUILT_IN_APP))
    crud.add_record(db, system, REGISTRY["user"], body)
    if invitation is not None:
        invitations.count_use(db, invitation)
    user = db.exec(select(m.User).where(m.User.owner == organization.name, m.User.name == name)).one()
    audit(db, organization=organization.name, user=f"{organization.name}/{name}", action="signup",
          request_uri="/api/login", client_ip=client_ip,
          obj={"application": application.name, "organization": organization.name, "username": name,
               "provider": provider.name, "invitation": body["invitation"]})
    return user


def _organization(db: Session, application: m.Application) -> m.Organization:
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise ServiceError("The organization: %s does not exist", application.organization)
    return organization


def resolve(db: Session, application: m.Application, provider: m.Provider, row: ProviderRow,
            identity: UpstreamIdentity, *, method: str = SIGN_IN, client_ip: str = "",
            invitation_code: str = "") -> Resolved:
    """The account an upstream identity signs in to (linked, linked by email, or signed up);
    ServiceError, with nothing written, when the rules refuse it. `method`: signin (the sign-in
    page's button: canSignIn must be on) or signup (the sign-up page's: an existing account still
    needs canSignIn). `invitation_code` is read by a sign-up only, under the sign-up form's rules
    (signin/signup.invitation_for), its use counted in the caller's transaction. The one entry of
    every protocol (OAuth, wallet, SAML); the caller then goes on as a password sign-in does
    (second factor, prompt, session)."""
    if method not in (SIGN_IN, SIGN_UP):
        raise ServiceError("Unknown method: %s", str(method)[:MAX_FIELD])
    identity = _checked(identity, provider)
    organization = _organization(db, application)
    if method == SIGN_IN and not row.can_sign_in:
        raise ServiceError(NO_SIGN_IN, provider.name, application.name)
    user = linked_user(db, organization.name, provider.type, identity.id)
    if user is not None:
        _usable(user)
        if not row.can_sign_in:
            raise ServiceError(NO_SIGN_IN, provider.name, application.name)
        _link(db, user, provider, identity)
        return Resolved(user)
    if application.enable_link_with_email and identity.email and identity.email_verified:
        matches = db.exec(select(m.User).where(m.User.owner == organization.name,
                                               sa.func.lower(m.User.email) == identity.email.lower())
                          .limit(2)).all()
        if len(matches) == 1:
            user = _usable(matches[0])
            if not row.can_sign_in:
                raise ServiceError(NO_SIGN_IN, provider.name, application.name)
            if not email_trusted(user):
                raise ServiceError(UNVERIFIED_EMAIL, identity.email)
            if linked_value(user, provider.type):
                raise ServiceError(LINKED_ELSEWHERE, provider.type, identity.username, identity.display_name,
                                   user.name, user.display_name)
            _link(db, user, provider, identity)
            audit(db, organization=organization.name, user=f"{user.owner}/{user.name}", action="link",
                  request_uri="/api/login", client_ip=client_ip,
                  obj={"provider": provider.name, "by": "email"})
            return Resolved(user, linked_by_email=True)
    user = _sign_up(db, application, organization, provider, row, identity, client_ip, str(invitation_code or ""))
    _link(db, user, provider, identity)
    return Resolved(user, signed_up=True)


def link(db: Session, user: m.User, application: m.Application, provider: m.Provider,
         identity: UpstreamIdentity, *, client_ip: str = "") -> m.User:
    """Link a signed-in user's account to an upstream identity (the account page's Link)."""
    identity = _checked(identity, provider)
    if user.owner != application.organization and application.name != b.BUILT_IN_APP:
        raise ServiceError("The user %s/%s cannot sign in to application %s", user.owner, user.name,
                           application.name)
    other = linked_user(db, user.owner, provider.type, identity.id)
    if other is not None and other.pk != user.pk:
        raise ServiceError(LINKED_ELSEWHERE, provider.type, identity.username, identity.display_name,
                           other.name, other.display_name)
    if linked_value(user, provider.type) not in ("", identity.id):
        raise ServiceError("The account is already linked to another %s account, please unlink it first",
                           provider.type)
    _link(db, user, provider, identity)
    audit(db, organization=user.owner, user=f"{user.owner}/{user.name}", action="link", request_uri="/api/login",
          client_ip=client_ip, obj={"provider": provider.name})
    return user


def application_of_user(db: Session, user: m.User) -> m.Application | None:
    """The application whose provider rows govern a user's links: the one the user signed up
    through, else the organization's default (Casdoor's GetApplicationByUser)."""
    for name in (user.signup_application,):
        if name:
            application = lookup.application(db, name)
            if application is not None and application.organization == user.owner:
                return application
    organization = lookup.organization(db, user.owner)
    if organization is not None and organization.default_application:
        application = lookup.application(db, organization.default_application)
        if application is not None:
            return application
    return db.exec(select(m.Application).where(m.Application.organization == user.owner)
                   .order_by(m.Application.created_time, m.Application.pk).limit(1)).first()


def unlink(db: Session, actor_user: m.User, target: m.User, provider_type: str, provider_name: str = "",
           *, is_global_admin: bool = False, client_ip: str = "") -> None:
    """Casdoor's /api/unlink: a user unlinks their own identity where the application's row
    allows it (canUnlink); a global admin unlinks anyone's."""
    key = link_key(str(provider_type or ""))
    if not is_global_admin:
        if target.pk != actor_user.pk:
            raise ServiceError("You are not the global admin, you can't unlink other users")
        application = application_of_user(db, target)
        if application is None:
            raise ServiceError("You can't unlink yourself, you are not a member of any application")
        if not application.providers:
            raise ServiceError("This application has no providers")
        row = provider_row(application, provider_name) if provider_name else None
        if row is None:
            for item in application.providers:
                if not isinstance(item, dict) or not isinstance(item.get("name"), str):
                    continue
                found = db.exec(select(m.Provider.type).where(
                    m.Provider.name == item["name"],
                    m.Provider.owner.in_((application.organization, b.ADMIN_OWNER)))).first()
                if found is not None and found.replace(" ", "").lower() == key:
                    row = ProviderRow.of(item)
                    break
        if row is None:
            raise ServiceError("This application has no providers of type %s", str(provider_type)[:MAX_FIELD])
        if not row.can_unlink:
            raise ServiceError("This provider can't be unlinked")
    if not (target.third_party_ids or {}).get(key):
        raise ServiceError("Please link first")
    target.third_party_ids = {k: v for k, v in (target.third_party_ids or {}).items() if k != key}
    target.properties = {k: v for k, v in (target.properties or {}).items()
                         if not k.lower().startswith(f"oauth_{key}_") and not k.startswith(f"oauth_{provider_type}_")}
    db.add(target)
    audit(db, organization=target.owner, user=f"{target.owner}/{target.name}", action="unlink",
          request_uri="/api/unlink", client_ip=client_ip, obj={"providerType": provider_type})

