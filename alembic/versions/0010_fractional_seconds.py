"""Fractions of a second in every time column on MySQL and MariaDB

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

A createdTime a client gives ("2026-11-23T10:20:30.123Z") is kept to the
microsecond. SQLite and PostgreSQL already keep fractions; MySQL's DATETIME
drops them unless declared DATETIME(6). Downgrading truncates nothing that
the server itself wrote (its own times are whole seconds).
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _datetime_columns(precision: int) -> list[tuple[str, str, bool]]:
    """(table, column, nullable) of every DATETIME column of this schema with another precision."""
    rows = op.get_bind().execute(sa.text(
        "SELECT table_name, column_name, is_nullable FROM information_schema.columns "
        "WHERE table_schema = DATABASE() AND data_type = 'datetime' AND datetime_precision <> :precision "
        "AND table_name <> 'alembic_version'"), {"precision": precision})
    return [(table, column, nullable == "YES") for table, column, nullable in rows]


def _set_precision(precision: int) -> None:
    if op.get_bind().dialect.name not in ("mysql", "mariadb"):
        return
    for table, column, nullable in _datetime_columns(precision):
        op.execute(sa.text(f"ALTER TABLE `{table}` MODIFY `{column}` DATETIME({precision})"
                           f"{'' if nullable else ' NOT NULL'}"))


def upgrade() -> None:
    _set_precision(6)


def downgrade() -> None:
    _set_precision(0)
