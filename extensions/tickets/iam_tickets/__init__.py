"""Casdoor's support tickets as an installable extension of the console (docs/extending.md,
"The tickets extension"): the ticket kind with its generic routes, add-ticket-message, the list
and edit pages with the thread, a menu entry every signed-in user sees (users see their own
tickets), its catalogs and its migrations."""

from __future__ import annotations

from pathlib import Path

from iam_console.core.resources import Kind, Ref
from iam_console.extension import Extension, MenuEntry

from .models import Ticket
from .rules import RULES

HERE = Path(__file__).parent

EXTENSION = Extension(
    "tickets",
    # a ticket's user is a user of its own organization, as owner/name; an ordinary user's
    # tickets are those naming them
    kinds=(Kind("ticket", Ticket, name_prefix="ticket", user_attr="user",
                references=(Ref("user", "user", form="id"),)),),
    rules={"ticket": RULES},
    routers=("iam_tickets.api:router",),
    pages=("iam_tickets.pages",),
    menu=(MenuEntry("/admin", "/tickets", "Tickets", "everyone"),),
    webhook_events=("add-ticket", "update-ticket", "delete-ticket", "add-ticket-message"),
    translations=str(HERE / "translations"),
    migrations=str(HERE / "migrations"),
)
