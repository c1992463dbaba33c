"""Maintained row counts and trigram search for the lists at scale

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-22

- row_count(table_name, owner, count), kept by triggers on the tables whose
  lists grow large, so a list's total is one indexed read (docs/performance.md);
- the users' search columns get a trigram index: an FTS5 table on SQLite,
  pg_trgm GIN indexes on PostgreSQL (MySQL keeps LIKE).
The table lists are frozen here, as a migration must be.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COUNTED = ("user", "group", "invitation", "record", "verification", "session", "resource", "role", "permission",
           "product", "payment", "subscription", "transaction", "order")
USER_SEARCH = ("name", "display_name", "email", "phone")


def _sqlite_triggers(table: str) -> list[str]:
    upsert = (f"INSERT INTO row_count(table_name, owner, count) VALUES ('{table}', NEW.owner, 1) "
              "ON CONFLICT(table_name, owner) DO UPDATE SET count = count + 1;")
    minus = f"UPDATE row_count SET count = count - 1 WHERE table_name = '{table}' AND owner = OLD.owner;"
    return [
        f'CREATE TRIGGER rc_{table}_insert AFTER INSERT ON "{table}" BEGIN {upsert} END',
        f'CREATE TRIGGER rc_{table}_delete AFTER DELETE ON "{table}" BEGIN {minus} END',
        f'CREATE TRIGGER rc_{table}_owner AFTER UPDATE OF owner ON "{table}" WHEN OLD.owner <> NEW.owner '
        f"BEGIN {minus} {upsert} END",
    ]


def _mysql_triggers(table: str) -> list[str]:
    upsert = (f"INSERT INTO row_count(table_name, owner, count) VALUES ('{table}', NEW.owner, 1) "
              "ON DUPLICATE KEY UPDATE count = count + 1")
    minus = f"UPDATE row_count SET count = count - 1 WHERE table_name = '{table}' AND owner = OLD.owner"
    return [
        f"CREATE TRIGGER rc_{table}_insert AFTER INSERT ON `{table}` FOR EACH ROW {upsert}",
        f"CREATE TRIGGER rc_{table}_delete AFTER DELETE ON `{table}` FOR EACH ROW {minus}",
        f"CREATE TRIGGER rc_{table}_owner AFTER UPDATE ON `{table}` FOR EACH ROW "
        f"BEGIN IF OLD.owner <> NEW.owner THEN {minus}; {upsert}; END IF; END",
    ]


# PostgreSQL: INSERT and DELETE count per statement, from the transition tables.
# Row by row, a bulk insert in one transaction would rewrite the same counter row
# once per row, and each rewrite walks all earlier versions of it: quadratic.
POSTGRES_FUNCTIONS = [
    """
CREATE OR REPLACE FUNCTION row_count_inserted() RETURNS trigger AS $$
BEGIN
  INSERT INTO row_count(table_name, owner, count)
  SELECT TG_TABLE_NAME, owner, count(*) FROM inserted_rows GROUP BY owner
  ON CONFLICT (table_name, owner) DO UPDATE SET count = row_count.count + EXCLUDED.count;
  RETURN NULL;
END $$ LANGUAGE plpgsql
""",
    """
CREATE OR REPLACE FUNCTION row_count_deleted() RETURNS trigger AS $$
BEGIN
  UPDATE row_count SET count = row_count.count - gone.n
  FROM (SELECT owner, count(*) AS n FROM deleted_rows GROUP BY owner) AS gone
  WHERE row_count.table_name = TG_TABLE_NAME AND row_count.owner = gone.owner;
  RETURN NULL;
END $$ LANGUAGE plpgsql
""",
    """
CREATE OR REPLACE FUNCTION row_count_moved() RETURNS trigger AS $$
BEGIN
  UPDATE row_count SET count = count - 1 WHERE table_name = TG_TABLE_NAME AND owner = OLD.owner;
  INSERT INTO row_count(table_name, owner, count) VALUES (TG_TABLE_NAME, NEW.owner, 1)
  ON CONFLICT (table_name, owner) DO UPDATE SET count = row_count.count + 1;
  RETURN NULL;
