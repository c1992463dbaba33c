"""What individual kinds add to the generic machinery: built-in protections,
validation with the spec's messages, and what saving a record also does.

Keyed by kind name; services/crud.py calls `protect`, `validate` and
`before_save` for every write of every kind."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable

from sqlmodel import Session, select

from .. import models as m
from ..models.base import utcnow
from . import accounts
from . import builtin as b
from .access import Actor
from .certs import ALGORITHMS, RSA_BIT_SIZES
from .errors import ServiceError
from .passwords import TYPES, hash_password, new_salt
from .resources import Kind, Ownership

NAME_PATTERN = re.compile(r"^[^/\s][^/]*$")
SIGNIN_METHODS = ("Password", "Verification code", "WebAuthn", "LDAP", "Face ID")
TOKEN_FORMATS = ("JWT", "JWT-Empty", "JWT-Custom", "JWT-Standard")
SIGNING_METHODS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
GRANT_TYPES = ("authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token",
               "urn:ietf:params:oauth:grant-type:device_code")
PLAN_PRODUCT_TAG = "auto_created_product_for_plan"
PLAN_PRODUCT_LOCKED = ("owner", "name", "tag", "currency", "price", "quantity", "sold", "providers")


# --- protections: what may never be deleted, renamed or changed ---

def _built_in(kind: Kind, row: m.Named) -> bool:
    fixed = {
        "organization": (b.ADMIN_OWNER, b.BUILT_IN_ORG),
        "user": (b.BUILT_IN_ORG, b.ADMIN_USER),
        "application": (b.ADMIN_OWNER, b.BUILT_IN_APP),
        "cert": (b.ADMIN_OWNER, b.BUILT_IN_CERT),
    }
    if kind.name in fixed:
        return (row.owner, row.name) == fixed[kind.name]
    if kind.name in ("model", "adapter", "enforcer"):
        return row.owner == b.BUILT_IN_ORG and row.name.endswith("-built-in")
    return False


def protect(kind: Kind, old: m.Named, new: m.Named | None) -> None:
    """Refuse deleting (new None) or renaming a built-in record, and changing a locked one."""
    if _built_in(kind, old):
        if new is None:
            raise ServiceError("The built-in %s %s cannot be deleted", kind.name, old.name)
        if (new.owner, new.name) != (old.owner, old.name):
            raise ServiceError("The built-in %s %s cannot be renamed", kind.name, old.name)
        if kind.name in ("model", "adapter", "enforcer"):
            raise ServiceError("The built-in %s %s is read-only", kind.name, old.name)
    if kind.name == "product" and old.tag == PLAN_PRODUCT_TAG:
        if new is None:
            raise ServiceError("A product created for a plan cannot be deleted")
        for attribute in PLAN_PRODUCT_LOCKED:
            if getattr(new, attribute) != getattr(old, attribute):
                raise ServiceError("The field %s of a product created for a plan cannot be changed", attribute)


# --- validation ---

def _organization_exists(db: Session, name: str) -> bool:
    if accounts.ORGANIZATION_CACHE in db.info:  # a bulk upload's session
        return accounts.organization(db, name) is not None
    return db.exec(select(m.Organization.pk).where(m.Organization.owner == b.ADMIN_OWNER,
                                                   m.Organization.name == name)).first() is not None


def _validate_identity(db: Session, kind: Kind, row: m.Named) -> None:
    if not row.owner or not row.name:
        raise ServiceError("The owner and name cannot be empty")
    if not NAME_PATTERN.match(row.name):
        raise ServiceError("The name cannot contain '/' or start with a space")
    if kind.ownership is Ownership.ADMIN and row.owner != b.ADMIN_OWNER:
        raise ServiceError("The owner of a %s must be admin", kind.name)
    organization = getattr(row, kind.organization_attr)
    if kind.name == "organization":
        return
    if kind.ownership is Ownership.SHARED and organization == b.ADMIN_OWNER:
        return
    if not _organization_exists(db, organization):
        raise ServiceError("The organization: %s does not exist", organization)


def _range(value: int, low: int, high: int | None, label: str) -> None:
    if value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ServiceError("The %s must be %s", label, bound)


def _user(db: Session, actor: Actor, row: m.User) -> None:
    if row.type and row.type not in ("normal-user", "paid-user"):
        raise ServiceError("The user type must be normal-user or paid-user")
    accounts.check_patterns(db, row)
    if len(row.face_ids or []) > 5:
        raise ServiceError("At most 5 face IDs")
    names = [g.split("/", 1) for g in row.groups if isinstance(g, str) and "/" in g]
    if len(names) > 1:
        physical = db.exec(select(m.Group.pk).where(
            m.Group.type == "Physical",
            m.Group.owner.in_([o for o, _ in names]), m.Group.name.in_([n for _, n in names]))).all()
        if len(physical) > 1:
            raise ServiceError("You can only select one physical group")


def _organization(db: Session, actor: Actor, row: m.Organization) -> None:
    if row.password_type and row.password_type not in TYPES:
        raise ServiceError("Unknown password type: %s", row.password_type)
    if row.password_obfuscator_type not in ("", "Plain", "AES", "DES"):
        raise ServiceError("Unknown password obfuscator type: %s", row.password_obfuscator_type)
    key_length = {"AES": 32, "DES": 16}.get(row.password_obfuscator_type)
    if key_length and not re.fullmatch(f"[0-9a-fA-F]{{{key_length}}}", row.password_obfuscator_key or ""):
        raise ServiceError("The %s obfuscator key must be %d hexadecimal characters", row.password_obfuscator_type,
                           key_length)
    rules = [item for item in row.mfa_items if isinstance(item, dict)]
    names = [item.get("name") for item in rules]
    if len(rules) > 3 or len(set(names)) != len(names) or not set(names) <= {"Phone", "Email", "App"}:
        raise ServiceError("The MFA items can hold each of Phone, Email and App at most once")
    if sum(1 for item in rules if item.get("rule") == "Required") > 1:
        raise ServiceError("Only 1 MFA methods can be required")


def _invitation(db: Session, actor: Actor, row: m.Invitation) -> None:
    _range(row.quota, 0, None, "quota")
    _range(row.used_count, 0, row.quota, "used count")


def _ldap(db: Session, actor: Actor, row: m.Ldap) -> None:
    _range(row.port, 0, 65535, "port")
    _range(row.auto_sync, 0, None, "auto sync interval")
    if row.password_type not in ("", "Plain", "SSHA", "MD5"):
        raise ServiceError("The password type must be Plain, SSHA or MD5")


def _application(db: Session, actor: Actor, row: m.Application) -> None:
    for attribute in ("expire_in_hours", "refresh_expire_in_hours", "failed_signin_limit",
                      "failed_signin_frozen_time", "cookie_expire_in_hours"):
        _range(getattr(row, attribute), 0, None, attribute)
    if row.enable_auto_signin and not row.enable_signin_session:
        raise ServiceError('Please enable "Signin session" first before enabling "Auto signin"')
    if row.token_format and row.token_format not in TOKEN_FORMATS:
        raise ServiceError("Unknown token format: %s", row.token_format)
    if row.token_signing_method and row.token_signing_method not in SIGNING_METHODS:
        raise ServiceError("Unknown token signing method: %s", row.token_signing_method)
    unknown = [g for g in row.grant_types if g not in GRANT_TYPES]
    if unknown:
        raise ServiceError("Unknown grant type: %s", unknown[0])


def _cert(db: Session, actor: Actor, row: m.Cert) -> None:
    if row.crypto_algorithm and row.crypto_algorithm not in ALGORITHMS:
        raise ServiceError("Unknown crypto algorithm: %s", row.crypto_algorithm)
    if row.crypto_algorithm.startswith("ES"):
        row.bit_size = 0
    elif row.crypto_algorithm and row.bit_size not in RSA_BIT_SIZES:
        raise ServiceError("The bit size must be 1024, 2048 or 4096")
    _range(row.expire_in_years, 0, None, "expire in years")


def _permission(db: Session, actor: Actor, row: m.Permission) -> None:
    if not row.users and not row.roles:
        raise ServiceError("The users and roles cannot be empty at the same time")
    if not row.resources:
        raise ServiceError("The resources cannot be empty")
    if not row.actions:
        raise ServiceError("The actions cannot be empty")
    if row.state not in ("", "Approved", "Pending"):
        raise ServiceError("The state must be Approved or Pending")
    if row.effect not in ("", "Allow", "Deny"):
        raise ServiceError("The effect must be Allow or Deny")


def _role(db: Session, actor: Actor, row: m.Role) -> None:
    if f"{row.owner}/{row.name}" in row.roles:
        raise ServiceError("A role cannot contain itself")


def _port_range(db: Session, actor: Actor, row) -> None:
    _range(row.port, 0, 65535, "port")


def _pricing(db: Session, actor: Actor, row: m.Pricing) -> None:
    _range(row.trial_duration, 0, None, "trial duration")


def _syncer(db: Session, actor: Actor, row: m.Syncer) -> None:
    _range(row.port, 0, 65535, "port")
    columns = [c for c in row.table_columns if isinstance(c, dict)]
    if columns and sum(1 for c in columns if c.get("isKey")) != 1:
        raise ServiceError("Exactly one table column must be the key")


EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
PHONE = re.compile(r"^\+?[0-9][0-9 -]{4,19}$")
ID_CARD = re.compile(r"^[0-9A-Za-z]{6,20}$")
TAX_ID = re.compile(r"^[0-9A-Za-z]{8,20}$")


def check_invoice(row: m.Payment) -> None:
    """Part 3 §5, in order: on issuing an invoice, and on saving a payment that asks for one."""
    if row.state != "Paid":
        raise ServiceError("Please pay the order first!")
    if not row.person_name.strip():
        raise ServiceError("Please input your real name!")
    if not ID_CARD.match(row.person_id_card):
        raise ServiceError("Please input the correct ID card number!")
    if not EMAIL.match(row.person_email):
        raise ServiceError("The input is not valid Email!")
    if not PHONE.match(row.person_phone):
        raise ServiceError("The input is not valid Phone!")
    individual = row.invoice_type == "Individual"
    if (row.invoice_title != row.person_name) if individual else not row.invoice_title.strip():
        raise ServiceError("The input is not invoice title!")
    if bool(row.invoice_tax_id) if individual else not TAX_ID.match(row.invoice_tax_id):
        raise ServiceError("The input is not invoice Tax ID!")


def _payment(db: Session, actor: Actor, row: m.Payment) -> None:
    if row.invoice_type:
        check_invoice(row)


def _product(db: Session, actor: Actor, row: m.Product) -> None:
    names = [p for p in row.providers if isinstance(p, str)]
    if names:
        payment = set(db.exec(select(m.Provider.name).where(
            m.Provider.category == "Payment", m.Provider.name.in_(names),
            m.Provider.owner.in_((row.owner, b.ADMIN_OWNER)))).all())
        unknown = [p for p in names if p not in payment]
        if unknown:
            raise ServiceError("The provider %s is not a payment provider", unknown[0])


def _webhook(db: Session, actor: Actor, row: m.Webhook) -> None:
    if row.method and row.method not in ("POST", "GET", "PUT", "DELETE"):
        raise ServiceError("The method must be POST, GET, PUT or DELETE")


VALIDATORS: dict[str, Callable] = {
    "user": _user, "organization": _organization, "invitation": _invitation, "ldap": _ldap,
    "application": _application, "cert": _cert, "permission": _permission, "role": _role,
    "adapter": _port_range, "pricing": _pricing, "syncer": _syncer, "webhook": _webhook,
    "payment": _payment, "product": _product,
}


def validate(db: Session, actor: Actor, kind: Kind, row: m.Named) -> None:
    _validate_identity(db, kind, row)
    check = VALIDATORS.get(kind.name)
    if check:
        check(db, actor, row)


# --- what saving also does ---

def _save_user(db: Session, actor: Actor, old: m.User | None, row: m.User, changed: set[str]) -> None:
    if not row.uuid:
        row.uuid = str(uuid.uuid4())
    if "password" in changed or (old is None and row.password):
        organization = accounts.organization(db, row.owner)
        row.password_type = (organization.password_type if organization else "") or "argon2id"
        row.password_salt = (organization.password_salt if organization else "") or new_salt()
        row.password = hash_password(row.password, row.password_type, row.password_salt)
        row.last_change_password_time = utcnow()
    if "is_deleted" in changed or old is None:
        row.deleted_time = (row.deleted_time or utcnow()) if row.is_deleted else None
    row.updated_time = utcnow()


def _save_application(db: Session, actor: Actor, old, row: m.Application, changed: set[str]) -> None:
    row.client_id = row.client_id or secrets.token_hex(10)
    row.client_secret = row.client_secret or secrets.token_hex(20)
    if not row.grant_types:
        row.grant_types = ["authorization_code"]
    row.signin_methods = [s for s in row.signin_methods if isinstance(s, dict) and s.get("name") in SIGNIN_METHODS]


def _save_organization(db: Session, actor: Actor, old, row: m.Organization, changed: set[str]) -> None:
    row.account_items = [i for i in row.account_items
                         if isinstance(i, dict) and i.get("name") != "Please select an account item"]
    row.password_obfuscator_type = row.password_obfuscator_type or "Plain"
    if not row.enable_dark_logo:
        row.logo_dark = ""


def _save_group(db: Session, actor: Actor, old, row: m.Group, changed: set[str]) -> None:
    row.is_top_group = row.parent_id in ("", row.owner)
    row.updated_time = utcnow()


def _save_permission(db: Session, actor: Actor, old: m.Permission | None, row: m.Permission,
                     changed: set[str]) -> None:
    if not actor.is_global_admin:
        # only a global admin decides the state; a normal user's request starts Pending
        row.state = old.state if old is not None else ("Approved" if actor.is_org_admin else "Pending")
        if old is None and not actor.is_admin:
            row.submitter = actor.name
    if old is None or row.state != old.state:
        if row.state == "Approved":
            row.approver, row.approve_time = actor.name, utcnow()
        else:
            row.approver, row.approve_time = "", None


def _save_timestamped(db: Session, actor: Actor, old, row, changed: set[str]) -> None:
    row.updated_time = utcnow()


BEFORE_SAVE: dict[str, Callable] = {
    "user": _save_user, "application": _save_application, "organization": _save_organization,
    "group": _save_group, "permission": _save_permission, "invitation": _save_timestamped,
    "enforcer": _save_timestamped,
}


def before_save(db: Session, actor: Actor, kind: Kind, old: m.Named | None, row: m.Named, changed: set[str]) -> None:
    hook = BEFORE_SAVE.get(kind.name)
    if hook:
        hook(db, actor, old, row, changed)
