"""What individual kinds add to the generic machinery: built-in protections,
validation with the spec's messages, and what saving a record also does.

Keyed by kind name; services/crud.py calls `protect`, `validate` and
`before_save` for every write of every kind."""

from __future__ import annotations

import re
import secrets
import uuid
from collections.abc import Callable

import sqlalchemy as sa
from sqlmodel import Session, select

from .. import models as m
from ..models.base import to_wire, utcnow
from . import accounts, auth, certs, groups, ldap_client, lookup, mfa_props, redirects, references, wire
from . import builtin as b
from .access import Actor
from .errors import ServiceError
from .passwords import TYPES, hash_secret
from .resources import Kind, Ownership

NAME_PATTERN = re.compile(r"^[^/\s][^/]*$")
NAME_RULE = "The name cannot contain '/' or control characters, or start with a space"
SIGNIN_METHODS = ("Password", "Verification code", "WebAuthn", "LDAP", "Face ID")
TOKEN_FORMATS = ("JWT", "JWT-Empty", "JWT-Custom", "JWT-Standard")
SIGNING_METHODS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
GRANT_TYPES = ("authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token",
               "urn:ietf:params:oauth:grant-type:device_code")
PLAN_PRODUCT_TAG = "auto_created_product_for_plan"
PLAN_PRODUCT_LOCKED = ("owner", "name", "tag", "currency", "price", "quantity", "sold", "providers")
PLAN_INVITATION_TAG = "auto_created_invitation_for_plan"
INVITATION_STATES = ("Active", "Suspended")
LDAP_PASSWORD_TYPES = ("Plain", "SSHA", "MD5")
LDAP_FILTER_FIELDS = tuple(ldap_client.FILTER_FIELDS)


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
    if (kind.name == "invitation" and old.tag == PLAN_INVITATION_TAG and new is not None
            and (new.owner, new.name) != (old.owner, old.name)):
        raise ServiceError("The organization and name of an invitation created for a plan cannot be changed")
    if kind.name == "token" and new is not None and issued(old):
        _check_issued_token_change(old, new)


def issued(token: m.Token) -> bool:
    """A token the OAuth endpoints issued (or a code they handed out), as opposed to a record
    added through add-token, which never holds a usable token."""
    return bool(token.access_token_hash or token.code)


def _check_issued_token_change(old: m.Token, new: m.Token) -> None:
    """An issued token is viewed, revoked or deleted: nothing re-points it (user, application,
    organization, grant, scope...), and its lifetime only shortens (0 revokes it), so that
    no revoked or expired token lives again."""
    before, after = to_wire(old), to_wire(new)
    changed = sorted(key for key in after if key != "expiresIn" and after[key] != before[key])
    if changed:
        raise ServiceError("The field %s of an issued token cannot be changed: revoke or delete the token instead",
                           changed[0])
    if new.expires_in > old.expires_in:
        raise ServiceError("The expiresIn of an issued token can only be lowered (0 revokes it)")


def check_delete(db: Session, kind: Kind, row: m.Named) -> None:
    """What a delete needs beyond `protect`, reading the database."""
    if kind.name == "group" and groups.has_children(db, row.owner, row.name):
        raise ServiceError("The group %s has child groups: delete or move them first", row.name)


# --- validation ---

def _organization_exists(db: Session, name: str) -> bool:
    if lookup.ORGANIZATION_CACHE in db.info:  # a bulk upload's session
        return lookup.organization(db, name) is not None
    return db.exec(select(m.Organization.pk).where(m.Organization.owner == b.ADMIN_OWNER,
                                                   m.Organization.name == name)).first() is not None


def _validate_identity(db: Session, kind: Kind, row: m.Named) -> None:
    if not row.owner or not row.name:
        raise ServiceError("The owner and name cannot be empty")
    if not NAME_PATTERN.match(row.name) or wire.CONTROL_CHARACTERS.search(row.name):
        raise ServiceError(NAME_RULE)
    if wire.CONTROL_CHARACTERS.search(row.owner):
        raise ServiceError("The owner cannot contain control characters")
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
    check_one_physical_group(db, row.groups)


def named(model: type[m.Named], pairs: list[tuple[str, str]]) -> sa.ColumnElement[bool]:
    """The rows of these (owner, name) pairs."""
    return sa.or_(*(sa.and_(model.owner == owner, model.name == name) for owner, name in pairs))


