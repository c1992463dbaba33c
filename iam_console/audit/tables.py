"""The audit trail's records."""

from __future__ import annotations

from typing import ClassVar

import sqlalchemy as sa

from iam_console.models.base import Named, long_text, text


class Record(Named, table=True):
    """One audited request: every write, sign-in and sign-out."""

    __tablename__ = "record"
    # records are not unique by name; the integer key is Casdoor's "id". Each filter of the
    # list (organization, user, action, method; a time range on any of them) is an equality on
    # the first column of an index in the list's order (docs/architecture.md, "The audit trail")
    __table_args__ = (
        sa.Index("ix_record_owner_created", "owner", "created_time", "pk"),
        sa.Index("ix_record_organization_created", "organization", "created_time", "pk"),
        sa.Index("ix_record_created", "created_time", "pk"),
        sa.Index("ix_record_user_created", "user", "created_time", "pk"),
        # MySQL's index keys stop at 3072 bytes: the 1000-character action is indexed by its start
        sa.Index("ix_record_action_created", "action", "created_time", "pk", mysql_length={"action": 255}),
        sa.Index("ix_record_method_created", "method", "created_time", "pk"),
    )
    json_aliases: ClassVar[dict[str, str]] = {"pk": "id"}
    json_hidden: ClassVar[frozenset[str]] = frozenset()
    json_exact_search: ClassVar[frozenset[str]] = frozenset({"organization", "user", "action", "method"})

    organization: str = text(100)
    client_ip: str = text(100)
    user: str = text(255)  # an owner/name id: two names of 100 and the slash
    method: str = text(100)
    request_uri: str = text(1000)
    action: str = text(1000)
    language: str = text(100)
    object: str = long_text()
    response: str = long_text()
    status_code: int = 0
    detail: str = long_text()
    is_triggered: bool = False
