"""PAR, JAR and DPoP

Revision ID: 0028
Revises: 0027
Create Date: 2026-11-29

- pushed_request: the authorization requests clients pushed (RFC 9126, oauth/pushed.py), found by
  the hash of their request_uri, used once.
- application.require_pushed_authorization_requests, require_dpop, require_dpop_nonce: the
  application's options (docs/api.md "Standards"); plain ADD COLUMNs, false for every application.
- application.jwks: the client's public keys (a JWK Set) that verify its request objects (RFC 9101).
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

OPTIONS = ("require_pushed_authorization_requests", "require_dpop", "require_dpop_nonce")


def upgrade() -> None:
    op.create_table(
        "pushed_request",
        sa.Column("pk", sa.Integer(), primary_key=True),
        sa.Column("uri_hash", sa.String(64), nullable=False, server_default=""),
        sa.Column("application", sa.String(100), nullable=False, server_default=""),
        sa.Column("parameters", sa.JSON(), nullable=False),
        sa.Column("expires", sa.BigInteger(), nullable=False, server_default="0"),
        sa.Column("opened", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.Column("used", sa.Boolean(), nullable=False, server_default=sa.false()),
        sa.UniqueConstraint("uri_hash", name="uq_pushed_request_uri_hash"),
    )
    op.create_index("ix_pushed_request_expires", "pushed_request", ["expires"])
    with op.batch_alter_table("application") as table:
        for name in OPTIONS:
            table.add_column(sa.Column(name, sa.Boolean(), nullable=False, server_default=sa.false()))
        table.add_column(sa.Column("jwks", sa.JSON(), nullable=True))
    op.execute("UPDATE application SET jwks = '{}'")
    with op.batch_alter_table("application") as table:
        table.alter_column("jwks", existing_type=sa.JSON(), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("application") as table:
        table.drop_column("jwks")
        for name in OPTIONS:
            table.drop_column(name)
    op.drop_index("ix_pushed_request_expires", table_name="pushed_request")
    op.drop_table("pushed_request")
