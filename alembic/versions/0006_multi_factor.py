"""What multi-factor sign-in needs: pending sign-ins, setups in progress, throttles

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-22

- pending_signin: a sign-in whose password was right and whose second factor is owed,
  found by the SHA-256 of a short-lived cookie;
- mfa_setup: the secret the server chose at initiate, kept until enable (a client-sent
  secret is never trusted), with the hash of the recovery code shown then;
- throttle: counters of code checks per account and per client address, and marks of
  the TOTP time steps already used, each living until its `expires`.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import iam_console.models.base

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MOMENT = iam_console.models.base.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "pending_signin",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("owner", sa.String(length=100), nullable=False),
        sa.Column("user_name", sa.String(length=100), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=False),
        sa.Column("auto_signin", sa.Boolean(), nullable=False),
        sa.Column("signin_method", sa.String(length=100), nullable=False),
        sa.Column("created_time", MOMENT, nullable=False),
        sa.Column("expires_at", MOMENT, nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("token_hash", name="uq_pending_signin_token_hash"),
    )
    op.create_table(
        "mfa_setup",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=100), nullable=False),
        sa.Column("user_name", sa.String(length=100), nullable=False),
        sa.Column("mfa_type", sa.String(length=20), nullable=False),
        sa.Column("secret", sa.String(length=100), nullable=False),
        sa.Column("recovery_code_hash", sa.String(length=100), nullable=False),
        sa.Column("verified", sa.Boolean(), nullable=False),
        sa.Column("expires_at", MOMENT, nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("owner", "user_name", "mfa_type", name="uq_mfa_setup_user_type"),
    )
    op.create_table(
        "throttle",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("count", sa.Integer(), nullable=False),
        sa.Column("expires", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("key", name="uq_throttle_key"),
    )
    op.create_index("ix_throttle_expires", "throttle", ["expires"])


def downgrade() -> None:
    op.drop_index("ix_throttle_expires", table_name="throttle")
    op.drop_table("throttle")
    op.drop_table("mfa_setup")
    op.drop_table("pending_signin")
