"""get-session, add-session, update-session, delete-session (the list is generic)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import json_body
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import builtin as b
from iam_console.core import crud
from iam_console.db import session_scope
from iam_console.signin import sessions

router = APIRouter(prefix="/api", tags=["sessions"])


def _key(request: Request, body: dict | None = None) -> tuple[str, str, str]:
    """The body's owner/name/application when it has them (delete-session, as Casdoor
    reads it), else sessionPkId=owner/name/application, else id=owner/name (app-built-in)."""
    fields = {k.lower(): v for k, v in (body or {}).items()}
    if all(fields.get(key) for key in ("owner", "name", "application")):
        return sessions.split_pk(f"{fields['owner']}/{fields['name']}/{fields['application']}")
    params = request.query_params
    if params.get("sessionPkId"):
        return sessions.split_pk(params["sessionPkId"])
    if params.get("id"):
        owner, name = crud.split_id(params["id"])
        return owner, name, b.BUILT_IN_APP
    return sessions.split_pk(f"{fields.get('owner', '')}/{fields.get('name', '')}/{fields.get('application', '')}")


@router.get("/get-session")
async def get_session(request: Request) -> JSONResponse:
    with session_scope() as db:
        return ok(sessions.get(db, actor(db, request), *_key(request)))


@router.post("/add-session")
async def add_session(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        return ok(sessions.save(db, actor(db, request), body, audit_context(request), merge=True))


@router.post("/update-session")
async def update_session(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        return ok(sessions.save(db, actor(db, request), body, audit_context(request)))


@router.post("/delete-session")
async def delete_session(request: Request) -> JSONResponse:
    body = await json_body(request, allow_empty=True)
    with session_scope() as db:
        return ok(sessions.remove(db, actor(db, request), *_key(request, body), audit_context(request)))
