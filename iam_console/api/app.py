"""The FastAPI application mounted in front of Reflex (api_transformer)."""

from __future__ import annotations

import json
import logging

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from swagger_ui_bundle import swagger_ui_path

from iam_console import workers
from iam_console.api import openapi
from iam_console.api.auditing import record_refusal
from iam_console.api.envelope import error, service_error
from iam_console.api.middleware import AuditContext, CrossOrigin, CsrfGuard, RequestMetrics, SecurityHeaders
from iam_console.api.offload import Offload
from iam_console.api.resources import generic_router
from iam_console.audit.records import redacting_log_records
from iam_console.core.errors import ServiceError
from iam_console.extension import extensions, imported

log = logging.getLogger("iam_console")
OPENAPI_URL = "/api/openapi.json"
SWAGGER_ASSETS = "/api/swagger-ui"


def extension_routers() -> list:
    """The API routers every extension declares, in their order."""
    return [imported(path, extension.name) for extension in extensions() for path in extension.routers]


def create_api() -> FastAPI:
    api = FastAPI(title="IAM Console API", version="1", docs_url=None, redoc_url=None, openapi_url=OPENAPI_URL,
                  description="Casdoor-compatible REST API. Business errors answer HTTP 200 in the envelope.")
    # Swagger UI 4 (swagger-ui-bundle) reads OpenAPI 3.0; these routes' schema is 3.0-compatible
    api.openapi_version = "3.0.3"
    # Swagger UI from the swagger-ui-bundle package: nothing is fetched from a CDN
    api.mount(SWAGGER_ASSETS, StaticFiles(directory=str(swagger_ui_path)), name="swagger-ui")

    @api.get("/swagger", include_in_schema=False)
    async def _swagger() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=OPENAPI_URL, title="IAM Console API",
                                   swagger_js_url=f"{SWAGGER_ASSETS}/swagger-ui-bundle.js",
                                   swagger_css_url=f"{SWAGGER_ASSETS}/swagger-ui.css",
                                   swagger_favicon_url="/favicon.ico")

    @api.exception_handler(ServiceError)
    async def _service_error(request: Request, exc: ServiceError) -> JSONResponse:
        response = service_error(request, exc)
        # on the worker that serves the route (api/offload.py); sent there from the loop otherwise
        await workers.run(record_refusal, request, json.loads(response.body))
        return response

    @api.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # logged with its traceback; the caller learns nothing of the internals
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        response = error(request, "Internal server error")
        response.status_code = 500
        return response

    api.include_router(generic_router())  # every kind's CRUD family
    for router in extension_routers():  # every extension's, built-in or installed (iam_console/extension.py)
        api.include_router(router)

    # innermost: the routes and what they do run on the worker pool (api/offload.py)
    api.add_middleware(Offload, route_paths=lambda: [path for _, path in route_table(api)])
    api.add_middleware(CrossOrigin)
    api.add_middleware(CsrfGuard)
    api.add_middleware(SecurityHeaders)
    api.add_middleware(AuditContext)
    api.add_middleware(RequestMetrics)

    @api.api_route("/api/{path:path}", methods=["GET", "POST"], include_in_schema=False)
    async def _unknown(request: Request, path: str) -> JSONResponse:
        # Casdoor's SDKs read the envelope (the Node SDK throws on anything but 2xx)
        return error(request, "The API /api/%s does not exist", path[:100])

    def _document() -> dict:
        # the generic routes' bodies and answers come from the registry (api/openapi.py)
        if api.openapi_schema is None:
            api.openapi_schema = openapi.build(api)
        return api.openapi_schema
    api.openapi = _document
    return api


api = create_api()
# the server's access log and our own lines pass through the audit trail's redaction
redacting_log_records()


def route_table(router=None, prefix: str = "") -> list[tuple[str, str]]:
    """Every (method, path) the API serves, walking included routers."""
    table = []
    for route in (router or api).routes:
        included = getattr(route, "original_router", None)
        if included is not None:
            table.extend(route_table(included, prefix + route.include_context.prefix))
        elif isinstance(route, APIRoute):
            table.extend((method, prefix + route.path) for method in sorted(route.methods))
    return table
