"""New records: what the console's Add button creates before opening the form. The fields
are each kind's own (`defaults`, then `new`, in <feature>/kinds/<kind>.py); the name is the kind's prefix and
a random suffix, the owner the organization the record is added to.

`new_record` returns a wire object; the caller adds it through crud.add_record,
so the new record passes the same rules as any other."""

from __future__ import annotations

import secrets
from typing import Any

from sqlmodel import Session

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import kinds
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY, Ownership


def random_suffix() -> str:
    return secrets.token_hex(3)


def new_record(db: Session, actor: Actor, kind_name: str, owner: str) -> dict[str, Any]:
    """The wire object of a new record of this kind in this organization."""
    kind = REGISTRY[kind_name]
    suffix = random_suffix()
    own = kinds.of(kind_name)
    record = own.defaults(db, actor, owner) if own.defaults else {}
    record.update(own.new(db, actor, owner, suffix) if own.new else {})
    record[m.wire_name(kind.model, "name")] = f"{kind.name_prefix or kind.name}_{suffix}"
    if kind.ownership is Ownership.ADMIN:
        record["owner"] = b.ADMIN_OWNER
        if kind_name not in ("organization", "application"):
            record.setdefault(kind.organization_attr, owner)
    else:
        record["owner"] = owner
    return record
