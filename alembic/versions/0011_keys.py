"""API keys

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-23

- key: Casdoor's Key, an access key and secret acting as its user or its application's
  client; the secret is kept as its SHA-256, and the access key is unique.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import iam_console.models.base

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIME = iam_console.models.base.UTCDateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "key",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("created_time", TIME, nullable=False),
        sa.Column("updated_time", TIME, nullable=True),
        sa.Column("display_name", sa.String(length=100), nullable=False),
        sa.Column("type", sa.String(length=100), nullable=False),
        sa.Column("organization", sa.String(length=100), nullable=False),
        sa.Column("application", sa.String(length=100), nullable=False),
        sa.Column("user", sa.String(length=100), nullable=False),
        sa.Column("access_key", sa.String(length=100), nullable=False),
        sa.Column("access_secret", sa.String(length=100), nullable=False),
        sa.Column("expire_time", TIME, nullable=True),
        sa.Column("state", sa.String(length=100), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("owner", "name", name="uq_key_owner_name"),
        sa.UniqueConstraint("access_key", name="uq_key_access_key"),
    )
    with op.batch_alter_table("key") as table:
        table.create_index("ix_key_created", ["created_time", "pk"], unique=False)
        table.create_index("ix_key_owner_created", ["owner", "created_time", "pk"], unique=False)


def downgrade() -> None:
    op.drop_table("key")
