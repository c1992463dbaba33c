"""Group membership as a table, kept by triggers from the users' `groups` lists

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-22

- user_group(group_id, user_pk): one row per entry "owner/name" of a user's
  `groups` list that names a group of the user's own organization (the users of
  a group are users of its organization, as in Casdoor), so that a group's users
  and their count are an index range (docs/performance.md, 'Users of a group');
- triggers on "user" keep it after every insert, update of groups or owner, and
  delete, whatever wrote the row (ORM, bulk Core inserts, raw SQL); the list stays
  the one source of truth. Entries that are not strings, or are longer than the
  column, are skipped (no group has such an id);
- the table is filled from the existing users.
"""
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import mysql

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LENGTH = 255  # iam_console.identity.tables.GROUP_ID_LENGTH, frozen here


def _sqlite_members(row: str, table: str = "") -> str:
    """SELECT (group_id, user_pk) for the user `row`: NEW, or the alias of `table`."""
    return (f"SELECT DISTINCT j.value, {row}.pk FROM {table}json_each({row}.\"groups\") AS j "
            f"WHERE json_type({row}.\"groups\") = 'array' AND j.type = 'text' AND length(j.value) <= {LENGTH} "
            f"AND substr(j.value, 1, length({row}.owner) + 1) = {row}.owner || '/'")


def _postgres_members(row: str, table: str = "") -> str:
    # the column is json (0001): non-arrays read as an empty list rather than failing the write
    return (f"SELECT DISTINCT e #>> '{{}}', {row}.pk FROM {table}json_array_elements(CASE WHEN json_typeof({row}.groups) "
            f"= 'array' THEN {row}.groups ELSE '[]'::json END) AS e WHERE json_typeof(e) = 'string' "
            f"AND length(e #>> '{{}}') <= {LENGTH} AND starts_with(e #>> '{{}}', {row}.owner || '/')")


def _mysql_members(row: str, table: str = "") -> str:
    # JSON_TABLE has no type column: the ordinality finds each element's JSON_TYPE;
    # utf8mb4_bin keeps "acme/Dev" and "acme/dev" apart, as the other databases do
    value = f"JSON_EXTRACT({row}.`groups`, CONCAT('$[', j.i - 1, ']'))"
    return (f"SELECT DISTINCT j.g, {row}.pk FROM {table}JSON_TABLE({row}.`groups`, '$[*]' COLUMNS ("
            f"i FOR ORDINALITY, g VARCHAR({LENGTH}) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin PATH '$')) AS j "
            f"WHERE JSON_TYPE({row}.`groups`) = 'ARRAY' AND JSON_TYPE({value}) = 'STRING' "
            f"AND CHAR_LENGTH(JSON_UNQUOTE({value})) <= {LENGTH} "
            f"AND LEFT(j.g, CHAR_LENGTH({row}.owner) + 1) = CONCAT({row}.owner, '/') COLLATE utf8mb4_bin")


def _sqlite() -> list[str]:
    insert = f"INSERT INTO user_group(group_id, user_pk) {_sqlite_members('NEW')};"
    drop = "DELETE FROM user_group WHERE user_pk = OLD.pk;"
    return [
        f'CREATE TRIGGER user_group_insert AFTER INSERT ON "user" BEGIN {insert} END',
        f'CREATE TRIGGER user_group_update AFTER UPDATE OF "groups", owner ON "user" BEGIN {drop} {insert} END',
        f'CREATE TRIGGER user_group_delete AFTER DELETE ON "user" BEGIN {drop} END',
        "INSERT INTO user_group(group_id, user_pk) " + _sqlite_members("u", '"user" AS u, '),
    ]


