"""The maintained row counts: how many rows a table holds per owner, kept by database triggers
(migration 0002) so that every write path, bulk SQL included, keeps them right and a list's total
never counts a million rows."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from iam_console.models.base import text


class RowCount(SQLModel, table=True):
    """How many rows a table holds per owner; kept by database triggers
    (migration 0002), so every write path, bulk SQL included, keeps it right."""

    __tablename__ = "row_count"

    table_name: str = text(64, primary_key=True)
    owner: str = text(100, primary_key=True)
    count: int = Field(default=0, sa_type=sa.BigInteger, nullable=False)
