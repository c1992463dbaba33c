"""Upstream identity providers' sign-ins under way

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-24

upstream_state keeps each sign-in at an upstream OAuth 2.0 / OpenID Connect provider from its
start to its callback (federation/upstream.py): found by the hash of the state, bound to the hash of
the browser's cookie, used once, with the PKCE verifier and the authorization request it answers.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from iam_console.models.base import UTCDateTime

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "upstream_state",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("state_hash", sa.String(length=64), nullable=False),
        sa.Column("browser_hash", sa.String(length=64), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=False),
        sa.Column("provider", sa.String(length=100), nullable=False),
        sa.Column("method", sa.String(length=20), nullable=False),
        sa.Column("user", sa.String(length=201), nullable=False),
        sa.Column("code_verifier", sa.String(length=128), nullable=False),
        sa.Column("nonce", sa.String(length=64), nullable=False),
        sa.Column("authorize_query", sa.Text(), nullable=False),
        sa.Column("return_to", sa.String(length=500), nullable=False),
        sa.Column("used", sa.Boolean(), nullable=False),
        sa.Column("error_id", sa.String(length=64), nullable=False),
        sa.Column("error", sa.String(length=500), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("state_hash", name="uq_upstream_state_state_hash"),
    )
    op.create_index("ix_upstream_state_expires", "upstream_state", ["expires_at"])
    op.create_index("ix_upstream_state_error_id", "upstream_state", ["error_id"])


def downgrade() -> None:
    op.drop_index("ix_upstream_state_error_id", table_name="upstream_state")
    op.drop_index("ix_upstream_state_expires", table_name="upstream_state")
    op.drop_table("upstream_state")
