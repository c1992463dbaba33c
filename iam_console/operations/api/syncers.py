"""The syncer routes beyond CRUD: run a sync now, and test a syncer's database connection
(operations/syncers.py). Both run in a worker thread: a sync of a large table takes a while."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console import workers
from iam_console.api.bodies import json_object
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import crud
from iam_console.db import session_scope
from iam_console.operations import syncers

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
