"""Syncer runs

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-24

- syncer.last_sync: when the scheduler last claimed the syncer's run (operations/syncers.py,
  docs/architecture.md "Scheduled work"); a conditional UPDATE of it claims a run, so that with
  several workers each run happens once.
- user (owner, external_id): a sync finds an organization's users by their upstream id (kept in
  externalId), a batch at a time.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from iam_console.models.base import UTCDateTime

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    # a plain ADD COLUMN: SQLite keeps the table and its row-count triggers (migration 0002)
    op.add_column("syncer", sa.Column("last_sync", UTCDateTime(), nullable=True))
    op.create_index("ix_user_owner_external_id", "user", ["owner", "external_id"])


def downgrade() -> None:
    op.drop_index("ix_user_owner_external_id", table_name="user")
    op.drop_column("syncer", "last_sync")
