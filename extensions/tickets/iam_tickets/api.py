"""add-ticket-message?id=owner/name, beside the ticket's generic routes (the rules: service.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import json_body
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.openapi import acts_on_record
from iam_console.db import session_scope

from . import service

router = APIRouter(prefix="/api", tags=["tickets"])
MESSAGE = {"type": "object", "required": ["text"],
           "properties": {"text": {"type": "string", "description": "The message; its author, time and admin "
                                                                    "flag are the server's"}}}


@router.post("/add-ticket-message", summary="Add a message to the ticket id=owner/name",
             openapi_extra=acts_on_record("ticket", MESSAGE, {"text": "Any news?"}))
async def add_ticket_message(request: Request) -> JSONResponse:
    body = await json_body(request)
    ident = request.query_params.get("id", "")
    uri = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    with session_scope() as db:
        return ok(service.add_message(db, actor(db, request), ident, body, uri))
