"""Organizations: password hashing and obfuscation, account and MFA items, theme, navigation,
and what becomes of everything an organization holds when it is deleted or renamed."""

from __future__ import annotations

import re
import secrets
from urllib.parse import urlsplit

import phonenumbers
import sqlalchemy as sa
from sqlmodel import Session, delete, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import lookup, storage
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, built_in
from iam_console.core.resources import REGISTRY
from iam_console.identity import accounts
from iam_console.identity.kinds.user import TYPES as USER_TYPES
from iam_console.identity.passwords import TYPES as PASSWORD_TYPES

OBFUSCATOR_TYPES = ("Plain", "AES", "DES")
# dynamic client registration (oauth/registration.py): off, with an initial access token, or open
DCR_DISABLED, DCR_INITIAL_ACCESS_TOKEN, DCR_OPEN = "disabled", "initial access token", "open"
DCR_POLICIES = (DCR_DISABLED, DCR_INITIAL_ACCESS_TOKEN, DCR_OPEN)
MAX_PROTECTED_RESOURCES, MAX_RESOURCE_URI = 50, 255
# What the console offers for an organization's languages and phone country codes: Casdoor's
# languages, and the regions phone numbers are parsed for (ISO 3166 alpha-2). Offered, not
# enforced: a write keeps the values it brings, as Casdoor's does.
LANGUAGE_CHOICES = ("en", "zh", "es", "fr", "de", "id", "ja", "ko", "ru", "vi", "pt", "it", "ms", "tr", "ar", "he",
                    "nl", "pl", "fi", "sv", "uk", "kk", "fa", "cs", "sk", "az")
COUNTRY_CODE_CHOICES = tuple(sorted(phonenumbers.SUPPORTED_REGIONS))
# An obfuscator key is hex: AES takes a 16, 24 or 32-byte key, DES an 8-byte one; a new key is
# AES-128's or DES's size.
OBFUSCATOR_KEY_LENGTHS = {"AES": (32, 48, 64), "DES": (16,)}
NEW_OBFUSCATOR_KEY_BYTES = {"AES": 16, "DES": 8}
HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")


def obfuscator_key(kind: str) -> str:
    """The key a newly chosen obfuscator type starts with: a fresh random one; none for Plain."""
    size = NEW_OBFUSCATOR_KEY_BYTES.get(kind)
    return secrets.token_hex(size) if size else ""


def check_obfuscator(kind: str, key: str) -> None:
    """The obfuscator key fits its type (the type itself is one of OBFUSCATOR_TYPES: a choice)."""
    lengths = OBFUSCATOR_KEY_LENGTHS.get(kind)
    if lengths and (len(key or "") not in lengths or not re.fullmatch(r"[0-9a-fA-F]*", key or "")):
        *first, last = (str(n) for n in lengths)
        raise ServiceError("The %s obfuscator key must be %s hexadecimal characters", kind,
                           f"{', '.join(first)} or {last}" if first else last)


def is_color(text: str) -> bool:
    """A primary color the theme accepts: #rgb or #rrggbb."""
    return HEX_COLOR.fullmatch(text or "") is not None


def mfa_items_problem(items: list) -> str:
    """What is wrong with these MFA items (a catalog message), or "": the editor refuses such a change."""
    try:
        _mfa_items(items)
    except ServiceError as exc:
        return exc.template
    return ""


def _mfa_items(items: list) -> None:
    rules = [item for item in items if isinstance(item, dict)]
    names = [item.get("name") for item in rules]
    if len(rules) != len(items) or len(rules) > len(b.MFA_METHODS) or len(set(names)) != len(names) \
            or not set(names) <= set(b.MFA_METHODS):
        raise ServiceError("The MFA items can hold each of Phone, Email and App at most once")
    if any(item.get("rule", "") not in ("", *b.MFA_RULES) for item in rules):
        raise ServiceError("The MFA rule must be Optional, Prompt or Required")
    if sum(1 for item in rules if item.get("rule") == "Required") > 1:
        raise ServiceError("Only 1 MFA methods can be required")


def _theme(theme: dict) -> None:
    """themeData: every key optional (Casdoor's SDKs send empty values)."""
    for flag in ("isEnabled", "isCompact"):
        if not isinstance(theme.get(flag, False), bool):
            raise ServiceError("The field %s must be true or false", f"themeData.{flag}")
    if theme.get("themeType", "") not in ("", *b.THEME_TYPES):
        raise ServiceError("The theme type must be default, dark, lark or comic")
    color = theme.get("colorPrimary", "")
    if color and not (isinstance(color, str) and is_color(color)):
        raise ServiceError("The primary color must be a hexadecimal color such as #5734d3")
    radius = theme.get("borderRadius", 0)
    if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= b.THEME_RADIUS_MAX:
        raise ServiceError("The border radius must be an integer between 0 and %d", b.THEME_RADIUS_MAX)


