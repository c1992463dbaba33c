"""A record's user holds a whole user id

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23

- record.user: the acting user's id, owner/name, is up to 201 characters (two 100-character
  names and the slash); VARCHAR(100) cut it short on MySQL and refused the write on
  PostgreSQL, so a write by a user with long names failed with a server error.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("record") as table:
        table.alter_column("user", existing_type=sa.String(length=100), type_=sa.String(length=255),
                           existing_nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("record") as table:
        table.alter_column("user", existing_type=sa.String(length=255), type_=sa.String(length=100),
                           existing_nullable=False)
