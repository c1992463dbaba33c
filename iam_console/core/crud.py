"""List, get, add, update and delete for every kind, through one set of rules:
access (policy), field locks (accounts), parsing (wire), kind rules (rules),
and an audit Record for every write."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit import trail
from iam_console.audit.records import audit, redact_json_text, redact_text
from iam_console.core import builtin as b
from iam_console.core import counts, kinds, lookup, policy, query, rules, wire
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Kind, is_shared, organization_of
from iam_console.identity import accounts, groups
from iam_console.models.base import masked, to_wire

AFFECTED, UNAFFECTED = "Affected", "Unaffected"
# what an update ignores rather than refuses: clients send whole objects back, with the
# createdTime they read, an empty one (a bare SDK object) or a reformatted one; a
# record's age is set when it is added and no update moves it
SET_ON_ADD = frozenset({"created_time"})


@dataclass(frozen=True)
class Request:
    """Where a call came from, for the audit trail."""

    uri: str = ""
    client_ip: str = ""
    language: str = ""


NO_REQUEST = Request()


def _ok(data: Any) -> dict[str, Any]:
    """The answer a write's record keeps (the envelope's status, message and data)."""
    return {"status": "ok", "msg": "", "data": data}


def split_id(value: str) -> tuple[str, str]:
    """Casdoor's id: owner/name with exactly one '/' and no control character."""
    if not isinstance(value, str) or value.count("/") != 1:
        raise ServiceError("The id must be of the form owner/name")
    owner, name = value.split("/")
    if not owner or not name:
        raise ServiceError("The id must be of the form owner/name")
    if wire.CONTROL_CHARACTERS.search(value):
        raise ServiceError("The id cannot contain control characters")
    return owner, name


def present(actor: Actor, kind: Kind, row: m.Named, with_secret: bool = False) -> dict[str, Any]:
    """The wire object this actor may see: a cert's private key and an
    application's secret only for the admins of its owner; other secrets masked
    unless those admins ask withSecret=1 (never a user's password hash or TOTP seed); a
    verification's code only for the admins of its own organization."""
    sees_admin_secrets = actor.is_global_admin or (
        actor.is_org_admin and not is_shared(kind, row) and organization_of(kind, row) == actor.organization)
    shown = to_wire(row)
    if not (with_secret and sees_admin_secrets and kind.model.json_secrets_revealable):
        shown = masked(shown, kind.model)
    hidden = set() if sees_admin_secrets else set(kind.model.json_admin_secrets)
    if not (actor.is_admin and organization_of(kind, row) == actor.organization):
        hidden |= kind.model.json_own_admin_secrets
    for attribute in hidden:
        key = m.wire_name(kind.model, attribute)
        if shown.get(key):
            shown[key] = wire.MASK
    return shown


def maintained_total(db: Session, actor: Actor, kind: Kind, owner: str = "") -> int | None:
    """How many records read_scope(actor, kind, owner) selects, from the maintained
    row counts, when that scope is an owner filter alone; None otherwise (count them)."""
    plain, counted_owner = policy.owner_only_scope(actor, kind, owner)
    return counts.total(db, kind.model.__tablename__, counted_owner) if plain else None


def list_records(db: Session, actor: Actor, kind: Kind, params: dict[str, str], *,
                 owner: str = "", organization: str = "", where: list | None = None,
                 equal: dict[str, str] | None = None) -> query.Page:
    """A page of the kind's records; get-users also takes groupName (the users of
    one group of `owner`, or of the caller's organization). `equal` holds the console's
    column filters (wire name: value), each on top of the search."""
    where = list(where or []) + (trail.filters(params) if kind.name == "record" else [])
    where += [query.equal_to(kind.model, field, value) for field, value in sorted((equal or {}).items())]
    scope = policy.read_scope(actor, kind, owner, organization) + where
    counted = None if where else (lambda: maintained_total(db, actor, kind, owner))
    filters = []
    if kind.name == "user" and params.get("groupName"):
        group_owner, group = owner or actor.organization, str(params["groupName"])[:query.MAX_VALUE_LENGTH]
        filters.append(groups.member_filter(group_owner, group, db.get_bind().dialect.name))
        counted = None if where or organization else (
            lambda: groups.member_total(db, actor, owner, groups.group_id(group_owner, group)))
    page = query.run(db, kind.model, scope, query.parse_list_query(params), counted, filters)
    with_secret = params.get("withSecret") == "1"
    rows = [present(actor, kind, row, with_secret) for row in page.rows]
    if kind.name == "group":
        groups.extend(db, rows)
    return query.Page(rows, page.total, page.page)


