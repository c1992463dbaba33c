"""Webhook events: the outbox's log, as Casdoor's console lists it in the Admin menu: each event's
webhook, organization, state, attempts and last error; Replay sends one again from its first
attempt, Delete removes it. The rules are the event log's (operations/webhooks.py): an admin sees
their organization's events, the global admin every organization's. The events are no kind of the
registry (the delivery worker writes them): the screen reads and deletes them through that module,
and records each Replay and Delete as the API routes do."""

from __future__ import annotations

from typing import Any

from iam_console import models as m
from iam_console.audit import records
from iam_console.core import query
from iam_console.core.resources import Kind, Ownership
from iam_console.operations import webhooks
from iam_console.ui.screens import Column, Messages, RowAction, Screen, screen

EVENT = Kind("webhook-event", m.WebhookEvent, Ownership.ADMIN, "organization")
COLORS = ((webhooks.PENDING, "amber"), (webhooks.RETRYING, "blue"), (webhooks.SUCCESS, "green"),
          (webhooks.FAILED, "red"))


def _read(db, actor, params: dict[str, str]) -> query.Page:
    page = webhooks.list_events(db, actor, params)
    return query.Page([webhooks.present(row) for row in page.rows], page.total, page.page)


def _replay(db, actor, ident: str) -> str:
    answer = webhooks.replay(db, actor, ident)
    records.audit(db, organization=actor.organization, user=actor.id, action="replay-webhook-event",
                  request_uri="/api/replay-webhook-event", obj={"id": ident})
    return answer


def _remove(db, actor, ident: str) -> str:
    owner, _, name = ident.partition("/")
    answer = webhooks.delete_event(db, actor, {"owner": owner, "name": name})
    records.audit(db, organization=actor.organization, user=actor.id, action="delete-webhook-event",
                  request_uri="/api/delete-webhook-event", obj={"owner": owner, "name": name})
    return answer


def _webhook_page(record: dict[str, Any]) -> str:
    """The event's webhook is named by its id (admin/name); its page by its name. Another feature's
    event (a back-channel logout notice: webhooks.KINDS) names its receiver there, which is no webhook."""
    if not record.get("webhook") or record.get("eventType") in webhooks.KINDS:
        return ""
    return f"/webhooks/{str(record['webhook']).partition('/')[2]}"


WEBHOOK_EVENTS = screen(Screen(
    key="webhook_event", title="Webhook Events", list_route="/webhook-events", edit_route="", addable=False,
    source=EVENT, reads=_read, remove=_remove, messages=Messages(unaffected_delete_fails=True),
    row_buttons=(RowAction("replay", "Replay", shown_for=lambda r: r.get("state") != webhooks.SUCCESS,
                           run=_replay, failed="Failed to replay: %s"),),
    columns=(
        Column("name", "Name"),
        Column("webhook", "Webhook", link=_webhook_page),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("eventType", "Event type"),
        Column("attemptCount", "Attempt count", searchable=False),
        Column("nextRetryTime", "Next retry time", "time", searchable=False),
        Column("lastStatusCode", "Last status code", searchable=False),
        Column("lastError", "Last error", cut=60, sortable=False),
        Column("state", "State", "badge", filters=webhooks.STATES, colors=COLORS),
    ),
    fields=(),
))
