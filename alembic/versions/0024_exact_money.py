"""Exact money

Revision ID: 0024
Revises: 0023
Create Date: 2026-11-24

Every amount of money (prices, amounts, balances) becomes an integer count of millionths
(models/base.py Money; docs/architecture.md "Money"): BIGINT on PostgreSQL and MariaDB. SQLite keeps
its REAL columns, which hold whole numbers below 2**53 exactly, so its tables (and their row-count
and search triggers) stay as they are: only the values are scaled. Existing values are kept, rounded
to the millionth.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = {
    "product": ("price",),
    "payment": ("price",),
    "plan": ("price",),
    "transaction": ("amount",),
    "order": ("price",),
    "organization": ("org_balance", "user_balance", "balance_credit"),
    "user": ("balance", "balance_credit"),
}
SCALE = 1_000_000


def _scale(table: str, column: str, expression: str) -> None:
    quoted_table = op.get_bind().dialect.identifier_preparer.quote(table)
    op.execute(sa.text(f"UPDATE {quoted_table} SET {column} = {expression}"))


def upgrade() -> None:
    dialect = op.get_bind().dialect.name
    for table, columns in COLUMNS.items():
        for column in columns:
            if dialect == "postgresql":
                op.alter_column(table, column, type_=sa.BigInteger(), existing_nullable=False,
                                postgresql_using=f"round({column} * {SCALE})::bigint")
            elif dialect == "sqlite":
                _scale(table, column, f"round({column} * {SCALE})")
            else:
                _scale(table, column, f"round({column} * {SCALE})")
                op.alter_column(table, column, type_=sa.BigInteger(), existing_type=sa.Double(),
                                existing_nullable=False)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for table, columns in COLUMNS.items():
        for column in columns:
            if dialect == "postgresql":
                op.alter_column(table, column, type_=sa.Double(), existing_nullable=False,
                                postgresql_using=f"{column}::double precision / {SCALE}")
            elif dialect == "sqlite":
                _scale(table, column, f"{column} / {SCALE}.0")
            else:
                op.alter_column(table, column, type_=sa.Double(), existing_type=sa.BigInteger(),
                                existing_nullable=False)
                _scale(table, column, f"{column} / {SCALE}")
