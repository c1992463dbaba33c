"""Webhooks: list and edit (owner always admin; the organization is the global admin's to change).
The edit page shows a read-only sample of what a delivery carries (with an extendedUser while
"Is user extended" is on) and the webhook's last deliveries, each of which can be replayed
(operations/webhooks.py delivers them)."""

from __future__ import annotations

import json
from typing import Any

import reflex as rx

from iam_console import models as m
from iam_console.core.kinds import choices
from iam_console.models.base import format_time, masked, to_wire
from iam_console.operations import webhooks
from iam_console.operations.kinds.webhook import events
from iam_console.ui.components.code_editor import code_editor
from iam_console.ui.components.editing import field_label
from iam_console.ui.screens import Cell, Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, say
from iam_console.ui.text import t

SAMPLE_APPLICATION = {"owner": "admin", "name": "application_123", "organization": "built-in",
                      "createdTime": "2022-01-01T01:03:42Z", "displayName": "New Application - 123",
                      "enablePassword": True, "enableSignUp": True}
# what a delivery's body holds: the record (docs/api.md, "Webhook deliveries")
SAMPLE_RECORD = {"id": 9078, "owner": "built-in", "name": "68f55b28-7380-46b1-9bde-64fe1576e3b3",
                 "createdTime": "2022-01-01T01:03:42Z", "organization": "built-in", "clientIp": "159.89.126.192",
                 "user": "admin", "method": "POST", "requestUri": "/api/add-application", "action": "login",
                 "isTriggered": False, "object": json.dumps(SAMPLE_APPLICATION)}


def _sample_user() -> dict[str, Any]:
    """A user as a delivery's extendedUser shows it: the API's fields, every secret masked."""
    user = m.User(owner="built-in", name="admin", display_name="Admin", email="admin@example.com",
                  type="normal-user", password="a-password-hash", is_admin=True,
                  uuid="9eb20f79-3bb5-4e74-99ac-39e3b9a171e8")
    shown = masked(to_wire(user), m.User)
    shown["createdTime"] = "2020-07-16T21:46:52Z"
    return shown


PREVIEW = json.dumps(SAMPLE_RECORD, indent=2)
PREVIEW_EXTENDED = json.dumps({**SAMPLE_RECORD, "extendedUser": _sample_user()}, indent=2)


def _new_header(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"name": f"header-{len(rows)}", "value": f"value-{len(rows)}"}


class WebhookDeliveries(rx.State):
    """The edited webhook's last deliveries (get-webhook-events' rules: the viewer's organization)."""

    rows: list[dict[str, str]] = []

    async def _ident(self) -> str:
        editing = await self.get_state(Editing)
        return f"{editing.saved_owner}/{editing.saved_name}"

    async def _read(self) -> Any:
        ident = await self._ident()
        page = await call(self, lambda db, actor: webhooks.list_events(
            db, actor, {"webhook": ident, "p": "1", "pageSize": str(PAGE)}), quiet=True)
        self.rows = [] if page.failed else [{
            "key": f"{row.owner}/{row.name}", "createdTime": format_time(row.created_time),
            "eventType": row.event_type, "state": row.state, "attemptCount": str(row.attempt_count),
            "lastStatusCode": str(row.last_status_code or ""), "lastError": row.last_error[:200],
            "nextRetryTime": format_time(row.next_retry_time)} for row in page.value.rows]

    @rx.event
    async def load(self):
        await self._read()

    @rx.event
    async def replay(self, key: str):
        done = await call(self, lambda db, actor: webhooks.replay(db, actor, key), failed="Failed to replay: %s")
        if done.failed:
            return done.event
        await self._read()
        return rx.toast.success(await say(self, "Webhook event replay triggered"))


PAGE = 20
DELIVERY_COLUMNS = (("createdTime", "Created time"), ("eventType", "Event type"), ("state", "State"),
                    ("attemptCount", "Attempts"), ("lastStatusCode", "Status code"), ("lastError", "Last error"),
                    ("nextRetryTime", "Next retry time"))


def _preview() -> rx.Component:
    return rx.grid(
        field_label("Preview", "webhook-preview"),
        rx.box(code_editor(rx.cond(Editing.flags["isUserExtended"], PREVIEW_EXTENDED, PREVIEW), language="json",
                           label=t("Preview"), id="webhook-preview", width="900px", height="300px",
                           read_only=True), width="100%"),
        columns="12em 1fr", spacing="3", width="100%",
    )


def _delivery_row(row: rx.Var) -> rx.Component:
    return rx.table.row(
        *[rx.table.cell(row[key], class_name=f"webhook-delivery-{key}") for key, _ in DELIVERY_COLUMNS],
        rx.table.cell(rx.button(t("Replay"), size="1", variant="soft", class_name="webhook-delivery-replay",
                                on_click=WebhookDeliveries.replay(row["key"]))),
        class_name="webhook-delivery",
    )


def _deliveries() -> rx.Component:
    return rx.cond(Editing.mode == "add", rx.fragment(), rx.vstack(
        rx.hstack(
            rx.heading(t("Deliveries"), size="3", as_="h2", id="webhook-deliveries-heading"),
            rx.button(rx.icon("refresh-cw", size=14), t("Refresh"), size="1", variant="soft",
                      on_click=WebhookDeliveries.load, id="webhook-deliveries-refresh"),
            align="center", spacing="3",
        ),
        rx.cond(
            WebhookDeliveries.rows.length() > 0,
            rx.table.root(
                rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(label)) for _, label in DELIVERY_COLUMNS],
                                             rx.table.column_header_cell(t("Action")))),
                rx.table.body(rx.foreach(WebhookDeliveries.rows, _delivery_row)),
                id="webhook-deliveries", width="100%", aria_labelledby="webhook-deliveries-heading",
            ),
            rx.text(t("No deliveries yet"), size="2", id="webhook-deliveries-empty"),
        ),
        width="100%", spacing="2", margin_top="1em",
    ))


WEBHOOKS = screen(Screen(
    key="webhook", title="Webhooks", list_route="/webhooks", edit_route="/webhooks/{name}", edit_title="Webhook",
    parts=lambda: (_preview(), _deliveries()), after_read=WebhookDeliveries.load,
    columns=(
        Column("name", "Name", link="/webhooks/{name}"),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("url", "URL", link=lambda record: str(record.get("url") or ""), external=True),
        Column("method", "Method", filters=choices("webhook", "method")),
        Column("contentType", "Content type", filters=choices("webhook", "contentType")),
        Column("events", "Events", "tags", sortable=False),
        Column("isUserExtended", "Is user extended", "bool", searchable=False),
        Column("singleOrgOnly", "Single org only", "bool", searchable=False),
        Column("isEnabled", "Is enabled", "bool", searchable=False),
    ),
    fields=(
        Field("organization", "Organization", "pick", kind="organization", global_admin_only=True),
        Field("url", "URL"),
        Field("method", "Method", "select", options=choices("webhook", "method")),
        Field("contentType", "Content type", "select", options=choices("webhook", "contentType")),
        Field("headers", "Headers", "rows", movable=True, new_row=_new_header, columns=(
            Cell("name", "Name"), Cell("value", "Value"))),
        Field("events", "Events", "checks", options=events()),
        Field("isUserExtended", "Is user extended", "switch"),
        Field("singleOrgOnly", "Single org only", "switch"),
        Field("isEnabled", "Is enabled", "switch"),
    ),
))
