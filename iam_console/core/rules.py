"""The rules every write of every kind passes, in this order: a record's identity (its name,
owner and organization), then its kind's own rules (<feature>/kinds/<kind>.py), then the records it
names (core/references.py). core/crud.py calls `protect`, `before_save`, `validate`,
`after_save`, `check_delete`, `take_along` and `keeps_row` for every add, update and delete."""

from __future__ import annotations

import re

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import kinds, lookup, references, wire
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import Kind, Ownership

NAME_PATTERN = re.compile(r"^[^/\s][^/]*$")
NAME_RULE = "The name cannot contain '/' or control characters, or start with a space"


def protect(kind: Kind, old: m.Named, new: m.Named | None) -> None:
    """Refuse what may never happen to a record: deleting it (new None), renaming or changing it."""
    hook = kinds.of(kind.name).protect
    if hook:
        hook(kind, old, new)


def check_delete(db: Session, kind: Kind, row: m.Named) -> None:
    """What a delete needs beyond `protect`, reading the database."""
    hook = kinds.of(kind.name).check_delete
    if hook:
        hook(db, row)


def organization_exists(db: Session, name: str) -> bool:
    if lookup.ORGANIZATION_CACHE in db.info:  # a bulk upload's session
        return lookup.organization(db, name) is not None
    return db.exec(select(m.Organization.pk).where(m.Organization.owner == b.ADMIN_OWNER,
                                                   m.Organization.name == name)).first() is not None


def validate_identity(db: Session, kind: Kind, row: m.Named) -> None:
    """owner and name well formed, the record's organization existing (add-record uses it alone)."""
    if not row.owner or not row.name:
        raise ServiceError("The owner and name cannot be empty")
    if not NAME_PATTERN.match(row.name) or wire.NAME_CONTROLS.search(row.name):
        raise ServiceError(NAME_RULE)
    if not row.name.strip("."):  # "." and ".." are path segments: in URLs, file paths and ids
        raise ServiceError("The name cannot be only dots")
    if wire.NAME_CONTROLS.search(row.owner):
        raise ServiceError("The owner cannot contain control characters")
    if kind.ownership is Ownership.ADMIN and row.owner != b.ADMIN_OWNER:
        raise ServiceError("The owner of a %s must be admin", kind.name)
    organization = getattr(row, kind.organization_attr)
    if kind.name == "organization":
        return
    if kind.ownership is Ownership.SHARED and organization == b.ADMIN_OWNER:
        return
    if not organization_exists(db, organization):
        raise ServiceError("The organization: %s does not exist", organization)


def validate(db: Session, actor: Actor, kind: Kind, row: m.Named) -> None:
    validate_identity(db, kind, row)
    own = kinds.of(kind.name)
    for choice in own.choices:
        choice.check(getattr(row, choice.attribute))
    if own.validate:
        own.validate(db, actor, row)
    references.check(db, kind, row, across=references.reaches_across(actor))


def before_save(db: Session, actor: Actor, kind: Kind, old: m.Named | None, row: m.Named, changed: set[str]) -> None:
    """What saving a record also does (hashing a password, generating client credentials...)."""
    hook = kinds.of(kind.name).before_save
    if hook:
        hook(db, actor, old, row, changed)


def after_save(db: Session, actor: Actor, kind: Kind, old: m.Named | None, row: m.Named) -> None:
    """What goes with a saved record (a plan's product), written in the same transaction."""
    hook = kinds.of(kind.name).after_save
    if hook:
        hook(db, actor, old, row)


def take_along(db: Session, kind: Kind, row: m.Named) -> None:
    """Delete or release what belongs to a record about to be deleted (an organization's records)."""
    hook = kinds.of(kind.name).take_along
    if hook:
        hook(db, row)


def keeps_row(db: Session, kind: Kind, row: m.Named) -> bool:
    """Whether a delete leaves the record in place, flagged (a user of an organization with soft
    deletion), rather than deleting it."""
    hook = kinds.of(kind.name).keeps_row
    return bool(hook and hook(db, row))
