"""Permissions: who may do what on which resources, approved by a global admin."""

from __future__ import annotations

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.authorization.casbin_engine import has_roles, parse_model
from iam_console.core import builtin as b
from iam_console.core import policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules
from iam_console.models.base import utcnow

STATES = ("Approved", "Pending")
EFFECTS = ("Allow", "Deny")
RESOURCE_TYPES = ("Application", "TreeNode", "Custom")  # offered by the console; the API takes others too


def validate(db: Session, actor: Actor, row: m.Permission) -> None:
    if not row.users and not row.roles:
        raise ServiceError("The users and roles cannot be empty at the same time")
    if not row.resources:
        raise ServiceError("The resources cannot be empty")
    if not row.actions:
        raise ServiceError("The actions cannot be empty")


def before_save(db: Session, actor: Actor, old: m.Permission | None, row: m.Permission, changed: set[str]) -> None:
    if actor.is_global_admin and old is None and not row.state:
        # a global admin's new permission is approved unless it says otherwise, as the console's
        # form makes it: Casdoor's data names no state (Casdoor enforces every permission)
        row.state = "Approved"
    if not actor.is_global_admin:
        # only a global admin decides the state, and with it the approver; anyone else's new
        # permission starts Pending (docs/architecture.md, "The roles and permissions screens")
        row.state = old.state if old is not None else "Pending"
        row.approver, row.approve_time = (old.approver, old.approve_time) if old is not None else ("", None)
        if old is None and not actor.is_admin:
            row.submitter = actor.name
        elif old is not None:
            row.submitter = old.submitter  # the submitter stays who submitted it
        return
    if old is None or row.state != old.state:
        if row.state == "Approved":
            row.approver, row.approve_time = actor.name, utcnow()
        else:
            row.approver, row.approve_time = "", None


def defaults(db: Session, actor: Actor, owner: str) -> dict:
    """A new permission, added on the console or uploaded: enabled, allowing, submitted by its
    writer, approved when a global admin writes it (before_save: Pending for anyone else)."""
    return {"resourceType": "Application", "effect": "Allow", "isEnabled": True, "submitter": actor.name,
            "state": "Approved" if actor.is_global_admin else "Pending"}


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    # the adding user when they belong to the organization (a permission names its own users only)
    users = [actor.id] if actor.user is not None and actor.user.owner == owner else [f"{owner}/*"]
    return {"displayName": f"New Permission - {suffix}", "users": users, "resources": [b.BUILT_IN_APP],
            "actions": ["Read"]}


def model_has_roles(db: Session, actor: Actor, owner: str, model: str) -> bool:
    """Whether a permission of `owner` naming `model` ("name" or "owner/name") may name roles: its
    model has a role definition. No model is the default one, which has. Anyone who may write
    permissions of `owner` may ask (normal users too, who cannot read models)."""
    if not actor.is_global_admin:
        policy.require_user(actor)
        if actor.organization != owner:
            raise ServiceError(policy.UNAUTHORIZED)
    if not model:
        return True
    model_owner, _, name = model.rpartition("/")
    row = db.exec(select(m.CasbinModel).where(m.CasbinModel.owner == (model_owner or owner),
                                              m.CasbinModel.name == name)).first()
    if row is None:
        return False
    try:
        return has_roles(parse_model(row.model_text))
    except ServiceError:
        return False


RULES = KindRules(choices=(Choice("state", STATES), Choice("effect", EFFECTS)),
                  validate=validate, before_save=before_save, defaults=defaults, new=new)
