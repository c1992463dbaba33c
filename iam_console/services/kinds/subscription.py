"""Subscriptions: a user's plan, from a start to an end."""

from __future__ import annotations

from datetime import timedelta

from sqlmodel import Session

from ...models.base import format_time, utcnow
from ..access import Actor
from .common import KindRules

NEW_PERIOD = timedelta(days=30)  # a new subscription runs a month from now


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    start = utcnow()
    return {"displayName": f"New Subscription - {suffix}", "period": "Monthly", "state": "Active",
            "startTime": format_time(start), "endTime": format_time(start + NEW_PERIOD)}


RULES = KindRules(new=new)