def check_one_physical_group(db: Session, groups: list) -> None:
    """A user's groups (owner/name entries) hold one Physical group at most (spec part 1 §5)."""
    pairs = list(dict.fromkeys(tuple(g.split("/", 1)) for g in groups if isinstance(g, str) and g.count("/") == 1))
    if len(pairs) > 1:
        physical = db.exec(select(m.Group.pk).where(m.Group.type == "Physical", named(m.Group, pairs))).all()
        if len(physical) > 1:
            raise ServiceError("You can only select one physical group")


# An obfuscator key is hex: AES takes a 16, 24 or 32-byte key, DES an 8-byte one.
OBFUSCATOR_KEY_LENGTHS = {"AES": (32, 48, 64), "DES": (16,)}
HEX_COLOR = re.compile(r"#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})")


def check_obfuscator(kind: str, key: str) -> None:
    """Spec part 1 §5: the obfuscator type and key are checked before an organization is saved."""
    if kind not in ("", *b.OBFUSCATOR_TYPES):
        raise ServiceError("Unknown password obfuscator type: %s", kind)
    lengths = OBFUSCATOR_KEY_LENGTHS.get(kind)
    if lengths and (len(key or "") not in lengths or not re.fullmatch(r"[0-9a-fA-F]*", key or "")):
        *first, last = (str(n) for n in lengths)
        raise ServiceError("The %s obfuscator key must be %s hexadecimal characters", kind,
                           f"{', '.join(first)} or {last}" if first else last)


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
    if color and not (isinstance(color, str) and HEX_COLOR.fullmatch(color)):
        raise ServiceError("The primary color must be a hexadecimal color such as #5734d3")
    radius = theme.get("borderRadius", 0)
    if isinstance(radius, bool) or not isinstance(radius, int) or not 0 <= radius <= b.THEME_RADIUS_MAX:
        raise ServiceError("The border radius must be an integer between 0 and %d", b.THEME_RADIUS_MAX)


def _organization(db: Session, actor: Actor, row: m.Organization) -> None:
    if row.password_type and row.password_type not in TYPES:
        raise ServiceError("Unknown password type: %s", row.password_type)
    check_obfuscator(row.password_obfuscator_type, row.password_obfuscator_key)
    accounts.check_items(row.account_items)
    _mfa_items(row.mfa_items)
    _theme(row.theme_data or {})
    if any(not isinstance(item, str) for item in row.nav_items):
        raise ServiceError("The navigation items must be a list of strings")


def _invitation(db: Session, actor: Actor, row: m.Invitation) -> None:
    _range(row.quota, 0, None, "quota")
    _range(row.used_count, 0, row.quota, "used count")
    if row.state and row.state not in INVITATION_STATES:
        raise ServiceError("The state must be Active or Suspended")


def _group(db: Session, actor: Actor, row: m.Group) -> None:
    if row.type and row.type not in groups.TYPES:
        raise ServiceError("The group type must be Virtual or Physical")
    if row.parent_id == row.name and row.name != row.owner:
        raise ServiceError("A group cannot be placed under itself or one of its child groups")


def _ldap(db: Session, actor: Actor, row: m.Ldap) -> None:
    _range(row.port, 0, 65535, "port")
    _range(row.auto_sync, 0, None, "auto sync interval")
    if row.password_type not in ("", *LDAP_PASSWORD_TYPES):
        raise ServiceError("The password type must be Plain, SSHA or MD5")
    unknown = [f for f in row.filter_fields if f not in LDAP_FILTER_FIELDS]
    if unknown:
        raise ServiceError("Unknown filter field: %s (uid, mail, mobile or sAMAccountName)", str(unknown[0])[:100])


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
    redirects.check_entries(row.redirect_uris)


def _cert(db: Session, actor: Actor, row: m.Cert) -> None:
    if row.crypto_algorithm:
        certs.check_settings(row.crypto_algorithm, row.bit_size)
    if row.crypto_algorithm.startswith("ES"):
        row.bit_size = 0
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
    """Its providers are payment providers (that they are the organization's or shared: references)."""
    names = [p for p in row.providers if isinstance(p, str)]
    if names:
        other = db.exec(select(m.Provider.name).where(
            m.Provider.category != "Payment", m.Provider.name.in_(names),
            m.Provider.owner.in_((row.owner, b.ADMIN_OWNER)))).first()
        if other is not None:
            raise ServiceError("The provider %s is not a payment provider", other)


def _webhook(db: Session, actor: Actor, row: m.Webhook) -> None:
    if row.method and row.method not in ("POST", "GET", "PUT", "DELETE"):
        raise ServiceError("The method must be POST, GET, PUT or DELETE")


