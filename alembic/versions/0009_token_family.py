"""Refresh token families

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-23

- token.family: the name of the first row of a chain of refresh rotations, so that
  replaying a rotated refresh token revokes every row of its chain; existing rows
  start a chain of their own;
- token.public_client: the chain began without the client's secret (a PKCE-only
  code exchange, the device flow), so its refresh needs none; existing rows are
  taken as confidential (their refresh needs the client's secret).
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("token") as table:
        table.add_column(sa.Column("family", sa.String(length=100), nullable=False, server_default=""))
        table.add_column(sa.Column("public_client", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(sa.text("UPDATE token SET family = name"))
    with op.batch_alter_table("token") as table:
        table.create_index("ix_token_family", ["family"])


def downgrade() -> None:
    with op.batch_alter_table("token") as table:
        table.drop_index("ix_token_family")
        table.drop_column("public_client")
        table.drop_column("family")
