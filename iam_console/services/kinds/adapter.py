"""Casbin adapters: where an enforcer's policies are stored."""

from __future__ import annotations

from sqlmodel import Session

from ... import models as m
from ..access import Actor
from ..errors import ServiceError
from .common import BUILT_IN_CASBIN, KindRules, check_port, fixed


def validate(db: Session, actor: Actor, row: m.Adapter) -> None:
    check_port(db, actor, row)
    # a sqlite3 database is a file of the server's own disk: the server's operators' alone
    if not row.use_same_db and row.database_type == "sqlite3" and not actor.is_global_admin:
        raise ServiceError("Only a global admin may use a sqlite3 database")


RULES = KindRules(validate=validate, protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Adapter - {suffix}", table="table_name", useSameDb=True))
