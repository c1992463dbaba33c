"""Indexes for the records' filters

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-24

- record: one index per filter of the records list (user, action and method; organization and
  the time range had theirs), each ending in the list's order (created_time, pk), so that a
  filtered page is an index range read and its count an index range count.

Creating an index changes no table: SQLite keeps the table and its row-count triggers
(migration 0002) as they are.
"""
from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_record_user_created", "record", ["user", "created_time", "pk"])
    op.create_index("ix_record_action_created", "record", ["action", "created_time", "pk"],
                    mysql_length={"action": 255})
    op.create_index("ix_record_method_created", "record", ["method", "created_time", "pk"])


def downgrade() -> None:
    op.drop_index("ix_record_method_created", table_name="record")
    op.drop_index("ix_record_action_created", table_name="record")
    op.drop_index("ix_record_user_created", table_name="record")
