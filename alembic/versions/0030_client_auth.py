"""Client authentication methods and authentication request parameters

Revision ID: 0030
Revises: 0029
Create Date: 2026-11-29

application.token_endpoint_auth_method, jwks_uri: how a client authenticates
(client_secret_basic/post, client_secret_jwt, private_key_jwt, none), and the URL of the public
keys of private_key_jwt when application.jwks (migration 0028) holds none (oauth/clients.py).
client_assertion keeps each used assertion's jti until it expires. auth_session.signin_method, token.auth_time, acr and requested_claims: what the ID token
says of the sign-in (auth_time, acr) and the claims the request asked for. Plain ADD COLUMNs with
empty defaults: existing applications keep the secret methods, existing sessions and tokens read as
"level unknown".
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from iam_console.models.base import UTCDateTime

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("application") as table:
        table.add_column(sa.Column("token_endpoint_auth_method", sa.String(length=100), nullable=False,
                                   server_default=""))
        table.add_column(sa.Column("jwks_uri", sa.String(length=500), nullable=False, server_default=""))
    with op.batch_alter_table("auth_session") as table:
        table.add_column(sa.Column("signin_method", sa.String(length=100), nullable=False, server_default=""))
    with op.batch_alter_table("token") as table:
        table.add_column(sa.Column("auth_time", sa.BigInteger(), nullable=False, server_default="0"))
        table.add_column(sa.Column("acr", sa.String(length=20), nullable=False, server_default=""))
        table.add_column(sa.Column("requested_claims", sa.Text(), nullable=False, server_default=""))
    op.create_table(
        "client_assertion",
        sa.Column("pk", sa.Integer(), nullable=False),
        sa.Column("jti_hash", sa.String(length=64), nullable=False),
        sa.Column("expires_at", UTCDateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("pk"),
        sa.UniqueConstraint("jti_hash", name="uq_client_assertion_jti_hash"),
    )
    op.create_index("ix_client_assertion_expires", "client_assertion", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_client_assertion_expires", table_name="client_assertion")
    op.drop_table("client_assertion")
    with op.batch_alter_table("token") as table:
        table.drop_column("requested_claims")
        table.drop_column("acr")
        table.drop_column("auth_time")
    with op.batch_alter_table("auth_session") as table:
        table.drop_column("signin_method")
    with op.batch_alter_table("application") as table:
        table.drop_column("jwks_uri")
        table.drop_column("token_endpoint_auth_method")
