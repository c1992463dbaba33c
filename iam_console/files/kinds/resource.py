"""Resources: files stored for an organization (files/files.py), in the local files
directory or a storage provider's bucket (files/object_storage.py). A deleted resource's
file goes with it, once the deletion is committed."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.core import storage
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import KindRules
from iam_console.files import object_storage


def take_along(db: Session, row: m.Resource) -> None:
    relative = storage.stored_path(row.url)
    if relative:
        storage.remove_after_commit(db, relative)
        return
    try:
        store = object_storage.store_of(db, row.owner, row.provider)
    except ServiceError:  # the provider is gone or changed: nothing of ours to delete
        return
    key = store.key_of(row.url) if store else None
    if key:
        store.delete_after_commit(db, key)


RULES = KindRules(take_along=take_along)
