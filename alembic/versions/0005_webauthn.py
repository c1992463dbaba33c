"""WebAuthn ceremonies

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-22

webauthn_challenge keeps each challenge the server sent, found by the hash of a
random cookie, until it expires: used once, and counted per client address
(signin/webauthn.py).
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from iam_console.models.base import UTCDateTime

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "webauthn_challenge",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("purpose", sa.String(length=20), nullable=False),
        sa.Column("challenge", sa.String(length=100), nullable=False),
        sa.Column("owner", sa.String(length=100), nullable=False),
        sa.Column("user_name", sa.String(length=100), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=False),
        sa.Column("session_id", sa.String(length=100), nullable=False),
        sa.Column("client_ip", sa.String(length=100), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.Column("used", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("token_hash", name="uq_webauthn_challenge_token_hash"),
    )
    op.create_index("ix_webauthn_challenge_expires", "webauthn_challenge", ["expires_at"])
    op.create_index("ix_webauthn_challenge_ip", "webauthn_challenge", ["client_ip", "expires_at"])


def downgrade() -> None:
    op.drop_index("ix_webauthn_challenge_ip", table_name="webauthn_challenge")
    op.drop_index("ix_webauthn_challenge_expires", table_name="webauthn_challenge")
    op.drop_table("webauthn_challenge")
