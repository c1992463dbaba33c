"""Logout

Revision ID: 0027
Revises: 0026
Create Date: 2026-11-29

OpenID Back-Channel and Front-Channel Logout 1.0 (oauth/logout.py): the application's
backchannel_logout_session_required and frontchannel_logout_uri (backchannel_logout_uri was
there already), and token.sid, the browser session a grant was given in, indexed: a logout
finds the applications of its session by it. Plain ADD COLUMNs with empty defaults: earlier
tokens belong to no session, earlier applications take no logout notice.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("application") as table:
        table.add_column(sa.Column("backchannel_logout_session_required", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))
        table.add_column(sa.Column("frontchannel_logout_uri", sa.String(length=500), nullable=False,
                                   server_default=""))
    with op.batch_alter_table("token") as table:
        table.add_column(sa.Column("sid", sa.String(length=100), nullable=False, server_default=""))
        table.create_index("ix_token_sid", ["sid"])


def downgrade() -> None:
    with op.batch_alter_table("token") as table:
        table.drop_index("ix_token_sid")
        table.drop_column("sid")
    with op.batch_alter_table("application") as table:
        table.drop_column("frontchannel_logout_uri")
        table.drop_column("backchannel_logout_session_required")
