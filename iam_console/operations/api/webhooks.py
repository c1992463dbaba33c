"""Casdoor's webhook event log: get-webhook-events, get-webhook-event-detail,
replay-webhook-event and delete-webhook-event (docs/api.md, "Webhook events"); the rules are
in operations/webhooks.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import json_body
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.audit import records
from iam_console.db import session_scope
from iam_console.operations import webhooks

router = APIRouter(prefix="/api", tags=["webhooks"])


@router.get("/get-webhook-events", summary="Webhook events (paged with p and pageSize; webhook and state narrow)")
async def get_webhook_events(request: Request) -> JSONResponse:
    params = dict(request.query_params)
    with session_scope() as db:
        page = webhooks.list_events(db, actor(db, request), params)
        return ok([webhooks.present(row) for row in page.rows], page.total)


@router.get("/get-webhook-event-detail", summary="One webhook event by id=owner/name")
async def get_webhook_event_detail(request: Request) -> JSONResponse:
    with session_scope() as db:
        return ok(webhooks.get_event(db, actor(db, request), request.query_params.get("id", "")))


@router.post("/replay-webhook-event", summary="Send a webhook event again from its first attempt")
async def replay_webhook_event(request: Request) -> JSONResponse:
    ident = request.query_params.get("id", "")
    with session_scope() as db:
        caller = actor(db, request)
        answer = webhooks.replay(db, caller, ident)
        records.audit(db, organization=caller.organization, user=caller.id, action="replay-webhook-event",
                      obj={"id": ident})
        return ok(answer)


@router.post("/delete-webhook-event", summary="Delete a webhook event (owner and name in the body)")
async def delete_webhook_event(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        caller = actor(db, request)
        answer = webhooks.delete_event(db, caller, body)
        records.audit(db, organization=caller.organization, user=caller.id, action="delete-webhook-event",
                      obj={"owner": body.get("owner"), "name": body.get("name")})
        return ok(answer)
