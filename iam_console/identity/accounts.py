"""Which fields of a user each viewer may change: the organization's account
items, which lock fields and hide them."""

from __future__ import annotations

from sqlmodel import Session, select

from iam_console.core import builtin as b
from iam_console.core import lookup, patterns
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.policy import read_scope
from iam_console.core.resources import REGISTRY
from iam_console.models import Organization, User
from iam_console.models.base import wire_names

# account item -> the user attributes it governs
ITEM_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "Organization": ("owner",), "ID": ("uuid",), "Name": ("name",), "Display name": ("display_name",),
    "Avatar": ("avatar",), "User type": ("type",), "Email": ("email",), "Phone": ("phone",),
    "Country code": ("country_code",), "Country/Region": ("region",), "Location": ("location",),
    "Address": ("address",), "Affiliation": ("affiliation",), "Title": ("title",),
    "ID card type": ("id_card_type",), "ID card": ("id_card",), "Homepage": ("homepage",), "Bio": ("bio",),
    "Tag": ("tag",), "Language": ("language",), "Gender": ("gender",), "Birthday": ("birthday",),
    "Education": ("education",), "Balance": ("balance",), "Score": ("score",), "Karma": ("karma",),
    "Ranking": ("ranking",), "Signup application": ("signup_application",), "API key": ("access_key", "access_secret"),
    "Groups": ("groups",), "Properties": ("properties",), "Is online": ("is_online",), "Is admin": ("is_admin",),
    "Is forbidden": ("is_forbidden",), "Is deleted": ("is_deleted", "deleted_time"),
    "Need update password": ("need_update_password",), "IP whitelist": ("ip_whitelist",),
    "Managed accounts": ("managed_accounts",), "Face ID": ("face_ids",), "MFA accounts": ("mfa_accounts",),
    "3rd-party logins": ("third_party_ids",),
}
GOVERNED = frozenset(attr for attrs in ITEM_ATTRIBUTES.values() for attr in attrs)
# Only admins type these in; users change them through the reset dialogs (codes).
ADMIN_ONLY = frozenset({"email", "phone"})
# What a checked verification code also lets the user set with the address it proves.
PROVEN_WITH = {"email": frozenset({"email_verified"})}
ID_CARD = frozenset({"id_card_type", "id_card"})
# What no update-user call changes, whoever calls: set-password, MFA and sign-in
# bookkeeping have their own routes.
SERVER_MANAGED = frozenset({
    "created_time", "password_salt", "password_type", "hash", "pre_hash", "totp_secret", "recovery_codes",
    "multi_factor_auths", "webauthn_credentials", "preferred_mfa_type", "mfa_phone_enabled", "mfa_email_enabled",
    "signin_wrong_times", "last_signin_wrong_time", "last_signin_time", "last_signin_ip", "last_change_password_time",
    "created_ip", "register_type", "register_source", "ldap", "uid_number", "access_token", "original_token",
    "original_refresh_token",
})


def organization_names(db: Session, actor: Actor, limit: int = 10_000) -> list[tuple[str, str]]:
    """(name, display name) of the organizations the actor may see, by name."""
    scope = read_scope(actor, REGISTRY["organization"])
    return list(db.exec(select(Organization.name, Organization.display_name).where(*scope)
                        .order_by(Organization.name).limit(limit)).all())


def locked_attributes(actor: Actor, org: Organization | None, target: User,
                      proven: frozenset[str] = frozenset()) -> frozenset[str]:
    """The user attributes this actor may not change on this user. `proven`: the ADMIN_ONLY
    attributes whose new value a verification code has just proven (reset-email-or-phone):
    the user may then set them where the organization's item is theirs to modify."""
    configured = org.account_items if org and org.account_items else b.default_account_items()
    items = {item.get("name"): item for item in configured if isinstance(item, dict)}
    immutable = {attr for name, item in items.items() if item.get("modifyRule") == "Immutable"
                 for attr in ITEM_ATTRIBUTES.get(name, ())}
    locked = set(SERVER_MANAGED) | immutable | {"uuid"}
    if target.owner == b.BUILT_IN_ORG and target.name == b.ADMIN_USER:
        locked |= {"owner", "name", "is_admin", "is_forbidden", "is_deleted"}
    if (target.properties or {}).get("isIdCardVerified") == "true":
        locked |= ID_CARD
    if actor.is_admin:
        if not actor.is_global_admin:
            locked.add("owner")
        return frozenset(locked)
    # editing oneself: only the items the organization opens to the user ('Self')
    allowed = {attr for name, item in items.items()
               if item.get("modifyRule") == "Self" and item.get("visible", True) is not False
               for attr in ITEM_ATTRIBUTES.get(name, ())}
    allowed -= ADMIN_ONLY - proven
    allowed |= {extra for attr in proven & allowed for extra in PROVEN_WITH.get(attr, ())}
    every = set(wire_names(User)) | {"third_party_ids"}
    return frozenset(every - allowed) | frozenset(locked)


