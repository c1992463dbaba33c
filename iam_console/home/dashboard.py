"""The dashboard's series: for 14 kinds, how many
records existed at the end of each of the last 31 days (UTC), counted in SQL.

Per kind, first one statement: whether records were created since the window
began (counted up to GROUPED_MAX + 1, no further) and, unless the maintained
row count (migration 0002) gives the total, how many existed before it. Most
kinds have nothing new and stop there. Otherwise the window's records are
counted per day: grouped by day when they are few, and when they are many (a
bulk import) with one index range count per day, which costs a fraction of
grouping a large range; what existed before is the total minus those. No row
is loaded, and the window is walked once (bench/dashboard.py)."""

from __future__ import annotations

import itertools
from datetime import datetime, timedelta

import sqlalchemy as sa
from sqlmodel import Session

from iam_console.core import crud, policy
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY
from iam_console.models.base import utcnow

DAYS = 31  # today and the 30 days before
CARD_OFFSETS = {"today": 1, "week": 7, "month": 30}  # the user cards: new users since that many days ago
# Grouping by day costs about 0.5 µs a record on SQLite here; 31 range counts cost
# a few ms to build and about 0.04 µs a record: above this many, count ranges.
GROUPED_MAX = 10_000


def series() -> tuple[str, ...]:
    """The chart's series: the kinds declared `charted`, in the registry's order."""
    return tuple(name for name, kind in REGISTRY.items() if kind.charted)


def _bounds(now: datetime) -> list[datetime]:
    """The DAYS + 1 midnights (UTC) around the window's days: day i is [bounds[i], bounds[i + 1])."""
    first = (now - timedelta(days=DAYS - 1)).replace(hour=0, minute=0, second=0, microsecond=0)
    return [first + timedelta(days=i) for i in range(DAYS + 1)]


def days(now: datetime | None = None) -> list[str]:
    """The chart's days, oldest first, as ISO dates (UTC)."""
    return [bound.date().isoformat() for bound in _bounds(now or utcnow())[:DAYS]]


def counts(db: Session, actor: Actor, organization: str = "", now: datetime | None = None) -> dict[str, list[int]]:
    """{"<kind>Counts": 31 running totals} for the records the actor may read,
    of one organization or (global admin, organization "") of all."""
    policy.require_admin(actor)
    bounds = _bounds(now or utcnow())
    result = {}
    for name in series():
        kind = REGISTRY[name]
        owner = organization if kind.organization_attr == "owner" else ""
        scope = policy.read_scope(actor, kind, owner, organization)
        total = crud.maintained_total(db, actor, kind, owner)
        result[f"{name}Counts"] = _series(db, kind.model, scope, bounds, total)
    return result


def _series(db: Session, model, scope: list, bounds: list[datetime], total: int | None) -> list[int]:
    created = model.created_time

    def count(*clauses) -> sa.ScalarSelect:
        return sa.select(sa.func.count()).select_from(model).where(*scope, *clauses).scalar_subquery()

    # how many records are new since the window began, counted up to GROUPED_MAX + 1 only
    probe = (sa.select(sa.literal(1)).select_from(model).where(*scope, created >= bounds[0])
             .limit(GROUPED_MAX + 1).subquery())
    new = sa.select(sa.func.count()).select_from(probe).scalar_subquery()
    if total is None:
        new, before = db.exec(sa.select(new, count(created < bounds[0]))).one()
    else:
        new = db.exec(sa.select(new)).one()[0]
    if new == 0:
        return [before if total is None else total] * DAYS
    if new <= GROUPED_MAX:
        day = _utc_date(db, created)
        rows = db.exec(sa.select(day, sa.func.count()).where(*scope, created >= bounds[0]).group_by(day)).all()
        added = {_iso(key): value for key, value in rows}
        per_day = [added.get(bound.date().isoformat(), 0) for bound in bounds[:DAYS]]
        later = new - sum(per_day)  # dated after today
    else:
        row = db.exec(sa.select(*[count(created >= start, created < end) for start, end in itertools.pairwise(bounds)],
                                count(created >= bounds[-1]))).one()
        per_day, later = [int(n) for n in row[:DAYS]], int(row[DAYS])
    if total is not None:
        before = total - sum(per_day) - later
    series, running = [], before
    for added_that_day in per_day:
        running += added_that_day
        series.append(running)
    return series


def _utc_date(db: Session, column) -> sa.ColumnElement:
    """The UTC day of a time: SQLite and MySQL store UTC without a zone; PostgreSQL's
    timestamptz would otherwise be cut at the session's time zone."""
    if db.get_bind().dialect.name == "postgresql":
        return sa.func.date(sa.func.timezone("UTC", column))
    return sa.func.date(column)


def _iso(day) -> str:
    """date() gives 'YYYY-MM-DD' on SQLite and a date elsewhere."""
    return day if isinstance(day, str) else day.isoformat()


def user_figures(series: dict[str, list[int]]) -> dict[str, int]:
    """The four user cards: the total, and the users added since 1, 7 and 30
    days before (the difference of the running totals at those offsets)."""
    users = series["userCounts"]
    today = users[-1]
    return {"total": today, **{key: today - users[-1 - offset] for key, offset in CARD_OFFSETS.items()}}
