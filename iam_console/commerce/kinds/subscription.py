"""Subscriptions: a user's plan, from a start to an end.

- The state is one of STATES, changed by administrators only (a normal user cannot write
  subscriptions at all; the rule holds for any caller a later route lets in).
- A change of the state to Active approves the subscription: the approver is the caller and
  the approve time now; a change to any other state clears both. The service sets them: what a
  client sends for them is ignored (docs/api.md, "Commerce").
- The period is the plan's when the subscription names a plan of its organization, and the end
  is the start plus one period (a calendar month or year), computed when a subscription is added
  and whenever its start, period or plan changes. A save that changes none of them keeps the end,
  so a trial's longer end (commerce/commerce.py: the pricing's trial days added when it was
  bought) survives an administrator's edit of its state or description.
- An Active subscription grants its plan's role to its user, however it became Active (bought,
  added, or set Active by an administrator); leaving Active (Expired, Suspended... by hand or
  by the scheduler), changing its plan or user, or being deleted takes the role back, unless
  another Active subscription of the user grants the same role (`after_save`, `take_along`,
  and commerce/commerce.py for the scheduler's expiry)."""

from __future__ import annotations

import calendar
from datetime import datetime

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.commerce.tables import Plan, Subscription
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules
from iam_console.models.base import format_time, utcnow

STATES = ("Pending", "Active", "Upcoming", "Expired", "Error", "Suspended")
PERIODS = ("Monthly", "Yearly")
APPROVED = "Active"  # the state whose choice approves a subscription
NOT_ADMIN = "Only an administrator can change the state of a subscription"


def add_period(start: datetime, period: str) -> datetime | None:
    """start plus one period: the same day of the next month (Monthly) or year (Yearly), the
    month's last day when it has no such day (January 31 -> February 28 or 29); None for an
    unknown period, or an end past the year 9999."""
    months = {"Monthly": 1, "Yearly": 12}.get(period)
    if months is None:
        return None
    total = start.month - 1 + months
    year, month = start.year + total // 12, total % 12 + 1
    if year > 9999:
        return None
    return start.replace(year=year, month=month, day=min(start.day, calendar.monthrange(year, month)[1]))


def _plan_period(db: Session, row: Subscription) -> str | None:
    if not row.plan:
        return None
    name = row.plan.rpartition("/")[2]
    return db.exec(select(Plan.period).where(Plan.owner == row.owner, Plan.name == name)).first()


def before_save(db: Session, actor: Actor, old: Subscription | None, row: Subscription,
                changed: set[str]) -> None:
    if old is not None and row.state != old.state and not actor.is_admin:
        raise ServiceError(NOT_ADMIN)
    if old is None:
        row.approver, row.approve_time = "", None
    elif row.state != old.state:
        if row.state == APPROVED:
            row.approver, row.approve_time = actor.name, utcnow()
        else:
            row.approver, row.approve_time = "", None
    else:
        row.approver, row.approve_time = old.approver, old.approve_time
    row.period = _plan_period(db, row) or row.period
    if old is not None and (row.start_time, row.period, row.plan) == (old.start_time, old.period, old.plan):
        row.end_time = old.end_time
    elif row.start_time is not None and row.period in PERIODS:
        end = add_period(row.start_time, row.period)
        if end is None:
            raise ServiceError("The end time of the subscription would be past the year 9999")
        row.end_time = end


# --- the plan's role ---

def _plan_role(db: Session, owner: str, plan: str) -> str:
    name = plan.rpartition("/")[2]
    return db.exec(select(Plan.role).where(Plan.owner == owner, Plan.name == name)).first() or ""


def granted(db: Session, sub: Subscription) -> tuple[str, str, str] | None:
    """(organization, role, user) that this subscription grants: its plan's role while it is Active."""
    if sub.state != APPROVED or not sub.user or not sub.plan:
        return None
    role = _plan_role(db, sub.owner, sub.plan)
    return (sub.owner, role, sub.user) if role else None


def _role(db: Session, owner: str, role: str) -> m.Role | None:
    role_owner, _, role_name = role.rpartition("/")
    return db.exec(select(m.Role).where(m.Role.owner == (role_owner or owner), m.Role.name == role_name)
                   .with_for_update()).first()


def grant_role(db: Session, owner: str, role: str, user: str) -> None:
    row = _role(db, owner, role)
    member = f"{owner}/{user}"
    if row is not None and member not in row.users:
        row.users = [*row.users, member]
        db.add(row)


def release_role(db: Session, owner: str, role: str, user: str, leaving: int | None) -> None:
    """Take the role back from the user unless another Active subscription (not `leaving`, the
    subscription's pk) of theirs grants it."""
    others = db.exec(select(Subscription.pk).join(Plan, (Subscription.owner == Plan.owner)
                                                    & (Subscription.plan == Plan.name))
                     .where(Subscription.owner == owner, Subscription.user == user,
                            Subscription.state == APPROVED, Subscription.pk != leaving,
                            Plan.role == role)).first()
    if others is not None:
        return
    row = _role(db, owner, role)
    member = f"{owner}/{user}"
    if row is not None and member in row.users:
        row.users = [u for u in row.users if u != member]
        db.add(row)


def after_save(db: Session, actor: Actor, old: Subscription | None, row: Subscription) -> None:
    before = granted(db, old) if old is not None else None
    after = granted(db, row)
    if before == after:
        return
    db.flush()  # the saved state is what release_role's query reads
    if before is not None:
        release_role(db, *before, leaving=row.pk)
    if after is not None:
        grant_role(db, *after)


def take_along(db: Session, row: Subscription) -> None:
    held = granted(db, row)
    if held is not None:
        release_role(db, *held, leaving=row.pk)


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    start = utcnow()
    return {"displayName": f"New Subscription - {suffix}", "period": "Monthly", "state": "Active",
            "startTime": format_time(start), "endTime": format_time(add_period(start, "Monthly"))}


RULES = KindRules(choices=(Choice("state", STATES), Choice("period", PERIODS)), before_save=before_save,
                  after_save=after_save, take_along=take_along, new=new)
