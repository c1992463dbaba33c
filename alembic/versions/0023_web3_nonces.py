"""Wallet sign-in nonces

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-24

web3_nonce keeps each nonce issued for a wallet sign-in (federation/wallet.py), found by its
SHA-256: bound to an application, a Web3 provider and an address, used once, void after 5 minutes.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from iam_console.models.base import UTCDateTime

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "web3_nonce",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("nonce_hash", sa.String(length=64), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=False),
        sa.Column("provider", sa.String(length=100), nullable=False),
        sa.Column("address", sa.String(length=42), nullable=False),
        sa.Column("typed_data", sa.Text(), nullable=False),
        sa.Column("client_ip", sa.String(length=100), nullable=False),
        sa.Column("created_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("nonce_hash", name="uq_web3_nonce_nonce_hash"),
    )
    op.create_index("ix_web3_nonce_expires", "web3_nonce", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_web3_nonce_expires", table_name="web3_nonce")
    op.drop_table("web3_nonce")
