"""The syncer routes beyond CRUD: run a sync now, and test a syncer's database connection
(services/syncers.py). Both run in a worker thread: a sync of a large table takes a while."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from .. import workers
from ..db import session_scope
from ..services import crud, syncers
from .bodies import json_object
from .callers import actor
from .envelope import ok
from .resources import audit_context

router = APIRouter(prefix="/api", tags=["syncers"])


@router.get("/run-syncer", summary="Sync the users of a syncer (id=owner/name) now")
async def run_syncer(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    context = audit_context(request)

    def work() -> None:
        with session_scope() as db:
            syncers.run(db, actor(db, request), owner, name, context)

    await workers.run(work)
    return ok(None)


@router.post("/test-syncer-db", summary="Connect to the database of the posted syncer")
async def test_syncer_db(request: Request) -> JSONResponse:
    body = await json_object(request)

    def work() -> None:
        with session_scope() as db:
            syncers.test_db(db, actor(db, request), body)

    await workers.run(work)
    return ok(None)
