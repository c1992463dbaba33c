"""Invitations: a code with a quota that lets people sign up."""

from __future__ import annotations

import secrets
import string

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, check_range, stamp_updated
from iam_console.core.resources import Kind

STATES = ("Active", "Suspended")
PLAN_TAG = "auto_created_invitation_for_plan"  # the tag of an invitation a plan created
CODE_LENGTH = 10


def made_for_plan(tag: str | None) -> bool:
    """An invitation a plan created (by its tag) keeps its organization and name."""
    return tag == PLAN_TAG


def validate(db: Session, actor: Actor, row: m.Invitation) -> None:
    check_range(row.quota, 0, None, "quota")
    check_range(row.used_count, 0, row.quota, "used count")


def protect(kind: Kind, old: m.Invitation, new: m.Invitation | None) -> None:
    if made_for_plan(old.tag) and new is not None and (new.owner, new.name) != (old.owner, old.name):
        raise ServiceError("The organization and name of an invitation created for a plan cannot be changed")


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    code = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(CODE_LENGTH))
    return {"displayName": f"New Invitation - {suffix}", "code": code, "defaultCode": code, "quota": 1,
            "usedCount": 0, "application": "All", "state": "Active"}


RULES = KindRules(choices=(Choice("state", STATES),), validate=validate, before_save=stamp_updated,
                  protect=protect, new=new)
