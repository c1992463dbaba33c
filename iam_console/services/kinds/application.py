"""Applications: token settings, grant types, sign-in methods, redirect URIs and limits."""

from __future__ import annotations

import secrets

from sqlmodel import Session

from ... import models as m
from .. import builtin as b
from .. import certs, redirects
from ..access import Actor
from ..errors import ServiceError
from ..oauth import DEVICE_GRANT
from .common import Choice, KindRules, built_in, check_range

SIGNIN_METHODS = ("Password", "Verification code", "WebAuthn", "LDAP", "Face ID")
TOKEN_FORMATS = ("JWT", "JWT-Empty", "JWT-Custom", "JWT-Standard")
GRANT_TYPES = ("authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token",
               DEVICE_GRANT)
LIMITS = ("expire_in_hours", "refresh_expire_in_hours", "failed_signin_limit", "failed_signin_frozen_time",
          "cookie_expire_in_hours")  # none below 0


def validate(db: Session, actor: Actor, row: m.Application) -> None:
    for attribute in LIMITS:
        check_range(getattr(row, attribute), 0, None, attribute)
    if row.enable_auto_signin and not row.enable_signin_session:
        raise ServiceError('Please enable "Signin session" first before enabling "Auto signin"')
    redirects.check_entries(row.redirect_uris)


def before_save(db: Session, actor: Actor, old: m.Application | None, row: m.Application,
                changed: set[str]) -> None:
    row.client_id = row.client_id or secrets.token_hex(10)
    row.client_secret = row.client_secret or secrets.token_hex(20)
    if not row.grant_types:
        row.grant_types = ["authorization_code"]
    row.signin_methods = [s for s in row.signin_methods if isinstance(s, dict) and s.get("name") in SIGNIN_METHODS]


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
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


RULES = KindRules(
    choices=(Choice("token_format", TOKEN_FORMATS, message="Unknown token format: %s"),
             Choice("token_signing_method", certs.ALGORITHMS, message="Unknown token signing method: %s"),
             Choice("grant_types", GRANT_TYPES, message="Unknown grant type: %s")),
    validate=validate, before_save=before_save, protect=built_in(b.ADMIN_OWNER, b.BUILT_IN_APP), new=new,
)
