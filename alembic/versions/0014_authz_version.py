"""The authorization engine's change counter

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-24

- authz_version(scope, version): a counter per organization (and `*` for bulk writes naming
  none), raised in the transaction of every write to what its enforcers are built from; every
  worker reads it on each enforcement call and rebuilds a cached enforcer whose counter moved.
- authz_change(scope, version, adapter, op, rule): the policy lines each step of a counter
  added or removed, so that a worker a few steps behind applies them instead of rebuilding;
- casbin_rule.adapter now names the adapter's table within its organization (`owner/table`);
  no earlier version wrote policy lines, so there is nothing to convert.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "authz_version",
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("scope"),
    )
    op.create_table(
        "authz_change",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("scope", sa.String(length=100), nullable=False),
        sa.Column("version", sa.BigInteger(), nullable=False),
        sa.Column("adapter", sa.String(length=200), nullable=False),
        sa.Column("op", sa.String(length=10), nullable=False),
        sa.Column("rule", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
    )
    with op.batch_alter_table("authz_change") as table:
        table.create_index("ix_authz_change_scope_version", ["scope", "version"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("authz_change") as table:
        table.drop_index("ix_authz_change_scope_version")
    op.drop_table("authz_change")
    op.drop_table("authz_version")
