"""SAML requests

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-24

- saml_request: the AuthnRequests this server sent to SAML providers (saml/saml_sp.py); a
  Response's InResponseTo must name one, and the ACS deletes it as it accepts the Response, so
  that a Response is accepted once.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op
from iam_console.models.base import UTCDateTime

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "saml_request",
        sa.Column("pk", sa.Integer(), primary_key=True),
        sa.Column("request_id", sa.String(100), nullable=False, server_default=""),
        sa.Column("provider_owner", sa.String(100), nullable=False, server_default=""),
        sa.Column("provider_name", sa.String(100), nullable=False, server_default=""),
        sa.Column("application", sa.String(100), nullable=False, server_default=""),
        sa.Column("return_to", sa.String(1000), nullable=False, server_default=""),
        sa.Column("created_time", UTCDateTime(), nullable=False),
        sa.Column("expires_at", UTCDateTime(), nullable=False),
        sa.UniqueConstraint("request_id", name="uq_saml_request_request_id"),
    )
    op.create_index("ix_saml_request_expires_at", "saml_request", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_saml_request_expires_at", table_name="saml_request")
    op.drop_table("saml_request")
