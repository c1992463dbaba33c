"""Refused writes in the audit trail: a write the service refused rolled its own
transaction back, record included, so the API's error handler writes the record
of the refusal in a transaction of its own (docs/api.md, "What is recorded")."""

from __future__ import annotations

import logging

from fastapi import Request

from iam_console.api.callers import actor, client_ip
from iam_console.api.envelope import language
from iam_console.audit import records
from iam_console.core import access
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope

log = logging.getLogger("iam_console")


def action_of(request: Request) -> str:
    """Casdoor's action name of a write: the route's last part ("update-user", "login");
    "" for what is not a write (a GET, or a POST that only reads, get-records-filter)."""
    path = request.url.path
    if request.method != "POST" or not path.startswith("/api/"):
        return ""
    action = path[len("/api/"):].strip("/")
    return "" if not action or "/" in action or action.startswith("get-") else action


def record_refusal(request: Request, response: dict) -> None:
    """The audit record of a refused write: `response` is what the caller was answered (the
    envelope, or for a page the envelope it stands for)."""
    action = action_of(request)
    if not action:
        return
    uri = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    try:
        with session_scope() as db:
            try:
                caller = actor(db, request)
            except ServiceError:
                caller = access.ANONYMOUS
            records.audit(db, organization=caller.organization or "", user=caller.id,
                          action=action, request_uri=uri, client_ip=client_ip(request),
                          language=language(request), response=response, status_code=200)
    except Exception:  # the refusal is answered even when its record cannot be written
        log.exception("the record of a refused %s could not be written", action)
