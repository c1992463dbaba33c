"""The records' CSV export: the filtered view of get-records, streamed."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse

from iam_console.api.callers import actor
from iam_console.audit import trail
from iam_console.db import session_scope

router = APIRouter(prefix="/api", tags=["records"])


@router.get("/export-records", summary="The records get-records lists, as CSV (every page, newest first)")
async def export_records(request: Request) -> StreamingResponse:
    """get-records' parameters (organizationName, field, value, organization, user, action, method,
    startTime, endTime) without the paging; the rows are read and sent in batches."""
    params = dict(request.query_params)
    with session_scope() as db:  # who is asking, and whether they may: refused before anything is sent
        caller = actor(db, request)
        lines = trail.export_csv(session_scope, caller, params.get("organizationName", ""), params)
    return StreamingResponse(lines, media_type="text/csv; charset=utf-8",
                             headers={"Content-Disposition": 'attachment; filename="records.csv"'})
