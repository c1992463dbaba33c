"""The dashboard's series (spec part 1 §2.3, §3): for 14 kinds, how many records
existed at the end of each of the last 31 days, counted in SQL.

Per kind: one count of what existed before the window and one GROUP BY day
inside it; no row is loaded."""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlmodel import Session, func, select

from ..models.base import utcnow
from . import policy
from .access import Actor
from .resources import REGISTRY

DAYS = 31
SERIES = ("organization", "user", "provider", "application", "subscription", "role", "group", "resource",
          "cert", "permission", "transaction", "model", "adapter", "enforcer")


def _day(value) -> str:
    """SQLite returns 'YYYY-MM-DD' for date(); the others return a date."""
    return value if isinstance(value, str) else value.isoformat()


def counts(db: Session, actor: Actor, organization: str = "", now: datetime | None = None) -> dict[str, list[int]]:
    policy.require_admin(actor)
    now = now or utcnow()
    first_day = (now - timedelta(days=DAYS - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    days = [(first_day + timedelta(days=i)).date().isoformat() for i in range(DAYS)]
    result = {}
    for name in SERIES:
        kind = REGISTRY[name]
        model = kind.model
        scope = policy.read_scope(actor, kind, organization if kind.organization_attr == "owner" else "",
                                  organization)
        before = db.exec(select(func.count()).select_from(model)
                         .where(*scope, model.created_time < first_day)).one()
        day = func.date(model.created_time)
        per_day = dict(db.exec(select(day, func.count()).where(*scope, model.created_time >= first_day)
                               .group_by(day)).all())
        running, series = before, []
        added = {_day(key): value for key, value in per_day.items()}
        for label in days:
            running += added.get(label, 0)
            series.append(running)
        result[f"{name}Counts"] = series
    return result

