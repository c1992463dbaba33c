"""Reading and keeping the audit trail at scale (docs/architecture.md, "The audit trail"):
the records list's filters, the CSV export of a filtered view (streamed in batches, never
loaded whole) and the retention purge the scheduler runs (in batches)."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import policy, query, wire
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.models.base import to_wire, utcnow

# get-records' filters beyond Casdoor's field/value: each is an equality on the first column of
# an index ending in the list's order (migration 0015), and the time range is that order's range
EXACT = {"organization": m.Record.organization, "user": m.Record.user, "action": m.Record.action,
         "method": m.Record.method}
EXPORT_BATCH = 1_000
PURGE_BATCH = 1_000
PURGE_BATCHES_PER_RUN = 100  # a run deletes at most this many batches; the next tick goes on
# the export's columns, in the list's order
EXPORT_COLUMNS = ("id", "name", "clientIp", "createdTime", "organization", "user", "method", "requestUri",
                  "language", "statusCode", "response", "object", "action", "isTriggered")


def filters(params: dict[str, str]) -> list[sa.ColumnElement]:
    """The WHERE clauses of get-records' own filters: organization, user, action, method
    (exact), startTime and endTime (RFC 3339; from inclusive, to exclusive)."""
    where = []
    for key, column in EXACT.items():
        value = params.get(key) or ""
        if value:
            if len(value) > 1_000 or wire.CONTROL_CHARACTERS.search(value):
                raise ServiceError("The parameter %s is not valid", key)
            where.append(column == value)
    start, end = wire.parse_time(params.get("startTime") or "", "startTime"), \
        wire.parse_time(params.get("endTime") or "", "endTime")
    if start is not None:
        where.append(m.Record.created_time >= start)
    if end is not None:
        where.append(m.Record.created_time < end)
    return where


def _scope(actor: Actor, owner: str, params: dict[str, str]) -> list[sa.ColumnElement]:
    scope = policy.read_scope(actor, REGISTRY["record"], owner)
    search = query.search_clause(m.Record, query.parse_list_query(params))
    return scope + filters(params) + ([search.tested] if search else [])


def _safe(value: Any) -> str:
    """A cell a spreadsheet shows as text: a leading =, +, -, @, tab or carriage return
    would start a formula (CSV injection), so such a cell gets a leading apostrophe."""
    text = "" if value is None else str(value).lower() if isinstance(value, bool) else str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def export_csv(open_session: Callable[[], Any], actor: Actor, owner: str, params: dict[str, str]) -> Iterator[str]:
    """The filtered view as CSV, newest first: a header line, then batches of rows read by
    keyset (created_time, pk) in sessions of their own; nothing holds more than a batch.
    The scope is checked before the first line: a refusal raises before anything is sent."""
    where = _scope(actor, owner, params)
    order = (sa.desc(m.Record.created_time), sa.desc(m.Record.pk))

    def lines(rows: list[list[str]]) -> str:
        out = io.StringIO()
        csv.writer(out, lineterminator="\r\n").writerows(rows)
        return out.getvalue()

    def generate() -> Iterator[str]:
        yield lines([list(EXPORT_COLUMNS)])
        after = None
        while True:
            statement = select(m.Record).where(*where)
            if after is not None:
                time, pk = after
                statement = statement.where(sa.or_(m.Record.created_time < time,
                                                   sa.and_(m.Record.created_time == time, m.Record.pk < pk)))
            with open_session() as db:
                batch = list(db.exec(statement.order_by(*order).limit(EXPORT_BATCH)))
                rows = [[_safe(shown.get(c)) for c in EXPORT_COLUMNS] for shown in map(to_wire, batch)]
            if not batch:
                return
            yield lines(rows)
            if len(batch) < EXPORT_BATCH:
                return
            after = (batch[-1].created_time, batch[-1].pk)

    return generate()


def purge(db_factory: Callable[[], Any], days: int, now=None) -> int:
    """Delete the records older than `days` days, a batch per transaction, at most
    PURGE_BATCHES_PER_RUN batches; the row-count triggers keep the totals right. Returns how
    many went. Several workers may run it at once: a row deleted twice is deleted once."""
    if days <= 0:
        return 0
    cutoff = (now or utcnow()) - timedelta(days=days)
    removed = 0
    for _ in range(PURGE_BATCHES_PER_RUN):
        with db_factory() as db:
            db: Session
            pks = list(db.exec(select(m.Record.pk).where(m.Record.created_time < cutoff)
                               .order_by(m.Record.created_time, m.Record.pk).limit(PURGE_BATCH)))
            if not pks:
                break
            db.exec(sa.delete(m.Record).where(m.Record.pk.in_(pks)))
            removed += len(pks)
        if len(pks) < PURGE_BATCH:
            break
    return removed
