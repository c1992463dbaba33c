"""Syncers: users copied from another database's table (operations/syncers.py runs them)."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, check_destinations, check_port, check_range, fixed

# Casdoor's syncers have many more types (LDAP, WeCom, Okta...): any type is stored, the editor
# offers these two (the ones operations/syncers.py runs), and the list filters Database and LDAP
EDITOR_TYPES = ("Database", "Keycloak")
LIST_TYPES = ("Database", "LDAP")
DATABASE_TYPES = ("mysql", "postgres", "mssql", "oracle", "sqlite3")
SSL_MODES = ("disable", "allow", "prefer", "require", "verify-ca", "verify-full")  # PostgreSQL's sslmode
SSH_TYPES = ("none", "password", "cert")
SSH_DATABASES = ("mysql", "mssql", "postgres")  # the SSH options are shown for these alone
COLUMN_TYPES = ("string", "integer", "boolean")


def validate(db: Session, actor: Actor, row: m.Syncer) -> None:
    check_port(db, actor, row)
    check_range(row.ssh_port, 0, 65535, "SSH port")
    check_range(row.sync_interval, 0, None, "sync interval")
    check_destinations(row, hosts=(*(("host",) if row.database_type != "sqlite3" else ()),
                                   *(("ssh_host",) if row.ssh_type in ("password", "cert") else ())))
    columns = [c for c in row.table_columns if isinstance(c, dict)]
    if len(columns) != len(row.table_columns):
        raise ServiceError("Each table column must be an object")
    if columns and sum(1 for c in columns if c.get("isKey")) != 1:
        raise ServiceError("Exactly one table column must be the key")
    for column in columns:
        if column.get("type", "string") not in COLUMN_TYPES:
            raise ServiceError("The column type must be string, integer or boolean")
    # a sqlite3 database is a file of the server's own disk: the server's operators' alone
    if row.database_type == "sqlite3" and not actor.is_global_admin:
        raise ServiceError("Only a global admin may use a sqlite3 database")


RULES = KindRules(
    choices=(Choice("database_type", DATABASE_TYPES), Choice("ssl_mode", SSL_MODES),
             Choice("ssh_type", SSH_TYPES)),
    validate=validate,
    new=fixed(type="Database", databaseType="mysql", port=3306, syncInterval=10, isEnabled=False, isReadOnly=False),
    organization_as_owner=True)
