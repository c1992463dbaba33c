"""get-session, add-session, update-session, delete-session (the list is generic)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..db import session_scope
from ..services import builtin as b
from ..services import crud, sessions
from .bodies import json_body
from .callers import actor
from .envelope import ok
from .resources import audit_context

router = APIRouter(prefix="/api", tags=["sessions"])


def _key(request: Request, body: dict | None = None) -> tuple[str, str, str]:
    """sessionPkId=owner/name/application, else id=owner/name (app-built-in), else the body."""
    params = request.query_params
    if params.get("sessionPkId"):
        return sessions.split_pk(params["sessionPkId"])
    if params.get("id"):
        owner, name = crud.split_id(params["id"])
        return owner, name, b.BUILT_IN_APP
    body = {k.lower(): v for k, v in (body or {}).items()}
    return sessions.split_pk(f"{body.get('owner', '')}/{body.get('name', '')}/{body.get('application', '')}")


@router.get("/get-session")
async def get_session(request: Request) -> JSONResponse:
    with session_scope() as db:
        return ok(sessions.get(db, actor(db, request), *_key(request)))


@router.post("/add-session")
@router.post("/update-session")
async def save_session(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        return ok(sessions.save(db, actor(db, request), body, audit_context(request)))


@router.post("/delete-session")
async def delete_session(request: Request) -> JSONResponse:
    body = await json_body(request, allow_empty=True)
    with session_scope() as db:
        return ok(sessions.remove(db, actor(db, request), *_key(request, body), audit_context(request)))
