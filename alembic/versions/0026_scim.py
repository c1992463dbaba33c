"""The group's external id

Revision ID: 0026
Revises: 0025
Create Date: 2026-11-29

group.external_id: the identifier a SCIM provisioning client gives a group (its `externalId`),
kept as users keep theirs (docs/api.md, "SCIM 2.0"). A plain ADD COLUMN with an empty
default: existing groups have none.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("group") as table:
        table.add_column(sa.Column("external_id", sa.String(length=100), nullable=False, server_default=""))


def downgrade() -> None:
    with op.batch_alter_table("group") as table:
        table.drop_column("external_id")
