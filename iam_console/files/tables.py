"""Uploaded files (resources)."""

from __future__ import annotations

import sqlalchemy as sa

from iam_console.models.base import Named, big_int, named_keys, text


class Resource(Named, table=True):
    __tablename__ = "resource"
    __table_args__ = named_keys(
        "resource",
        sa.Index("ix_resource_owner_user", "owner", "user", "created_time"),
    )

    # Casdoor names resources by their storage path, which outgrows 100 chars
    name: str = text(255)

    user: str = text(100)
    provider: str = text(100)
    application: str = text(100)
    tag: str = text(100)
    parent: str = text(100)
    file_name: str = text(255)
    file_type: str = text(100)
    file_format: str = text(100)
    file_size: int = big_int()  # bytes
    url: str = text(500)
    description: str = text(500)
