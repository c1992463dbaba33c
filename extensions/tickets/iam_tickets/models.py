"""The ticket table: Casdoor's Ticket, its messages a JSON list of
{author, text, timestamp, isAdmin} objects that only the server writes (add-ticket-message)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from iam_console.models.base import Named, json_list, long_text, moment, named_keys, text


class Ticket(Named, table=True):
    __tablename__ = "ticket"
    __table_args__ = named_keys("ticket")
    # the thread grows through add-ticket-message alone, and saving stamps the updated time:
    # neither is read from a client's object
    json_server_set: ClassVar[frozenset[str]] = frozenset({"messages", "updated_time"})

    updated_time: datetime | None = moment()
    display_name: str = text(100)
    user: str = text(100)  # owner/name of the user who opened it
    title: str = text(200)
    content: str = long_text()
    state: str = text(50)  # Open, In Progress, Resolved or Closed
    messages: list[dict[str, Any]] = json_list()
