"""Casbin adapters: where an enforcer's policies are stored (authorization/policy_store.py)."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.authorization.policy_store import DRIVERS
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import BUILT_IN_CASBIN, Choice, KindRules, check_destinations, check_port, fixed

TYPES = ("Database",)
# the servers policy_store reaches through SQLAlchemy, and a SQLite file
DATABASE_TYPES = (*DRIVERS, "sqlite3")
DEFAULT_PORT = 3306


def validate(db: Session, actor: Actor, row: m.Adapter) -> None:
    check_port(db, actor, row)
    if not row.use_same_db and row.database_type in DRIVERS:
        check_destinations(row, hosts=("host",))
    # a sqlite3 database is a file of the server's own disk: the server's operators' alone
    if not row.use_same_db and row.database_type == "sqlite3" and not actor.is_global_admin:
        raise ServiceError("Only a global admin may use a sqlite3 database")


def same_db_switched(on: bool) -> dict[str, str]:
    """The form's connection fields when useSameDb is switched: on, they are cleared (the
    server's own database needs none); off, they are filled with a MySQL server's usual ones
    to start from. The password is left empty: a made-up one would only be sent to a server."""
    if on:
        return {"type": "", "databaseType": "", "host": "", "port": "0", "user": "", "password": "",
                "database": ""}
    return {"type": TYPES[0], "databaseType": "mysql", "host": "localhost", "port": str(DEFAULT_PORT),
            "user": "root", "database": "dbName"}


RULES = KindRules(choices=(Choice("type", TYPES), Choice("database_type", DATABASE_TYPES)),
                  validate=validate, protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Adapter - {suffix}", table="table_name", useSameDb=True))
