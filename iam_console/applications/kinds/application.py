"""Applications: token settings, grant types, sign-in methods, redirect URIs and limits, and
what goes with an application deleted or renamed (core/leftovers.py)."""

from __future__ import annotations

import re
import secrets

from sqlmodel import Session, or_, select

from iam_console import models as m
from iam_console.applications import certs, redirects
from iam_console.core import builtin as b
from iam_console.core import leftovers, outbound
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, built_in, check_range
from iam_console.oauth.oauth import DEVICE_GRANT, EXCHANGE_GRANT

SIGNIN_METHODS = ("Password", "Verification code", "WebAuthn", "LDAP", "Face ID")
TOKEN_FORMATS = ("JWT", "JWT-Empty", "JWT-Custom", "JWT-Standard")
GRANT_TYPES = ("authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token",
               DEVICE_GRANT, EXCHANGE_GRANT)
# grants Casdoor offers that the token endpoint here does not serve: an application naming them is
# stored as given (Casdoor's data loads), and the grant is answered unsupported_grant_type
# (docs/api.md "Deliberate differences")
UNSERVED_GRANT_TYPES = ("urn:ietf:params:oauth:grant-type:jwt-bearer",)
# the settings counted in hours, times and minutes: at least 1, with the defaults a new application has
AT_LEAST_ONE = {"expire_in_hours": 168, "refresh_expire_in_hours": 168,
                "failed_signin_limit": b.DEFAULT_FAILED_SIGNIN_LIMIT,
                "failed_signin_frozen_time": b.DEFAULT_FAILED_SIGNIN_FROZEN_MINUTES}
LABELS = {"expire_in_hours": "expire in hours", "refresh_expire_in_hours": "refresh expire in hours",
          "failed_signin_limit": "failed signin limit", "failed_signin_frozen_time": "failed signin frozen time"}
# signup items: the rules each item may take (the first is its default), and the item types
SIGNUP_RULES = {"ID": ("Random", "Incremental"), "Display name": ("None", "Real name", "First, last"),
                "Email": ("Normal", "No verification"), "Phone": ("Normal", "No verification"),
                "Agreement": ("None", "Signin", "Signin (Default True)"), "Providers": ("big", "small")}
CHOICE_TYPES = ("Single Choice", "Multiple Choices")
SIGNUP_BUTTON = "Signup button"
AUTO_SIGNIN_NEEDS_SESSION = 'Please enable "Signin session" first before enabling "Auto signin"'
TEXT_ITEM = re.compile(r"Text \d+")  # Text 1 to Text 5: no field, the label is HTML shown on the form
MAX_EXCHANGE_AUDIENCES = 50
VALUELESS_ITEMS = frozenset({"ID", SIGNUP_BUTTON, "Providers"})  # shown (or not), never typed into


def may_share(actor: Actor) -> bool:
    """Sharing an application with every organization is the global admin's decision."""
    return actor.is_global_admin


def validate(db: Session, actor: Actor, row: m.Application) -> None:
    for attribute, label in LABELS.items():
        check_range(getattr(row, attribute), 1, None, label)
    check_range(row.cookie_expire_in_hours, 0, None, "cookie expire in hours")
    if row.enable_auto_signin and not row.enable_signin_session:
        raise ServiceError(AUTO_SIGNIN_NEEDS_SESSION)
    redirects.check_entries(row.redirect_uris)
    audiences = row.token_exchange_audiences
    if len(audiences) > MAX_EXCHANGE_AUDIENCES or any(not isinstance(a, str) or not a or len(a) > 255
                                                      for a in audiences):
        raise ServiceError("Token exchange audiences: at most %d client ids or resource URIs of up to 255 "
                           "characters", MAX_EXCHANGE_AUDIENCES)
    for uri, what in ((row.backchannel_logout_uri, "back-channel logout URI"),
                      (row.frontchannel_logout_uri, "front-channel logout URI")):
        check_logout_uri(uri, what)


def check_logout_uri(uri: str, what: str) -> None:
    """An http(s) URL without a fragment (OpenID Back- and Front-Channel Logout 1.0), whose host the
    outbound guard can judge; whether it may be reached is the guard's decision at each delivery."""
    if not uri:
        return
    outbound.check_url(uri, what)
    if "#" in uri or not redirects.is_plain(uri):
        raise ServiceError("The %s must be an absolute URL without a fragment: %s", what, uri[:200])


def organization_providers(db: Session, organization: str, names: set[str]) -> dict[str, dict[str, str]]:
    """Which of `names` are providers the organization may use (its own, else a shared one), with
    the owner, category and type of each."""
    if not names:
        return {}
    found: dict[str, dict[str, str]] = {}
    for owner, name, category, type_ in db.exec(select(
            m.Provider.owner, m.Provider.name, m.Provider.category, m.Provider.type).where(
            m.Provider.name.in_(sorted(names)), or_(m.Provider.owner == organization,
                                                    m.Provider.owner == b.ADMIN_OWNER))):
        if owner == organization or name not in found:
            found[name] = {"owner": owner, "category": category, "type": type_}
    return found


