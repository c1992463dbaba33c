"""Resources: files stored for an organization (services/files.py). A deleted resource's
file goes with it, once the deletion is committed."""

from __future__ import annotations

from sqlmodel import Session

from ... import models as m
from .. import storage
from .common import KindRules


def take_along(db: Session, row: m.Resource) -> None:
    relative = storage.stored_path(row.url)
    if relative:
        storage.remove_after_commit(db, relative)


RULES = KindRules(take_along=take_along)