FILTERABLE = (str, bool, int, float)


def filter_records(db: Session, actor: Actor, data: dict[str, Any]) -> list[dict[str, Any]]:
    """get-records-filter: the records (newest first, at most a list's unpaged limit) whose
    fields equal every field the body gives (empty strings and false say nothing), within
    what the admin may read."""
    policy.require_admin(actor)
    kind = REGISTRY["record"]
    probe = m.Record()
    changed = wire.apply(probe, data)
    where = [getattr(m.Record, attribute) == getattr(probe, attribute) for attribute in sorted(changed)
             if isinstance(getattr(probe, attribute), FILTERABLE) and getattr(probe, attribute) not in ("", False)
             and attribute != "created_time"]
    return list_records(db, actor, kind, {}, where=where).rows


def _find(db: Session, kind: Kind, owner: str, name: str) -> m.Named | None:
    model = kind.model
    return db.exec(select(model).where(model.owner == owner, model.name == name)).first()


def exists(db: Session, kind: Kind, owner: str, name: str) -> bool:
    """Whether the record exists, whoever may read it: only for a kind whose names are public
    anyway (an application's, on its sign-in and sign-up pages)."""
    return _find(db, kind, owner, name) is not None


def _addressed(kind: Kind, owner: str) -> list:
    """The WHERE clauses of the owner part of an id: {organization}/{name} of a kind
    whose records the SDKs address so is admin/{name} of that organization."""
    model = kind.model
    if owner != b.ADMIN_OWNER and kinds.of(kind.name).organization_as_owner:
        return [model.owner == b.ADMIN_OWNER, getattr(model, kind.organization_attr) == owner]
    return [model.owner == owner]


def _owned_by_admin(kind: Kind, row: m.Named) -> None:
    """A record of such a kind given with its organization as the owner is admin's."""
    if row.owner and row.owner != b.ADMIN_OWNER and kinds.of(kind.name).organization_as_owner:
        organization = getattr(row, kind.organization_attr)
        if organization and organization != row.owner:
            raise ServiceError("The owner of a %s must be admin or its organization", kind.name)
        setattr(row, kind.organization_attr, row.owner)
        row.owner = b.ADMIN_OWNER


def readable_row(db: Session, actor: Actor, kind: Kind, owner: str, name: str) -> m.Named | None:
    """The record if it exists and the actor may see it, else None: a record out of the
    actor's reach is answered exactly as a missing one, so that no answer tells whether
    another organization holds a record of that name."""
    model = kind.model
    scope = policy.read_scope(actor, kind)
    return db.exec(select(model).where(*_addressed(kind, owner), model.name == name, *scope)).first()


def get_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str,
               with_secret: bool = False) -> dict[str, Any] | None:
    row = readable_row(db, actor, kind, owner, name)
    if row is None:
        if kinds.of(kind.name).missing_is_error:
            raise ServiceError("The %s: %s/%s does not exist", kind.name, owner, name)
        return None
    shown = present(actor, kind, row, with_secret)
    if kind.name == "group":
        groups.extend(db, [shown])
    return shown


