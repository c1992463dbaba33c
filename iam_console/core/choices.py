"""The names a picker offers: one page of an organization's records of a kind whose name
contains what was typed, read through the list's own access rules (crud.list_records), so a
viewer is offered only what they may read and a large table is never read whole."""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlmodel import Session

from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Ownership

PAGE_SIZE = 20
MAX_TYPED = 100


@dataclass(frozen=True)
class Choices:
    names: list[str]  # "name" or "owner/name", as the referring field stores them
    more: bool  # a next page exists


def names(db: Session, actor: Actor, kind: str, organization: str, typed: str = "", *, page: int = 1,
          size: int = PAGE_SIZE, category: str = "", form: str = "name", exclude: str = "") -> Choices:
    """Page `page` of the records of `kind` in `organization` (with the shared ones, for a kind that
    has them) whose name contains `typed`, sorted by name; only records of `category` when given.
    Organizations themselves: every one the viewer may read. `exclude`: the owner/name of one record
    never offered (a role is not its own sub-role)."""
    found = REGISTRY.get(kind)
    if found is None or not found.named:
        raise ServiceError("Unknown kind: %s", kind[:100])
    if form not in ("name", "id"):
        raise ServiceError("Unknown value form: %s", form[:100])
    size, page = max(1, min(size, 100)), max(1, page)
    params = {"p": str(page), "pageSize": str(size), "sortField": "name", "sortOrder": "ascend"}
    typed = typed.strip()[:MAX_TYPED]
    if typed:
        params |= {"field": "name", "value": typed}
    where = []
    if category:
        if not hasattr(found.model, "category"):
            raise ServiceError("The kind %s has no category", kind)
        where.append(found.model.category == category)
    if exclude:
        owner, _, name = exclude.partition("/")
        where.append(sa.not_(sa.and_(found.model.owner == owner, found.model.name == name)))
    if found.organization_attr == "name":
        scope = {}  # organizations themselves: every one the viewer may read
    else:
        scope = {"organization": organization} if found.ownership is Ownership.ADMIN else {"owner": organization}
    listed = crud.list_records(db, actor, found, params, where=where, **scope)
    rows = listed.rows
    values = [f"{row['owner']}/{row['name']}" if form == "id" else str(row["name"]) for row in rows]
    return Choices(values, (listed.total or 0) > page * size)