def before_save(db: Session, actor: Actor, old: m.Application | None, row: m.Application,
                changed: set[str]) -> None:
    row.client_id = row.client_id or secrets.token_hex(10)
    row.client_secret = row.client_secret or secrets.token_hex(20)
    if not row.grant_types:
        row.grant_types = ["authorization_code"]
    # only the five sign-in methods, and only providers of the application's organization
    row.signin_methods = [s for s in row.signin_methods if isinstance(s, dict) and s.get("name") in SIGNIN_METHODS]
    entries = [p for p in row.providers if isinstance(p, dict) and isinstance(p.get("name"), str)]
    usable = organization_providers(db, row.organization, {p["name"] for p in entries})
    # each entry carries its provider's owner, category and type, which the console's list and row rules read
    row.providers = [{**p, "provider": usable[p["name"]]} for p in entries if p["name"] in usable]
    # Google One Tap's rule is Casdoor's "OneTap"; "One Tap" is what the console once stored
    row.providers = [{**p, "rule": "OneTap"} if p.get("rule") == "One Tap" else p for p in row.providers]
    if old is None:  # a new application naming no items (the console's Add, an API client's) gets the defaults
        row.signup_items = row.signup_items or [dict(item) for item in b.DEFAULT_SIGNUP_ITEMS]
        row.signin_items = row.signin_items or [dict(item) for item in b.DEFAULT_SIGNIN_ITEMS]
    row.signup_items = settle_signup_items(row.signup_items)
    row.signin_items = settle_signin_items(row.signin_items)
    # a setting left unset (a new record, or one stored before the rule) takes its default;
    # a change below 1 is refused by validate
    for attribute, default in AT_LEAST_ONE.items():
        if getattr(row, attribute) < 1 and (old is None or attribute not in changed):
            setattr(row, attribute, default)
    if not may_share(actor):
        row.is_shared = old.is_shared if old is not None else False


def after_save(db: Session, actor: Actor, old: m.Application | None, row: m.Application) -> None:
    """A renamed application's tokens, sign-ins and pending states end, as at a delete (nothing
    issued under the old name passes to a new application of that name); the settings naming
    it follow the new name."""
    if old is not None and old.name != row.name:
        leftovers.end_application_access(db, old.name)
        leftovers.release_application(db, old.name, row.name)


def take_along(db: Session, row: m.Application) -> None:
    """A deleted application's tokens, sign-ins and pending states end; the organizations whose
    default it was name none any more (as one that never named one). Providers and other applications
    are untouched."""
    leftovers.end_application_access(db, row.name)
    leftovers.release_application(db, row.name)


def takes_value(name: str) -> bool:
    """Whether a signup item is something the visitor types or picks: the ID, the Signup button,
    the providers and the Text items are not, so they are never required."""
    return name not in VALUELESS_ITEMS and not TEXT_ITEM.fullmatch(name)


def settle_signup_items(items: list) -> list:
    """Each item once; ID always shown and Password always required; a hidden item, and one that
    takes no value (`takes_value`), is optional; a rule the item does not take becomes its first;
    options only for the choice types; the Signup button stays (put back last when a list of items
    lost it)."""
    settled, seen = [], set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or item["name"] in seen:
            continue
        seen.add(item["name"])
        item = dict(item)
        name = item["name"]
        if name == "ID":
            item["visible"] = True
        if not item.get("visible", True) or not takes_value(name):
            item["required"] = False
        elif name == "Password":
            item["required"] = True
        rules = SIGNUP_RULES.get(name)
        if rules is not None and item.get("rule") not in rules:
            item["rule"] = rules[0]
        if item.get("type") not in CHOICE_TYPES:
            item["options"] = []
        settled.append(item)
    if settled and SIGNUP_BUTTON not in seen:
        settled.append({"name": SIGNUP_BUTTON, "visible": True, "required": False, "prompted": False,
                        "type": "", "label": "", "customCss": "", "placeholder": "", "options": [],
                        "regex": "", "rule": "None"})
    return settled


def settle_signin_items(items: list) -> list:
    """A hidden sign-in item is optional."""
    return [{**i, "required": False} if not i.get("visible", True) else i for i in items if isinstance(i, dict)]


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    """A new application of the organization the list shows (the global admin's choice), else of
    the caller's own."""
    if actor.user is not None and not actor.is_global_admin:
        organization = actor.organization
    else:
        organization = owner if owner and owner != b.ADMIN_OWNER else b.BUILT_IN_ORG
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
             Choice("grant_types", GRANT_TYPES, message="Unknown grant type: %s", also=UNSERVED_GRANT_TYPES)),
    validate=validate, before_save=before_save, protect=built_in(b.ADMIN_OWNER, b.BUILT_IN_APP), new=new,
    after_save=after_save, take_along=take_along,
)