END $$ LANGUAGE plpgsql
""",
]


def _postgres_triggers(table: str) -> list[str]:
    return [
        f'CREATE TRIGGER rc_{table}_insert AFTER INSERT ON "{table}" REFERENCING NEW TABLE AS inserted_rows '
        "FOR EACH STATEMENT EXECUTE FUNCTION row_count_inserted()",
        f'CREATE TRIGGER rc_{table}_delete AFTER DELETE ON "{table}" REFERENCING OLD TABLE AS deleted_rows '
        "FOR EACH STATEMENT EXECUTE FUNCTION row_count_deleted()",
        # owners rarely change; a statement trigger cannot be limited to one column's updates
        f'CREATE TRIGGER rc_{table}_owner AFTER UPDATE OF owner ON "{table}" '
        "FOR EACH ROW WHEN (OLD.owner IS DISTINCT FROM NEW.owner) EXECUTE FUNCTION row_count_moved()",
    ]


def _sqlite_search() -> list[str]:
    columns = ", ".join(USER_SEARCH)
    new = ", ".join(f"NEW.{c}" for c in USER_SEARCH)
    old = ", ".join(f"OLD.{c}" for c in USER_SEARCH)
    drop = f"INSERT INTO user_search(user_search, rowid, {columns}) VALUES ('delete', OLD.pk, {old});"
    add = f"INSERT INTO user_search(rowid, {columns}) VALUES (NEW.pk, {new});"
    return [
        f"CREATE VIRTUAL TABLE user_search USING fts5({columns}, content='user', content_rowid='pk', "
        "tokenize='trigram')",
        f'CREATE TRIGGER user_search_insert AFTER INSERT ON "user" BEGIN {add} END',
        f'CREATE TRIGGER user_search_delete AFTER DELETE ON "user" BEGIN {drop} END',
        f'CREATE TRIGGER user_search_update AFTER UPDATE OF {columns} ON "user" BEGIN {drop} {add} END',
        "INSERT INTO user_search(user_search) VALUES ('rebuild')",
    ]


def _postgres_search(bind) -> list[str]:
    # pg_trgm needs the right to create an extension; without it, search stays a plain ILIKE
    nested = bind.begin_nested()
    try:
        bind.execute(sa.text("CREATE EXTENSION IF NOT EXISTS pg_trgm"))
        nested.commit()
    except sa.exc.DBAPIError:
        nested.rollback()
        return []
    return [f'CREATE INDEX ix_user_{c}_trgm ON "user" USING gin ({c} gin_trgm_ops)' for c in USER_SEARCH]


def upgrade() -> None:
    op.create_table(
        "row_count",
        sa.Column("table_name", sa.String(64), primary_key=True),
        sa.Column("owner", sa.String(100), primary_key=True),
        sa.Column("count", sa.BigInteger(), nullable=False),
    )
    bind = op.get_bind()
    dialect = bind.dialect.name
    statements: list[str] = []
    if dialect == "postgresql":
        statements.extend(POSTGRES_FUNCTIONS)
    for table in COUNTED:
        quoted = f"`{table}`" if dialect in ("mysql", "mariadb") else f'"{table}"'
        statements.append(f"INSERT INTO row_count(table_name, owner, count) "
                          f"SELECT '{table}', owner, count(*) FROM {quoted} GROUP BY owner")
        statements.extend({"sqlite": _sqlite_triggers, "postgresql": _postgres_triggers}.get(
            dialect, _mysql_triggers)(table))
    if dialect == "sqlite":
        statements.extend(_sqlite_search())
    elif dialect == "postgresql":
        statements.extend(_postgres_search(bind))
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    bind = op.get_bind()
    dialect = bind.dialect.name
    if dialect == "sqlite":
        for name in ("insert", "delete", "update"):
            op.execute(f"DROP TRIGGER IF EXISTS user_search_{name}")
        op.execute("DROP TABLE IF EXISTS user_search")
    elif dialect == "postgresql":
        for column in USER_SEARCH:
            op.execute(f"DROP INDEX IF EXISTS ix_user_{column}_trgm")
    for table in COUNTED:
        quoted = f"`{table}`" if dialect in ("mysql", "mariadb") else f'"{table}"'
        for name in ("insert", "delete", "owner"):
            if dialect == "postgresql":
                op.execute(f"DROP TRIGGER IF EXISTS rc_{table}_{name} ON {quoted}")
            else:
                op.execute(f"DROP TRIGGER IF EXISTS rc_{table}_{name}")
    if dialect == "postgresql":
        for function in ("row_count_inserted", "row_count_deleted", "row_count_moved"):
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    op.drop_table("row_count")
