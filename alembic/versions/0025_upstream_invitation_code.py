"""Upstream invitation code

Revision ID: 0025
Revises: 0024
Create Date: 2026-11-24

upstream_state.invitation_code: the sign-up page's invitation code, carried by a provider button
through the upstream flow to the sign-up it opens (federation/federation.py). A plain ADD COLUMN with
an empty default: rows of flows under way read as "no code".
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("upstream_state") as table:
        table.add_column(sa.Column("invitation_code", sa.String(length=100), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("upstream_state") as table:
        table.drop_column("invitation_code")