def find_record(db: Session, actor: Actor, kind: Kind, owner: str, attribute: str, value: str) -> dict | None:
    """get-X by another unique field (get-user by email, phone, userId): within `owner`,
    or without one across what the actor may read. A value two records share answers
    nothing rather than an arbitrary one of them."""
    model = kind.model
    scope = policy.read_scope(actor, kind, owner)
    if owner:
        scope.append(model.owner == owner)
    rows = db.exec(select(model).where(getattr(model, attribute) == value, *scope).limit(2)).all()
    return present(actor, kind, rows[0]) if len(rows) == 1 else None


def _locked(db: Session, actor: Actor, kind: Kind, target: m.Named,
            proven: frozenset[str] = frozenset()) -> frozenset[str]:
    if kind.name != "user":
        return frozenset()
    return accounts.locked_attributes(actor, lookup.organization(db, target.owner), target, proven)


def _refuse_locked_changes(kind: Kind, before: m.Named, data: dict[str, Any], locked: frozenset[str]) -> None:
    """A locked field may be sent back unchanged (clients send whole objects), not changed."""
    probe = m.detached_copy(before)
    changed = wire.apply(probe, data, keep=SET_ON_ADD)
    forbidden = sorted(changed & locked)
    if forbidden:
        raise ServiceError("You are not allowed to change the field: %s",
                           m.wire_name(kind.model, forbidden[0]))


REMEMBERED_KINDS = frozenset({"application", "cert"})  # see lookup.forget


def _save(db: Session, row: m.Named, kind: Kind) -> None:
    if kind.name in REMEMBERED_KINDS:
        lookup.forget()
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
    _owned_by_admin(kind, row)
    policy.check_write(actor, kind, None, row)
    return row, changed


def complete_new(db: Session, actor: Actor, kind: Kind, row: m.Named, changed: set[str]) -> None:
    """What every new record passes before it is saved: the kind's defaults and
    side fields (a password is hashed here), then validation. Reads, never writes."""
    rules.before_save(db, actor, kind, None, row, changed)
    rules.validate(db, actor, kind, row)


def add_record(db: Session, actor: Actor, kind: Kind, data: dict[str, Any], request: Request = NO_REQUEST,
               *, dry_run: bool = False) -> Any:
    """add-X's data: "Affected", or what the kind answers instead (a transaction's name)."""
    return add_answer(db, actor, kind, data, request, dry_run=dry_run)[0]


def add_answer(db: Session, actor: Actor, kind: Kind, data: dict[str, Any], request: Request = NO_REQUEST,
               *, dry_run: bool = False) -> tuple[Any, Any]:
    """add-X's (data, data2); bulk uploads go through the same parse_new and complete_new
    (identity/uploads.py). A dry run passes every check and writes nothing (add-transaction?dryRun=1)."""
    row, changed = parse_new(actor, kind, data)
    own = kinds.of(kind.name)
    if own.generate_name and not row.name:
        row.name = f"{kind.name_prefix or kind.name}_{secrets.token_hex(16)}"
        if hasattr(row, "display_name") and not row.display_name:
            row.display_name = row.name
        changed |= {"name", "display_name"}
    if _find(db, kind, row.owner, row.name) is not None:
        raise ServiceError("The %s %s/%s already exists", kind.name, row.owner, row.name)
    complete_new(db, actor, kind, row, changed)
    if dry_run:
        return AFFECTED, None
    _save(db, row, kind)
    rules.after_save(db, actor, kind, None, row)
    audit(db, organization=organization_of(kind, row), user=actor.id, action=f"add-{kind.name}",
          request_uri=request.uri or f"/api/add-{kind.name}", client_ip=request.client_ip,
          language=request.language, obj=data, response=_ok(AFFECTED))
    return own.answer(db, row) if own.answer else (AFFECTED, None)