def hidden_items(actor: Actor, org: Organization | None, target: User) -> frozenset[str]:
    """The account items this viewer does not see : an item
    marked invisible, Admin items for non-admins, Self items for anyone but the user and admins."""
    configured = org.account_items if org and org.account_items else b.default_account_items()
    is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (target.owner, target.name)
    hidden: set[str] = set()
    for item in configured:
        if not isinstance(item, dict):
            continue
        rule = item.get("viewRule", "Public")
        if item.get("visible", True) is False or (rule == "Admin" and not actor.is_admin) or (
                rule == "Self" and not (is_self or actor.is_admin)):
            hidden.add(item.get("name"))
    return frozenset(hidden)


def hidden_attributes(actor: Actor, org: Organization | None, target: User) -> frozenset[str]:
    """The user attributes of the items this viewer does not see."""
    return frozenset(attr for name in hidden_items(actor, org, target) for attr in ITEM_ATTRIBUTES.get(name, ()))


# The items whose regex column applies: the value typed for them must match it.
PATTERN_ITEMS = ("Display name", "Password", "Email", "Phone", "Location", "Title", "Homepage", "Bio",
                 "Gender", "Birthday", "Education", "ID card", "ID card type")


def item_patterns(org: Organization | None) -> dict[str, str]:
    """{account item: regex} for the items whose regex the organization set."""
    return {item["name"]: item["regex"] for item in (org.account_items if org else [])
            if isinstance(item, dict) and item.get("regex") and item.get("name") in PATTERN_ITEMS}


PATTERN_MISMATCH = "This field value doesn't match the pattern rule"


def check_pattern(pattern: str, value: str, item: str) -> None:
    """The value matches the item's regex (RE2: core/patterns.py; an organization's admin
    writes the pattern, any user's input is matched against it)."""
    try:
        matched = patterns.fullmatch(pattern, value)
    except patterns.PatternError:
        raise ServiceError("The pattern of the account item %s is not a valid regex", item) from None
    if value and not matched:
        raise ServiceError(PATTERN_MISMATCH)


def check_patterns(db: Session, user: User) -> None:
    """Each value must match its account item's regex, where the organization set one.
    (A password is hashed by now: set-password checks it before hashing.)"""
    for item, pattern in item_patterns(lookup.organization(db, user.owner)).items():
        for attribute in ITEM_ATTRIBUTES.get(item, ()) if item != "Password" else ():
            check_pattern(pattern, str(getattr(user, attribute) or ""), item)


def modify_rules(item: str, view_rule: str) -> tuple[str, ...]:
    """The modify rules an account item may take :
    an item only admins see, and Is admin, cannot be left to the user."""
    if view_rule == "Admin" or item == "Is admin":
        return ("Admin", "Immutable")
    return b.MODIFY_RULES


def check_items(items: list) -> None:
    """An organization's account items: each item once, known rules, the modify rule
    its view rule allows, and a valid regex on the items that take one."""
    seen: set[str] = set()
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise ServiceError("Each account item must be an object with a name")
        name = item["name"]
        if name in seen:
            raise ServiceError("The account item %s appears more than once", name)
        seen.add(name)
        if not isinstance(item.get("visible", True), bool):
            raise ServiceError("The field %s must be true or false", "visible")
        view, modify, regex = item.get("viewRule") or "", item.get("modifyRule") or "", item.get("regex") or ""
        if view not in ("", *b.VIEW_RULES):
            raise ServiceError("The view rule of the account item %s must be Public, Self or Admin", name)
        if modify not in ("", *b.MODIFY_RULES):
            raise ServiceError("The modify rule of the account item %s must be Self, Admin or Immutable", name)
        if modify and modify not in modify_rules(name, view):
            raise ServiceError("The modify rule of the account item %s must be Admin or Immutable", name)
        if not isinstance(regex, str):
            raise ServiceError("The regex of the account item %s must be a string", name)
        if regex and name not in PATTERN_ITEMS:
            raise ServiceError("The account item %s takes no regex", name)
        if regex:
            try:
                patterns.compiled(regex)
            except patterns.PatternError as exc:
                raise ServiceError("The regex of the account item %s is not valid: %s", name, str(exc)) from None
