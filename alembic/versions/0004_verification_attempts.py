"""What checking verification codes needs: a count of checks per code, and indexes

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-22

A code is void after a few checks (signin/verifications.py), so each
Verification row counts the checks made against it. The resend limit and the
check find a receiver's and a user's latest code by (receiver, time) and
(user, time). Plain ALTER TABLE, no batch copy: the table's row-count
triggers (migration 0002) must survive on SQLite.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("verification", sa.Column("attempts", sa.Integer(), nullable=False, server_default="0"))
    op.create_index("ix_verification_receiver_time", "verification", ["receiver", "time"])
    op.create_index("ix_verification_user_time", "verification", ["user", "time"])


def downgrade() -> None:
    op.drop_index("ix_verification_user_time", table_name="verification")
    op.drop_index("ix_verification_receiver_time", table_name="verification")
    if op.get_bind().dialect.name == "sqlite":  # SQLite 3.35+: no table copy, the triggers stay
        op.execute("ALTER TABLE verification DROP COLUMN attempts")
    else:
        op.drop_column("verification", "attempts")