def add_client_record(db: Session, actor: Actor, data: dict[str, Any]) -> str:
    """add-record: an admin writes a Record of their own organization into the
    audit trail (Casdoor's apps log their own events this way); the id is the server's."""
    policy.require_admin(actor)
    row = m.Record()
    wire.apply(row, data)
    row.owner = row.owner or actor.organization
    row.organization = row.organization or row.owner
    if not actor.is_global_admin and {row.owner, row.organization} != {actor.organization}:
        raise ServiceError(policy.UNAUTHORIZED)
    row.name = row.name or secrets.token_hex(10)
    # the trail's reader files a record by these: well formed, organizations that exist
    rules.validate_identity(db, REGISTRY["record"], row)
    if not rules.organization_exists(db, row.organization):
        raise ServiceError("The organization: %s does not exist", row.organization)
    row.user = row.user or actor.id
    row.request_uri = redact_text(row.request_uri)
    row.object, row.response = redact_json_text(row.object), redact_json_text(row.response)
    db.add(row)
    return AFFECTED


def _refuse_out_of_reach(db: Session, actor: Actor, kind: Kind, owner: str, name: str) -> None:
    """A write of a record of the actor's own organization that they may not see is refused with
    the reason, where policy.py gives one (else it is answered as a missing record)."""
    reason = policy.out_of_reach_write(actor, kind)
    if reason and owner == actor.organization and _find(db, kind, owner, name) is not None:
        raise ServiceError(reason)


def update_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str, data: dict[str, Any],
                  request: Request = NO_REQUEST, *, proven: frozenset[str] = frozenset()) -> str:
    """`proven`: user attributes a checked verification code vouches for (accounts.locked_attributes)."""
    old = readable_row(db, actor, kind, owner, name)
    if old is None:
        _refuse_out_of_reach(db, actor, kind, owner, name)
        return UNAFFECTED
    before = m.detached_copy(old)
    _refuse_locked_changes(kind, before, data, _locked(db, actor, kind, before, proven))
    changed = wire.apply(old, data, keep=SET_ON_ADD)
    _owned_by_admin(kind, old)
    changed -= {attribute for attribute in changed if getattr(old, attribute) == getattr(before, attribute)}
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
    rules.after_save(db, actor, kind, before, old)
    audit(db, organization=organization_of(kind, old), user=actor.id, action=f"update-{kind.name}",
          request_uri=request.uri or f"/api/update-{kind.name}?id={owner}/{name}", client_ip=request.client_ip,
          language=request.language, obj=data, response=_ok(AFFECTED))
    return AFFECTED


def update_records(db: Session, actor: Actor, kind: Kind, records: list[Any],
                   request: Request = NO_REQUEST) -> str:
    """Several records in one transaction (update-permissions), each addressed by its own owner
    and name and going through update_record's rules; a record not found is skipped, and one
    refusal refuses them all. AFFECTED when any changed."""
    affected = False
    for data in records:
        if not isinstance(data, dict):
            raise ServiceError("Each %s must be an object", kind.name)
        owner, name = data.get("owner"), data.get("name")
        if not isinstance(owner, str) or not isinstance(name, str) or not owner or not name:
            raise ServiceError("The owner and name cannot be empty")
        affected = update_record(db, actor, kind, owner, name, data, request) == AFFECTED or affected
    return AFFECTED if affected else UNAFFECTED


def delete_record(db: Session, actor: Actor, kind: Kind, owner: str, name: str,
                  request: Request = NO_REQUEST) -> str:
    row = readable_row(db, actor, kind, owner, name)
    if row is None:
        _refuse_out_of_reach(db, actor, kind, owner, name)
        return UNAFFECTED
    policy.check_write(actor, kind, row, None)
    rules.protect(kind, row, None)
    if kind.name in REMEMBERED_KINDS:
        lookup.forget()
    rules.check_delete(db, kind, row)
    rules.take_along(db, kind, row)
    if rules.keeps_row(db, kind, row):
        db.add(row)
    else:
        db.delete(row)
    db.flush()
    audit(db, organization=organization_of(kind, row), user=actor.id, action=f"delete-{kind.name}",
          request_uri=request.uri or f"/api/delete-{kind.name}", client_ip=request.client_ip,
          language=request.language, obj={"owner": owner, "name": name}, response=_ok(AFFECTED))
    return AFFECTED
