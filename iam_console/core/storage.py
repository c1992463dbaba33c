"""Stored files' lifetime beside the database's: a folder whose records a transaction
deletes goes only once that transaction is committed, so a rolled-back delete loses
no file."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import unquote

import sqlalchemy as sa
from sqlmodel import Session

from iam_console.extension import extensions
from iam_console.settings import settings

# the folders of the files directory: avatar/{organization}/{user}.{ext} and
# resource/{organization}/{path}, served by /files/; and each extension's own (`file_folders`),
# which /files/ never serves; everything an organization stored is under these
AVATAR_FOLDER = "avatar"
RESOURCE_FOLDER = "resource"


def private_folders() -> tuple[str, ...]:
    """The extensions' folders (invoices: personal data that commerce serves to their readers)."""
    return tuple(folder for extension in extensions() for folder in extension.file_folders)


def folders() -> tuple[str, ...]:
    """Every folder an organization's files are kept in: they go with the organization."""
    return (AVATAR_FOLDER, RESOURCE_FOLDER, *private_folders())


def folder(relative: str) -> Path:
    """The stored file or folder `relative`, never outside the files directory."""
    root = settings.files_dir.resolve()
    target = (root / relative).resolve()
    if root not in target.parents:
        raise ValueError(f"{relative} is outside the files directory")
    return target


def stored_path(url: str) -> str | None:
    """The stored file a URL of this server points at, relative to the files directory
    (None: the URL is not one of ours)."""
    prefix = f"{settings.origin}/files/"
    return unquote(url[len(prefix):].split("?", 1)[0]) if url.startswith(prefix) else None


def remove_after_commit(db: Session, relative: str) -> None:
    """The stored file or folder goes once the transaction is committed."""
    target = folder(relative)

    def remove(_session) -> None:
        if target.is_dir():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)

    sa.event.listen(db, "after_commit", remove, once=True)
