"""The tickets' screens: the list (/tickets: a user sees their own tickets, an admin their
organization's) and the edit page (/tickets/{organization}/{name}) with the ticket's thread
under its fields: every message with its author, time and an Admin badge, and a box to post a
new one (add-ticket-message's rules, service.py)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.core import crud
from iam_console.core.kinds import choices
from iam_console.core.resources import REGISTRY
from iam_console.i18n.formats import time_text
from iam_console.ui.components.editing import field_label
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, say
from iam_console.ui.text import t

from . import service
from .rules import CLOSED


def _restrictions(db: Any, actor: Any, record: dict[str, Any]) -> tuple[set[str], set[str]]:
    """What an ordinary user may not change of their ticket: its name, and its state once closed
    (they may only close it: rules.py)."""
    if actor.is_admin:
        return set(), set()
    return {"name", *({"state"} if record.get("state") == CLOSED else set())}, set()


class TicketThread(rx.State):
    """The edited ticket's messages, read with the viewer's rights, and the message being written."""

    rows: list[dict[str, str]] = []
    draft: str = ""

    async def _ident(self) -> str:
        editing = await self.get_state(Editing)
        return f"{editing.saved_owner}/{editing.saved_name}"

    async def _read(self) -> None:
        owner, _, name = (await self._ident()).partition("/")
        read = await call(self, lambda db, actor: crud.get_record(db, actor, REGISTRY["ticket"], owner, name),
                          quiet=True)
        messages = [] if read.failed or read.value is None else read.value.get("messages") or []
        language = (await self.get_state(Prefs)).lang
        self.rows = [{"author": str(m.get("author", "")), "text": str(m.get("text", "")),
                      "timestamp": time_text(m.get("timestamp"), language),
                      "isAdmin": "true" if m.get("isAdmin") else ""}
                     for m in messages if isinstance(m, dict)]

    @rx.event
    async def load(self):
        self.draft = ""
        await self._read()

    @rx.event
    def set_draft(self, value: str):
        self.draft = value[:service.MAX_TEXT]

    @rx.event
    async def post(self):
        ident, text = await self._ident(), self.draft
        sent = await call(self, lambda db, actor: service.add_message(db, actor, ident, {"text": text}),
                          failed="Failed to send: %s")
        if sent.failed:
            return sent.event
        self.draft = ""
        await self._read()
        return rx.toast.success(await say(self, "Successfully sent"))


def _message(row: rx.Var) -> rx.Component:
    return rx.el.li(
        rx.hstack(
            rx.text(row["author"], weight="bold", size="2", class_name="ticket-message-author"),
            rx.cond(row["isAdmin"] == "true", rx.badge(t("Admin"), color_scheme="blue", class_name="ticket-admin")),
            rx.text(row["timestamp"], size="1", color_scheme="gray", class_name="ticket-message-time"),
            spacing="2", align="center",
        ),
        rx.text(row["text"], size="2", white_space="pre-wrap", class_name="ticket-message-text"),
        class_name="ticket-message", style={"listStyle": "none", "padding": "0.5em 0",
                                            "borderBottom": "1px solid var(--gray-a5)"},
    )


def _thread() -> rx.Component:
    return rx.cond(Editing.mode == "add", rx.fragment(), rx.vstack(
        rx.heading(t("Messages"), size="3", as_="h2", id="ticket-messages-heading"),
        rx.cond(
            TicketThread.rows.length() > 0,
            rx.el.ul(rx.foreach(TicketThread.rows, _message), id="ticket-messages",
                     aria_labelledby="ticket-messages-heading", style={"padding": 0, "margin": 0, "width": "100%"}),
            rx.text(t("No messages yet"), size="2", id="ticket-messages-empty"),
        ),
        rx.grid(
            field_label("New message", "ticket-new-message"),
            rx.text_area(value=TicketThread.draft, on_change=TicketThread.set_draft, id="ticket-new-message",
                         rows="4", width="100%", max_length=service.MAX_TEXT),
            columns="12em 1fr", spacing="3", width="100%",
        ),
        rx.hstack(rx.button(rx.icon("send", size=14), t("Send"), on_click=TicketThread.post, id="ticket-send",
                            disabled=TicketThread.draft.strip() == ""), justify="end", width="100%"),
        width="100%", spacing="2", margin_top="1em",
    ))


TICKETS = screen(Screen(
    key="ticket", title="Tickets", list_route="/tickets", edit_route="/tickets/{owner}/{name}", edit_title="Ticket",
    owner_picker=True, restrictions=_restrictions, parts=lambda: (_thread(),), after_read=TicketThread.load,
    columns=(
        Column("name", "Name", link="/tickets/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("title", "Title"),
        Column("user", "User"),
        Column("state", "State", "badge", filters=choices("ticket", "state"),
               colors=(("Open", "blue"), ("In Progress", "orange"), ("Resolved", "green"), ("Closed", "gray"))),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("title", "Title"),
        Field("content", "Content", "textarea", rows=6),
        Field("user", "User", derived=True),
        Field("state", "State", "select", options=choices("ticket", "state")),
    ),
))
