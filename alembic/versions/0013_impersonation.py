"""Impersonation

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-23

- auth_session.impersonator: the global admin (owner/name) acting as the session's user;
  empty for every session a user opened themselves.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("auth_session") as table:
        table.add_column(sa.Column("impersonator", sa.String(length=200), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("auth_session") as table:
        table.drop_column("impersonator")
