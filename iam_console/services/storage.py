"""Stored files' lifetime beside the database's: a folder whose records a transaction
deletes goes only once that transaction is committed, so a rolled-back delete loses
no file."""

from __future__ import annotations

import shutil

import sqlalchemy as sa
from sqlmodel import Session

from ..settings import settings


def folder(relative: str):
    """The stored files' folder `relative`, never outside the files directory."""
    root = settings.files_dir.resolve()
    target = (root / relative).resolve()
    if root not in target.parents:
        raise ValueError(f"{relative} is outside the files directory")
    return target


def remove_after_commit(db: Session, relative: str) -> None:
    target = folder(relative)

    def remove(_session) -> None:
        shutil.rmtree(target, ignore_errors=True)

    sa.event.listen(db, "after_commit", remove, once=True)
