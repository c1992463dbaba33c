"""Which fields of a user each viewer may change: the organization's account
items (spec part 1 §5 'Field locks')."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from ..models import Organization, User
from ..models.base import wire_names
from . import builtin as b
from .access import Actor
from .errors import ServiceError
from .policy import read_scope
from .resources import REGISTRY

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


# A session whose info holds a dict under this key remembers the organizations it
# read: bulk uploads ask once per organization, not once per row (services/uploads.py).
ORGANIZATION_CACHE = "organizations"


def organization(db: Session, name: str) -> Organization | None:
    cache = db.info.get(ORGANIZATION_CACHE)
    if cache is not None and name in cache:
        return cache[name]
    found = db.exec(select(Organization).where(Organization.owner == b.ADMIN_OWNER,
                                               Organization.name == name)).first()
    if cache is not None and found is not None:
        cache[name] = found
    return found


def organization_names(db: Session, actor: Actor, limit: int = 10_000) -> list[tuple[str, str]]:
    """(name, display name) of the organizations the actor may see, by name."""
    scope = read_scope(actor, REGISTRY["organization"])
    return list(db.exec(select(Organization.name, Organization.display_name).where(*scope)
                        .order_by(Organization.name).limit(limit)).all())


def locked_attributes(actor: Actor, org: Organization | None, target: User) -> frozenset[str]:
    """The user attributes this actor may not change on this user."""
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
    every = set(wire_names(User)) | {"third_party_ids"}
    return frozenset(every - (allowed - ADMIN_ONLY)) | frozenset(locked)


# The items whose regex column applies (spec part 1 §3, 'Account item'), and what they govern.
PATTERN_ITEMS = ("Display name", "Password", "Email", "Phone", "Location", "Title", "Homepage", "Bio",
                 "Gender", "Birthday", "Education", "ID card", "ID card type")


def item_patterns(org: Organization | None) -> dict[str, str]:
    """{account item: regex} for the items whose regex the organization set."""
    return {item["name"]: item["regex"] for item in (org.account_items if org else [])
            if isinstance(item, dict) and item.get("regex") and item.get("name") in PATTERN_ITEMS}


def check_pattern(pattern: str, value: str, item: str) -> None:
    try:
        matched = re.fullmatch(pattern, value) is not None
    except re.error:
        raise ServiceError("The pattern of the account item %s is not a valid regex", item) from None
    if value and not matched:
        raise ServiceError("This field value doesn't match the pattern rule")


def check_patterns(db: Session, user: User) -> None:
    """Each value must match its account item's regex, where the organization set one.
    (A password is hashed by now: set-password checks it before hashing.)"""
    for item, pattern in item_patterns(organization(db, user.owner)).items():
        for attribute in ITEM_ATTRIBUTES.get(item, ()) if item != "Password" else ():
            check_pattern(pattern, str(getattr(user, attribute) or ""), item)
