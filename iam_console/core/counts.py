"""List totals from the maintained row counts (migration 0002), when a list is
filtered by owner alone: one indexed read instead of counting rows."""

from __future__ import annotations

from sqlmodel import Session, func, select

from iam_console.core.resources import REGISTRY
from iam_console.models import RowCount


def counted() -> frozenset[str]:
    """The tables whose rows per owner database triggers count (migration 0002): the kinds
    declared `counted`."""
    return frozenset(kind.model.__tablename__ for kind in REGISTRY.values() if kind.counted)


def total(db: Session, table: str, owner: str | None) -> int | None:
    """Rows of the table owned by `owner` (every owner when None); None if not counted."""
    if table not in counted():
        return None
    statement = select(func.coalesce(func.sum(RowCount.count), 0)).where(RowCount.table_name == table)
    if owner is not None:
        statement = statement.where(RowCount.owner == owner)
    return int(db.exec(statement).one())
