"""The probe extension's first revision (tests/unit/test_extension.py): a table of its own.

Revision ID: p001
Revises:
Create Date: 2026-11-29
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "p001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = ("probe",)
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table("probe_note", sa.Column("pk", sa.Integer(), primary_key=True),
                    sa.Column("text", sa.String(100), nullable=False, server_default=""))


def downgrade() -> None:
    op.drop_table("probe_note")
