"""The ticket table, on the tickets extension's own branch (docs/extending.md, "Migrations")."""

import sqlalchemy as sa

from alembic import op
from iam_console.models.base import UTCDateTime

revision = "t001"
down_revision = None
branch_labels = ("tickets",)
depends_on = None


def upgrade() -> None:
    op.create_table(
        "ticket",
        sa.Column("pk", sa.Integer(), primary_key=True),
        sa.Column("owner", sa.String(100), nullable=False, server_default=""),
        sa.Column("name", sa.String(100), nullable=False, server_default=""),
        sa.Column("created_time", UTCDateTime(), nullable=False),
        sa.Column("updated_time", UTCDateTime(), nullable=True),
        sa.Column("display_name", sa.String(100), nullable=False, server_default=""),
        sa.Column("user", sa.String(100), nullable=False, server_default=""),
        sa.Column("title", sa.String(200), nullable=False, server_default=""),
        sa.Column("content", sa.Text(), nullable=False),
        sa.Column("state", sa.String(50), nullable=False, server_default=""),
        sa.Column("messages", sa.JSON(), nullable=False),
        sa.UniqueConstraint("owner", "name", name="uq_ticket_owner_name"),
    )
    op.create_index("ix_ticket_owner_created", "ticket", ["owner", "created_time", "pk"])
    op.create_index("ix_ticket_created", "ticket", ["created_time", "pk"])


def downgrade() -> None:
    op.drop_index("ix_ticket_created", table_name="ticket")
    op.drop_index("ix_ticket_owner_created", table_name="ticket")
    op.drop_table("ticket")
