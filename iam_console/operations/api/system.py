"""The server about itself: host figures, release, request metrics (docs/operations.md)."""

from __future__ import annotations

import hmac

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from prometheus_client import CONTENT_TYPE_LATEST

from iam_console import workers
from iam_console.api.callers import actor, bearer_token
from iam_console.api.envelope import ok
from iam_console.core import policy
from iam_console.db import session_scope
from iam_console.operations import metrics, system_info
from iam_console.settings import settings

router = APIRouter(prefix="/api", tags=["system"])


def _require_global_admin(request: Request) -> None:
    with session_scope() as db:
        policy.require_global_admin(actor(db, request))


@router.get("/get-system-info")
async def get_system_info(request: Request) -> JSONResponse:
    """CPU per core, memory, disk and I/O of the answering worker's host. Global admin only."""
    _require_global_admin(request)
    return ok(await workers.run(system_info.system_info))


@router.get("/get-version-info")
async def get_version_info() -> JSONResponse:
    """The release, commit and commits since the release: public, as in Casdoor."""
    return ok(await workers.run(system_info.version_info))


@router.get("/get-prometheus-info")
async def get_prometheus_info(request: Request) -> JSONResponse:
    """API latency and throughput per route, as the System Info page shows them. Global admin only."""
    _require_global_admin(request)
    return ok(metrics.prometheus_info())


@router.get("/metrics", response_class=Response)
async def get_metrics(request: Request) -> Response:
    """The Prometheus text format, for a scraper bearing IAM_METRICS_TOKEN or a global admin."""
    token = bearer_token(request)
    scraper = bool(settings.metrics_token) and hmac.compare_digest(token.encode(), settings.metrics_token.encode())
    if not scraper:
        _require_global_admin(request)
    return Response(metrics.exposition(), media_type=CONTENT_TYPE_LATEST)
