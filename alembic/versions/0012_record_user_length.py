"""A record's user holds a whole user id

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-23

- record.user: the acting user's id, owner/name, is up to 201 characters (two 100-character
  names and the slash); VARCHAR(100) cut it short on MySQL and refused the write on
  PostgreSQL, so a write by a user with long names failed with a server error.

PostgreSQL and MySQL widen the column in place. SQLite changes a column by copying the
table, which drops the table's row-count triggers (migration 0002): they are read before the
copy and created again after it.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _resize(old: int, new: int) -> None:
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        op.alter_column("record", "user", existing_type=sa.String(length=old), type_=sa.String(length=new),
                        existing_nullable=False)
        return
    triggers = bind.execute(sa.text(
        "SELECT sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'record'")).scalars().all()
    with op.batch_alter_table("record") as table:
        table.alter_column("user", existing_type=sa.String(length=old), type_=sa.String(length=new),
                           existing_nullable=False)
    for trigger in triggers:
        op.execute(trigger)


def upgrade() -> None:
    _resize(100, 255)


def downgrade() -> None:
    # ids longer than 100 characters are cut: the narrower column cannot hold them
    record = sa.table("record", sa.column("user", sa.String))
    op.execute(record.update().where(sa.func.length(record.c.user) > 100)
               .values(user=sa.func.substr(record.c.user, 1, 100)))
    _resize(255, 100)