VALIDATORS: dict[str, Callable] = {
    "user": _user, "organization": _organization, "invitation": _invitation, "group": _group, "ldap": _ldap,
    "application": _application, "cert": _cert, "permission": _permission, "role": _role,
    "adapter": _port_range, "pricing": _pricing, "syncer": _syncer, "webhook": _webhook,
    "payment": _payment, "product": _product,
}


def validate(db: Session, actor: Actor, kind: Kind, row: m.Named) -> None:
    _validate_identity(db, kind, row)
    check = VALIDATORS.get(kind.name)
    if check:
        check(db, actor, row)
    references.check(db, kind, row)


# --- what saving also does ---

def _save_user(db: Session, actor: Actor, old: m.User | None, row: m.User, changed: set[str]) -> None:
    if not row.uuid:
        row.uuid = str(uuid.uuid4())
    if "password" in changed or (old is None and row.password):
        auth.change_password(db, row, lookup.organization(db, row.owner), row.password, signed_in_as=old,
                             keep_session=actor.session_id)
    if "access_secret" in changed:
        row.access_secret = hash_secret(row.access_secret)  # shown once, when generated; then only compared
    if "is_deleted" in changed or old is None:
        row.deleted_time = (row.deleted_time or utcnow()) if row.is_deleted else None
    row.multi_factor_auths = mfa_props.all_props(row)  # its masked email or phone follows the fields
    row.updated_time = utcnow()


def _save_application(db: Session, actor: Actor, old, row: m.Application, changed: set[str]) -> None:
    row.client_id = row.client_id or secrets.token_hex(10)
    row.client_secret = row.client_secret or secrets.token_hex(20)
    if not row.grant_types:
        row.grant_types = ["authorization_code"]
    row.signin_methods = [s for s in row.signin_methods if isinstance(s, dict) and s.get("name") in SIGNIN_METHODS]


def _save_organization(db: Session, actor: Actor, old, row: m.Organization, changed: set[str]) -> None:
    if old is not None and "nav_items" in changed and not actor.is_global_admin:
        raise ServiceError("Only a global admin may change the navigation items")
    row.account_items = [i for i in row.account_items
                         if not (isinstance(i, dict) and i.get("name") == b.ACCOUNT_ITEM_PLACEHOLDER)]
    row.password_obfuscator_type = row.password_obfuscator_type or "Plain"
    if row.password_obfuscator_type == "Plain":
        row.password_obfuscator_key = ""
    if not row.enable_dark_logo:
        row.logo_dark = ""


def _save_group(db: Session, actor: Actor, old: m.Group | None, row: m.Group, changed: set[str]) -> None:
    if old is not None:
        if row.owner != old.owner and row.parent_id == old.owner:
            row.parent_id = row.owner  # a top group stays on top when it moves
        groups.check_place(db, old, row)
        groups.follow_rename(db, old, row)
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


# what a pasted certificate and private key are checked again on
CERT_MATERIAL = {"type", "crypto_algorithm", "bit_size", "certificate", "private_key"}
DEFAULT_CERT_YEARS = 20


def _save_cert(db: Session, actor: Actor, old: m.Cert | None, row: m.Cert, changed: set[str]) -> None:
    """An x509 cert saved without its certificate or private key (the console's
    form clears both when the algorithm or bit size changes) gets a new key pair
    and self-signed certificate; a pasted pair must parse and fit the settings."""
    if row.type != "x509":
        return
    if row.crypto_algorithm.startswith("ES"):
        row.bit_size = 0
    if not row.certificate or not row.private_key:
        row.expire_in_years = row.expire_in_years or DEFAULT_CERT_YEARS
        if row.expire_in_years < 0:
            return  # refused by _cert
        row.certificate, row.private_key = certs.generate(row.crypto_algorithm, row.bit_size,
                                                          row.expire_in_years, row.name)
    elif old is not None and not changed & CERT_MATERIAL:
        return
    row.expire_time = certs.not_after(certs.check_pair(row.crypto_algorithm, row.bit_size,
                                                       row.certificate, row.private_key))


BEFORE_SAVE: dict[str, Callable] = {
    "user": _save_user, "application": _save_application, "organization": _save_organization,
    "group": _save_group, "permission": _save_permission, "invitation": _save_timestamped,
    "enforcer": _save_timestamped, "cert": _save_cert,
}


def before_save(db: Session, actor: Actor, kind: Kind, old: m.Named | None, row: m.Named, changed: set[str]) -> None:
    hook = BEFORE_SAVE.get(kind.name)
    if hook:
        hook(db, actor, old, row, changed)
