"""Which application serves an organization or a user."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from . import accounts, crud
from . import builtin as b
from .access import Actor
from .errors import ServiceError
from .resources import REGISTRY

APPLICATIONS = REGISTRY["application"]


def default_of(db: Session, actor: Actor, organization: str) -> dict[str, Any] | None:
    """The organization's default application (app-built-in when it names none)."""
    org = accounts.organization(db, organization)
    if org is None:
        raise ServiceError("The organization: %s does not exist", organization)
    return crud.get_record(db, actor, APPLICATIONS, b.ADMIN_OWNER, org.default_application or b.BUILT_IN_APP)


def of_user(db: Session, actor: Actor, owner: str, name: str) -> dict[str, Any] | None:
    """The application the user signed up through, else their organization's default."""
    user = crud.get_record(db, actor, REGISTRY["user"], owner, name)
    if user is None:
        return None
    if user["signupApplication"]:
        return crud.get_record(db, actor, APPLICATIONS, b.ADMIN_OWNER, user["signupApplication"])
    return default_of(db, actor, owner)
