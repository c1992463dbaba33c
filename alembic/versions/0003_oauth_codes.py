"""What an authorization in progress must remember until its code is exchanged

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-22

A Token row is written when a code (or a device code) is issued and becomes the
token when it is exchanged; it keeps the OpenID nonce and the redirect URI the
code was issued for, and the user code a device authorization is approved with.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("token") as table:
        table.add_column(sa.Column("nonce", sa.String(length=255), nullable=False, server_default=""))
        table.add_column(sa.Column("redirect_uri", sa.String(length=1000), nullable=False, server_default=""))
        table.add_column(sa.Column("user_code", sa.String(length=20), nullable=False, server_default=""))
        table.create_index("ix_token_user_code", ["user_code"])


def downgrade() -> None:
    with op.batch_alter_table("token") as table:
        table.drop_index("ix_token_user_code")
        table.drop_column("user_code")
        table.drop_column("redirect_uri")
        table.drop_column("nonce")
