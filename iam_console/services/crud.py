"""List, get, add, update and delete for every kind, through one set of rules:
access (policy), field locks (accounts), parsing (wire), kind rules (rules),
and an audit Record for every write."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from .. import models as m
from ..models.base import masked, to_wire
from . import accounts, counts, policy, query, rules, wire
from .access import Actor
from .errors import ServiceError
from .records import audit
from .resources import Kind, is_shared, organization_of

AFFECTED, UNAFFECTED = "Affected", "Unaffected"


@dataclass(frozen=True)
class Request:
    """Where a call came from, for the audit trail."""

    uri: str = ""
    client_ip: str = ""
    language: str = ""


NO_REQUEST = Request()


def split_id(value: str) -> tuple[str, str]:
    """Casdoor's id: owner/name with exactly one '/'."""
    if not isinstance(value, str) or value.count("/") != 1:
        raise ServiceError("The id must be of the form owner/name")
    owner, name = value.split("/")
    if not owner or not name:
        raise ServiceError("The id must be of the form owner/name")
    return owner, name


def present(actor: Actor, kind: Kind, row: m.Named) -> dict[str, Any]:
    """The wire object this actor may see: secrets always masked; a cert's
    private key and an application's secret only for the admins of its owner."""
    shown = masked(to_wire(row), kind.model)
    sees_admin_secrets = actor.is_global_admin or (
        actor.is_org_admin and not is_shared(kind, row) and organization_of(kind, row) == actor.organization)
    if not sees_admin_secrets:
        for attribute in kind.model.json_admin_secrets:
            key = m.wire_name(kind.model, attribute)
            if shown.get(key):
                shown[key] = wire.MASK
    return shown


def list_records(db: Session, actor: Actor, kind: Kind, params: dict[str, str], *,
                 owner: str = "", organization: str = "", where: list | None = None) -> query.Page:
    scope = policy.read_scope(actor, kind, owner, organization) + list(where or [])
    plain, counted_owner = policy.owner_only_scope(actor, kind, owner)
    counted = (lambda: counts.total(db, kind.model.__tablename__, counted_owner)) if plain and not where else None
    page = query.run(db, kind.model, scope, query.parse_list_query(params), counted)
    return query.Page([present(actor, kind, row) for row in page.rows], page.total, page.page)


def _find(db: Session, kind: Kind, owner: str, name: str) -> m.Named | None:
    model = kind.model
    return db.exec(select(model).where(model.owner == owner, model.name == name)).first()


def _readable(db: Session, actor: Actor, kind: Kind, owner: str, name: str) -> m.Named | None:
    """The record if it exists and the actor may see it; None if it does not exist."""
    model = kind.model
    scope = policy.read_scope(actor, kind)
    row = db.exec(select(model).where(model.owner == owner, model.name == name, *scope)).first()
    if row is None and _find(db, kind, owner, name) is not None:
        raise ServiceError(policy.UNAUTHORIZED)
    return row


def get_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str) -> dict[str, Any] | None:
    row = _readable(db, actor, kind, owner, name)
    return present(actor, kind, row) if row is not None else None


def find_record(db: Session, actor: Actor, kind: Kind, owner: str, attribute: str, value: str) -> dict | None:
    """get-X by another unique field within an organization (get-user by email, phone, userId)."""
    model = kind.model
    scope = policy.read_scope(actor, kind, owner)
    rows = db.exec(select(model).where(model.owner == owner, getattr(model, attribute) == value, *scope)
                   .limit(2)).all()
    return present(actor, kind, rows[0]) if len(rows) == 1 else None


def _locked(db: Session, actor: Actor, kind: Kind, target: m.Named) -> frozenset[str]:
    if kind.name != "user":
        return frozenset()
    return accounts.locked_attributes(actor, accounts.organization(db, target.owner), target)


def _refuse_locked_changes(kind: Kind, before: m.Named, data: dict[str, Any], locked: frozenset[str]) -> None:
    """A locked field may be sent back unchanged (clients send whole objects), not changed."""
    probe = m.detached_copy(before)
    changed = wire.apply(probe, data)
    forbidden = sorted(changed & locked)
    if forbidden:
        raise ServiceError("You are not allowed to change the field: %s",
                           m.wire_name(kind.model, forbidden[0]))


def _save(db: Session, row: m.Named, kind: Kind) -> None:
    try:
        db.add(row)
        db.flush()
    except IntegrityError:
        db.rollback()
        raise ServiceError("The %s %s/%s already exists", kind.name, row.owner, row.name) from None


def parse_new(actor: Actor, kind: Kind, data: dict[str, Any], row: m.Named | None = None) -> tuple[m.Named, set[str]]:
    """A new record read from its wire object, refused if the actor may not add it.
    `row` is the blank record to fill (a fresh `kind.model()` by default)."""
    row = kind.model() if row is None else row
    changed = wire.apply(row, data)
    policy.check_write(actor, kind, None, row)
    return row, changed


def complete_new(db: Session, actor: Actor, kind: Kind, row: m.Named, changed: set[str]) -> None:
    """What every new record passes before it is saved: the kind's defaults and
    side fields (a password is hashed here), then validation. Reads, never writes."""
    rules.before_save(db, actor, kind, None, row, changed)
    rules.validate(db, actor, kind, row)


def add_record(db: Session, actor: Actor, kind: Kind, data: dict[str, Any], request: Request = NO_REQUEST) -> str:
    """add-X; bulk uploads go through the same parse_new and complete_new (services/uploads.py)."""
    row, changed = parse_new(actor, kind, data)
    if _find(db, kind, row.owner, row.name) is not None:
        raise ServiceError("The %s %s/%s already exists", kind.name, row.owner, row.name)
    complete_new(db, actor, kind, row, changed)
    _save(db, row, kind)
    audit(db, organization=organization_of(kind, row), user=actor.id, action=f"add-{kind.name}",
          request_uri=request.uri, client_ip=request.client_ip, language=request.language, obj=data)
    return AFFECTED


def update_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str, data: dict[str, Any],
                  request: Request = NO_REQUEST) -> str:
    old = _readable(db, actor, kind, owner, name)
    if old is None:
        return UNAFFECTED
    before = m.detached_copy(old)
    _refuse_locked_changes(kind, before, data, _locked(db, actor, kind, before))
    changed = wire.apply(old, data)
    if not changed:
        return UNAFFECTED
    # the row is changed in place: nothing may reach the database before every check passed
    with db.no_autoflush:
        policy.check_write(actor, kind, before, old)
        rules.protect(kind, before, old)
        renamed = (old.owner, old.name) != (before.owner, before.name)
        if renamed and _find(db, kind, old.owner, old.name) is not None:
            raise ServiceError("The %s %s/%s already exists", kind.name, old.owner, old.name)
        rules.before_save(db, actor, kind, before, old, changed)
        rules.validate(db, actor, kind, old)
    _save(db, old, kind)
    audit(db, organization=organization_of(kind, old), user=actor.id, action=f"update-{kind.name}",
          request_uri=request.uri, client_ip=request.client_ip, language=request.language, obj=data)
    return AFFECTED


def delete_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str,
                  request: Request = NO_REQUEST) -> str:
    row = _readable(db, actor, kind, owner, name)
    if row is None:
        return UNAFFECTED
    policy.check_write(actor, kind, row, None)
    rules.protect(kind, row, None)
    db.delete(row)
    db.flush()
    audit(db, organization=organization_of(kind, row), user=actor.id, action=f"delete-{kind.name}",
          request_uri=request.uri, client_ip=request.client_ip, language=request.language,
          obj={"owner": owner, "name": name})
    return AFFECTED
