"""Token exchange, dynamic client registration, protected resources

Revision ID: 0029
Revises: 0028
Create Date: 2026-11-29

application.token_exchange_audiences: the audiences (client ids of the organization's applications,
resource URIs) the application may exchange tokens for (RFC 8693, oauth/exchange.py).
application.client_metadata: the RFC 7591 metadata a dynamically registered client gave, which its
registration answers echo (oauth/registration.py).
organization.protected_resources: the resource URIs the organization declares (RFC 8707 and RFC 9728,
oauth/resources.py).
organization.client_metadata_documents: whether clients whose client id is the URL of their metadata
document are taken (oauth/metadata_documents.py); false for every organization.
JSON columns, added nullable, filled with an empty value, then made NOT NULL: a JSON column takes no
default on every database.
"""
from collections.abc import Sequence

import sqlalchemy as sa

from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (("application", "token_exchange_audiences", []), ("application", "client_metadata", {}),
           ("organization", "protected_resources", []))


def upgrade() -> None:
    for table_name, column, empty in COLUMNS:
        with op.batch_alter_table(table_name) as table:
            table.add_column(sa.Column(column, sa.JSON(), nullable=True))
        op.execute(sa.table(table_name, sa.column(column, sa.JSON())).update().values({column: empty}))
        with op.batch_alter_table(table_name) as table:
            table.alter_column(column, existing_type=sa.JSON(), nullable=False)
    with op.batch_alter_table("organization") as table:
        table.add_column(sa.Column("client_metadata_documents", sa.Boolean(), nullable=False,
                                   server_default=sa.false()))


def downgrade() -> None:
    with op.batch_alter_table("organization") as table:
        table.drop_column("client_metadata_documents")
    for table_name, column, _ in COLUMNS:
        with op.batch_alter_table(table_name) as table:
            table.drop_column(column)