def validate(db: Session, actor: Actor, row: m.Organization) -> None:
    check_obfuscator(row.password_obfuscator_type, row.password_obfuscator_key)
    accounts.check_items(row.account_items)
    _mfa_items(row.mfa_items)
    _theme(row.theme_data or {})
    if any(not isinstance(item, str) for item in row.nav_items):
        raise ServiceError("The navigation items must be a list of strings")
    _protected_resources(row.protected_resources)
    _declared_once(db, row)


def _declared_once(db: Session, row: m.Organization) -> None:
    """A resource is one organization's: its metadata document names that organization, and the
    clients it sends are that organization's (oauth/resources.py, oauth/metadata_documents.py)."""
    if not row.protected_resources:
        return
    # the JSON lists compared as text: not every database compares JSON
    others = db.exec(select(m.Organization.name, m.Organization.protected_resources).where(
        m.Organization.name != row.name, sa.cast(m.Organization.protected_resources, sa.Text) != "[]")).all()
    for _, declared in others:
        taken = set(row.protected_resources) & set(declared)
        if taken:
            raise ServiceError("The protected resource %s is another organization's", sorted(taken)[0][:100])


def _protected_resources(values: list) -> None:
    """The resource URIs an organization declares (RFC 8707, RFC 9728: oauth/resources.py)."""
    if len(values) > MAX_PROTECTED_RESOURCES:
        raise ServiceError("An organization declares at most %d protected resources", MAX_PROTECTED_RESOURCES)
    for value in values:
        parts = urlsplit(value) if isinstance(value, str) and len(value) <= MAX_RESOURCE_URI else None
        if parts is None or parts.scheme not in ("https", "http") or not parts.netloc or "#" in value:
            raise ServiceError("The protected resource %s is not an http(s) URI without a fragment", str(value)[:100])


# the audit trail outlives what it tells of
KEPT = frozenset({"organization", "record"})
# what is not an API kind but holds an organization's users' state: sign-ins, pending
# second steps and MFA setups
USER_STATE = (m.AuthSession, m.PendingSignIn, m.MfaSetup)


def _held(name: str) -> list[tuple[type, list]]:
    """(table, WHERE clauses) of everything the organization `name` holds: the records of
    every kind whose organization it is (its own shared providers and certs included), its
    users' state and the policy lines of its adapters."""
    held = []
    for kind in REGISTRY.values():
        if kind.name not in KEPT:
            held.append((kind.model, [getattr(kind.model, kind.organization_attr) == name]))
    held += [(model, [model.owner == name]) for model in USER_STATE]
    held.append((m.CasbinRule, [m.CasbinRule.adapter.startswith(f"{name}/", autoescape=True)]))
    return held


def holds_records(db: Session, name: str) -> bool:
    return any(db.exec(select(model).where(*where).limit(1)).first() is not None for model, where in _held(name))


def take_along(db: Session, row: m.Organization) -> None:
    """Deleting an organization deletes everything it holds, so that nothing is left that
    no one can reach, and a new organization of the same name starts empty; the files
    stored for it (avatars) go once the deletion is committed. Its audit records stay."""
    for model, where in _held(row.name):
        db.exec(delete(model).where(*where))
    lookup.forget()
    for stored in storage.folders():
        storage.remove_after_commit(db, f"{stored}/{row.name}")


def before_save(db: Session, actor: Actor, old: m.Organization | None, row: m.Organization,
                changed: set[str]) -> None:
    if old is not None and old.name != row.name and holds_records(db, old.name):
        # its records name it as their owner: renamed, they would belong to nobody
        raise ServiceError("The organization %s still holds records: only an empty organization can be renamed",
                           old.name)
    if old is not None and "nav_items" in changed and not actor.is_global_admin:
        raise ServiceError("Only a global admin may change the navigation items")
    row.account_items = [i for i in row.account_items
                         if not (isinstance(i, dict) and i.get("name") == b.ACCOUNT_ITEM_PLACEHOLDER)]
    row.password_obfuscator_type = row.password_obfuscator_type or "Plain"
    if row.password_obfuscator_type == "Plain":
        row.password_obfuscator_key = ""
    if not row.enable_dark_logo:
        row.logo_dark = ""


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    # argon2id, not Casdoor's plain text: a new organization's passwords are hashed
    return {"displayName": f"New Organization - {suffix}", "passwordType": "argon2id",
            "passwordObfuscatorType": "Plain", "passwordExpireDays": 0, "countryCodes": ["US"],
            "languages": list(b.LANGUAGES), "enableSoftDeletion": False, "isProfilePublic": True, "enableTour": True,
            "navItems": ["all"], "accountItems": b.default_account_items(), "mfaItems": b.default_mfa_items(),
            "userTypes": list(USER_TYPES), "passwordOptions": ["AtLeast6"]}


RULES = KindRules(
    choices=(Choice("password_type", PASSWORD_TYPES, message="Unknown password type: %s"),
             Choice("password_obfuscator_type", OBFUSCATOR_TYPES, message="Unknown password obfuscator type: %s"),
             Choice("dcr_policy", DCR_POLICIES, message="Unknown dynamic client registration policy: %s")),
    validate=validate, before_save=before_save, protect=built_in(b.ADMIN_OWNER, b.BUILT_IN_ORG), new=new,
    take_along=take_along,
)
