"""Roles: users, groups and other roles, under a name."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import KindRules, fixed


def validate(db: Session, actor: Actor, row: m.Role) -> None:
    if f"{row.owner}/{row.name}" in row.roles:
        raise ServiceError("A role cannot contain itself")


RULES = KindRules(validate=validate, defaults=lambda db, actor, owner: {"isEnabled": True},
                  new=fixed(displayName="New Role - {suffix}", users=[], groups=[], roles=[], domains=[]))
