"""Webhook delivery: a signing secret per webhook and the delivery outbox

Revision ID: 0019
Revises: 0015
Create Date: 2026-11-24

- webhook.secret: the key of each delivery's HMAC-SHA256 signature header (docs/security.md,
  "Webhook signatures"); existing webhooks get a random one.
- webhook_event: the outbox and event log (operations/webhooks.py). A row is written in the same
  transaction as the record it carries; the delivery worker claims due rows (claim, lease_until)
  and keeps the outcome of the last attempt.
"""
import secrets
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

import iam_console.models.base

revision: str = "0019"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("webhook", schema=None) as batch_op:
        batch_op.add_column(sa.Column("secret", sa.String(length=100), nullable=False, server_default=""))
    with op.batch_alter_table("webhook", schema=None) as batch_op:
        batch_op.alter_column("secret", server_default=None)
    webhook = sa.table("webhook", sa.column("pk", sa.Integer), sa.column("secret", sa.String))
    connection = op.get_bind()
    for (pk,) in connection.execute(sa.select(webhook.c.pk)).all():
        connection.execute(webhook.update().where(webhook.c.pk == pk).values(secret=secrets.token_hex(24)))

    moment = iam_console.models.base.UTCDateTime(timezone=True)
    op.create_table(
        "webhook_event",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=100), nullable=False),
        sa.Column("name", sa.String(length=100), nullable=False),
        sa.Column("created_time", moment, nullable=False),
        sa.Column("updated_time", moment, nullable=True),
        sa.Column("webhook", sa.String(length=200), nullable=False),
        sa.Column("organization", sa.String(length=100), nullable=False),
        sa.Column("event_type", sa.String(length=100), nullable=False),
        sa.Column("state", sa.String(length=50), nullable=False),
        sa.Column("record_id", sa.Integer(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("extended_user", sa.Text(), nullable=False),
        sa.Column("attempt_count", sa.Integer(), nullable=False),
        sa.Column("max_retries", sa.Integer(), nullable=False),
        sa.Column("next_retry_time", moment, nullable=True),
        sa.Column("last_status_code", sa.Integer(), nullable=False),
        sa.Column("last_response", sa.Text(), nullable=False),
        sa.Column("last_error", sa.Text(), nullable=False),
        sa.Column("claim", sa.String(length=32), nullable=False),
        sa.Column("lease_until", moment, nullable=True),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("owner", "name", name="uq_webhook_event_owner_name"),
    )
    with op.batch_alter_table("webhook_event", schema=None) as batch_op:
        batch_op.create_index("ix_webhook_event_owner_created", ["owner", "created_time", "pk"], unique=False)
        batch_op.create_index("ix_webhook_event_created", ["created_time", "pk"], unique=False)
        batch_op.create_index("ix_webhook_event_due", ["state", "next_retry_time"], unique=False)
        batch_op.create_index("ix_webhook_event_organization", ["organization", "created_time", "pk"],
                              unique=False)
        batch_op.create_index("ix_webhook_event_webhook", ["webhook", "created_time", "pk"], unique=False)
        batch_op.create_index("ix_webhook_event_claim", ["claim"], unique=False)


def downgrade() -> None:
    op.drop_table("webhook_event")
    with op.batch_alter_table("webhook", schema=None) as batch_op:
        batch_op.drop_column("secret")
