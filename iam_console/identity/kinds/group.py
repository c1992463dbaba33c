"""Groups: type, their place in the organization's tree, and what a rename or a delete asks."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules
from iam_console.identity import groups
from iam_console.models.base import utcnow

TYPES = ("Virtual", "Physical")


def validate(db: Session, actor: Actor, row: m.Group) -> None:
    if row.parent_id == row.name and row.name != row.owner:
        raise ServiceError("A group cannot be placed under itself or one of its child groups")


def before_save(db: Session, actor: Actor, old: m.Group | None, row: m.Group, changed: set[str]) -> None:
    if old is not None:
        if row.owner != old.owner and row.parent_id == old.owner:
            row.parent_id = row.owner  # a top group stays on top when it moves
        groups.check_place(db, old, row)
        groups.follow_rename(db, old, row)
    row.is_top_group = row.parent_id in ("", row.owner)
    row.updated_time = utcnow()


def check_delete(db: Session, row: m.Group) -> None:
    if groups.has_children(db, row.owner, row.name):
        raise ServiceError("The group %s has child groups: delete or move them first", row.name)


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    return {"displayName": f"New Group - {suffix}", "type": "Virtual", "isEnabled": True, "parentId": owner,
            "isTopGroup": True}


RULES = KindRules(
    choices=(Choice("type", TYPES, label="group type"),),
    validate=validate, before_save=before_save, check_delete=check_delete, new=new,
)
