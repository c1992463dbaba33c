"""Defaults for new records (spec part 1 §3, part 2 §9, part 3 'Defaults for
new records'): what the console's Add button creates before opening the form.

`new_record` returns a wire object; the caller adds it through crud.add_record,
so the new record passes the same rules as any other."""

from __future__ import annotations

import secrets
import string
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from sqlmodel import Session

from .. import models as m
from ..models.base import format_time, utcnow
from . import builtin as b
from . import lookup
from .access import Actor
from .resources import REGISTRY, Ownership
from .seed import USER_MODEL_TEXT


def random_suffix() -> str:
    return secrets.token_hex(3)


def obfuscator_key(kind: str) -> str:
    """Spec part 1 §4: choosing an obfuscator type resets the key to the type's
    default: a fresh random key (AES-128: 16 bytes, DES: 8 bytes, as hex); none for Plain."""
    size = {"AES": 16, "DES": 8}.get(kind)
    return secrets.token_hex(size) if size else ""


def _user(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    org = lookup.organization(db, owner)
    return {
        "type": "normal-user", "password": secrets.token_urlsafe(16), "displayName": f"New User - {suffix}",
        "email": f"{suffix}@example.com", "countryCode": (org.country_codes or ["US"])[0] if org else "US",
        "affiliation": "Example Inc.", "tag": "staff", "isAdmin": owner == b.BUILT_IN_ORG,
        "score": org.init_score if org else 0,
        "signupApplication": (org.default_application if org else "") or b.BUILT_IN_APP,
    }


def _organization_defaults(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    # argon2id, deliberately not the spec's 'plain' (DESIGN.md, 'Passwords')
    return {"displayName": f"New Organization - {suffix}", "passwordType": "argon2id",
            "passwordObfuscatorType": "Plain", "passwordExpireDays": 0, "countryCodes": ["US"],
            "languages": list(b.LANGUAGES), "enableSoftDeletion": False, "isProfilePublic": True, "enableTour": True,
            "navItems": ["all"], "accountItems": b.default_account_items(), "mfaItems": b.default_mfa_items(),
            "userTypes": ["normal-user", "paid-user"], "passwordOptions": ["AtLeast6"]}


def _application(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    organization = actor.organization if actor.user is not None and not actor.is_global_admin else b.BUILT_IN_ORG
    return {
        "displayName": f"New Application - {suffix}", "organization": organization, "cert": b.BUILT_IN_CERT,
        "providers": [{"name": "provider_captcha_default", "canSignUp": False, "canSignIn": False,
                       "canUnlink": False, "prompted": False, "signupGroup": "", "rule": "None"}],
        "signinMethods": [{"name": n, "displayName": n, "rule": r} for n, r in
                          (("Password", "All"), ("Verification code", "All"), ("WebAuthn", "None"),
                           ("Face ID", "None"))],
        "tokenFormat": "JWT", "tokenSigningMethod": "RS256", "expireInHours": 168, "refreshExpireInHours": 168,
        "cookieExpireInHours": b.DEFAULT_COOKIE_EXPIRE_HOURS, "formOffset": 2,
        "grantTypes": ["authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token"],
        "redirectUris": ["http://localhost:9000/callback"], "enableSignUp": True, "enablePassword": True,
        "failedSigninLimit": b.DEFAULT_FAILED_SIGNIN_LIMIT,
        "failedSigninFrozenTime": b.DEFAULT_FAILED_SIGNIN_FROZEN_MINUTES,
    }


def _permission(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    # the adding user when they belong to the organization (a permission names its own users only)
    users = [actor.id] if actor.user is not None and actor.user.owner == owner else [f"{owner}/*"]
    return {"displayName": f"New Permission - {suffix}", "users": users,
            "resourceType": "Application", "resources": [b.BUILT_IN_APP], "actions": ["Read"], "effect": "Allow",
            "isEnabled": True, "submitter": actor.name,
            "state": "Approved" if actor.is_global_admin else "Pending"}


def _subscription(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    start = utcnow()
    return {"displayName": f"New Subscription - {suffix}", "period": "Monthly", "state": "Active",
            "startTime": format_time(start), "endTime": format_time(start + timedelta(days=30))}


def _invitation(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    code = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(10))
    return {"displayName": f"New Invitation - {suffix}", "code": code, "defaultCode": code, "quota": 1,
            "usedCount": 0, "application": "All", "state": "Active"}


def _fixed(**values: Any) -> Callable[..., dict]:
    def build(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
        return {key: (value.format(suffix=suffix) if isinstance(value, str) else value)
                for key, value in values.items()}
    return build


DEFAULTS: dict[str, Callable[..., dict]] = {
    "organization": _organization_defaults,
    "user": _user,
    "group": lambda db, actor, owner, suffix: {"displayName": f"New Group - {suffix}", "type": "Virtual",
                                               "isEnabled": True, "parentId": owner, "isTopGroup": True},
    "invitation": _invitation,
    "ldap": _fixed(serverName="Example LDAP Server", host="example.com", port=389,
                   username="cn=buildin,dc=example,dc=com", baseDn="ou=BuildIn,dc=example,dc=com",
                   filter="(objectClass=posixAccount)", filterFields=["uid"], passwordType="Plain", autoSync=0),
    "application": _application,
    "provider": _fixed(displayName="New Provider - {suffix}", category="OAuth", type="GitHub", method="Normal",
                       enableSignUp=True, port=0),
    "cert": _fixed(displayName="New Cert - {suffix}", scope="JWT", type="x509", cryptoAlgorithm="RS256",
                   bitSize=4096, expireInYears=20),
    "token": _fixed(application=b.BUILT_IN_APP, organization=b.BUILT_IN_ORG, user=b.ADMIN_USER, expiresIn=7200,
                    scope="read", tokenType="Bearer", accessToken=""),
    "role": _fixed(displayName="New Role - {suffix}", users=[], groups=[], roles=[], domains=[], isEnabled=True),
    "permission": _permission,
    "model": _fixed(displayName="New Model - {suffix}", modelText=USER_MODEL_TEXT),
    "adapter": _fixed(displayName="New Adapter - {suffix}", table="table_name", useSameDb=True),
    "enforcer": _fixed(displayName="New Enforcer - {suffix}"),
    "product": _fixed(displayName="New Product - {suffix}", price=300.0, quantity=99, sold=10, currency="USD",
                      state="Published", isRecharge=False),
    "payment": _fixed(displayName="New Payment - {suffix}", type="PayPal", currency="USD", price=300.0,
                      state="Paid"),
    "plan": _fixed(displayName="New Plan - {suffix}", price=10.0, period="Monthly", currency="USD", isEnabled=True),
    "pricing": _fixed(displayName="New Pricing - {suffix}", trialDuration=7, isEnabled=True),
    "subscription": _subscription,
    "transaction": _fixed(displayName="New Transaction - {suffix}", type="PayPal", currency="USD", amount=0.0,
                          state="Paid"),
    "order": _fixed(displayName="New Order - {suffix}", currency="USD", state="Created"),
    "syncer": _fixed(type="Database", databaseType="mysql", port=3306, syncInterval=10, isEnabled=False,
                     isReadOnly=False),
    "webhook": _fixed(url="https://example.com/callback", method="POST", contentType="application/json",
                      events=["signup", "login", "logout", "update-user"], isEnabled=True),
}


def new_record(db: Session, actor: Actor, kind_name: str, owner: str) -> dict[str, Any]:
    """The wire object of a new record of this kind in this organization."""
    kind = REGISTRY[kind_name]
    suffix = random_suffix()
    record = DEFAULTS.get(kind_name, lambda *args: {})(db, actor, owner, suffix)
    record[m.wire_name(kind.model, "name")] = f"{kind.name_prefix or kind.name}_{suffix}"
    if kind.ownership is Ownership.ADMIN:
        record["owner"] = b.ADMIN_OWNER
        if kind_name not in ("organization", "application"):
            record.setdefault(kind.organization_attr, owner)
    else:
        record["owner"] = owner
    return record
