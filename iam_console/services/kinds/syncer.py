"""Syncers: users copied from another database's table."""

from __future__ import annotations

from sqlmodel import Session

from ... import models as m
from ..access import Actor
from ..errors import ServiceError
from .common import KindRules, check_port, fixed


def validate(db: Session, actor: Actor, row: m.Syncer) -> None:
    check_port(db, actor, row)
    columns = [c for c in row.table_columns if isinstance(c, dict)]
    if columns and sum(1 for c in columns if c.get("isKey")) != 1:
        raise ServiceError("Exactly one table column must be the key")


RULES = KindRules(validate=validate, new=fixed(type="Database", databaseType="mysql", port=3306, syncInterval=10,
                                               isEnabled=False, isReadOnly=False),
                  organization_as_owner=True)