def _postgres() -> list[str]:
    # inserts and deletes per statement, from the transition tables (one call for a bulk
    # insert); an update per row, as transition tables cannot go with a column list
    inserted = _postgres_members("n", "inserted_rows AS n, ")
    return [
        f"""CREATE OR REPLACE FUNCTION user_group_inserted() RETURNS trigger AS $$
BEGIN
  INSERT INTO user_group(group_id, user_pk) {inserted};
  RETURN NULL;
END $$ LANGUAGE plpgsql""",
        """CREATE OR REPLACE FUNCTION user_group_deleted() RETURNS trigger AS $$
BEGIN
  DELETE FROM user_group WHERE user_pk IN (SELECT pk FROM deleted_rows);
  RETURN NULL;
END $$ LANGUAGE plpgsql""",
        f"""CREATE OR REPLACE FUNCTION user_group_updated() RETURNS trigger AS $$
BEGIN
  DELETE FROM user_group WHERE user_pk = OLD.pk;
  INSERT INTO user_group(group_id, user_pk) {_postgres_members('NEW')};
  RETURN NULL;
END $$ LANGUAGE plpgsql""",
        'CREATE TRIGGER user_group_insert AFTER INSERT ON "user" REFERENCING NEW TABLE AS inserted_rows '
        "FOR EACH STATEMENT EXECUTE FUNCTION user_group_inserted()",
        'CREATE TRIGGER user_group_delete AFTER DELETE ON "user" REFERENCING OLD TABLE AS deleted_rows '
        "FOR EACH STATEMENT EXECUTE FUNCTION user_group_deleted()",
        'CREATE TRIGGER user_group_update AFTER UPDATE OF groups, owner ON "user" FOR EACH ROW '
        "WHEN (OLD.groups::text IS DISTINCT FROM NEW.groups::text OR OLD.owner IS DISTINCT FROM NEW.owner) "
        "EXECUTE FUNCTION user_group_updated()",
        "INSERT INTO user_group(group_id, user_pk) " + _postgres_members("u", '"user" AS u, '),
        # statistics now rather than at autovacuum's next pass: without them the planner takes a
        # large group for a few rows and drives its page from the table (seconds at 500,000 members)
        "ANALYZE user_group",
    ]


def _mysql() -> list[str]:
    insert = f"INSERT INTO user_group(group_id, user_pk) {_mysql_members('NEW')}"
    drop = "DELETE FROM user_group WHERE user_pk = OLD.pk"
    changed = ("NOT (CAST(OLD.`groups` AS BINARY) <=> CAST(NEW.`groups` AS BINARY)) "
               "OR NOT (CAST(OLD.owner AS BINARY) <=> CAST(NEW.owner AS BINARY))")
    return [
        f"CREATE TRIGGER user_group_insert AFTER INSERT ON `user` FOR EACH ROW {insert}",
        f"CREATE TRIGGER user_group_update AFTER UPDATE ON `user` FOR EACH ROW "
        f"BEGIN IF {changed} THEN {drop}; {insert}; END IF; END",
        f"CREATE TRIGGER user_group_delete AFTER DELETE ON `user` FOR EACH ROW {drop}",
        "INSERT INTO user_group(group_id, user_pk) " + _mysql_members("u", "`user` AS u, "),
    ]


def upgrade() -> None:
    op.create_table(
        "user_group",
        sa.Column("group_id", sa.String(LENGTH).with_variant(
            mysql.VARCHAR(LENGTH, collation="utf8mb4_bin"), "mysql", "mariadb"), primary_key=True),
        sa.Column("user_pk", sa.Integer(), primary_key=True, autoincrement=False),
    )
    op.create_index("ix_user_group_user_pk", "user_group", ["user_pk"])
    dialect = op.get_bind().dialect.name
    for statement in {"sqlite": _sqlite, "postgresql": _postgres}.get(dialect, _mysql)():
        op.execute(statement)


def downgrade() -> None:
    dialect = op.get_bind().dialect.name
    for name in ("insert", "update", "delete"):
        if dialect == "postgresql":
            op.execute(f'DROP TRIGGER IF EXISTS user_group_{name} ON "user"')
        else:
            op.execute(f"DROP TRIGGER IF EXISTS user_group_{name}")
    if dialect == "postgresql":
        for function in ("user_group_inserted", "user_group_deleted", "user_group_updated"):
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    op.drop_index("ix_user_group_user_pk", table_name="user_group")
    op.drop_table("user_group")
