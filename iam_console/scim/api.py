"""The SCIM 2.0 routes (RFC 7644) under /scim/v2, and under /scim as Casdoor serves them
(docs/api.md, "SCIM 2.0"): HTTP only, the work is scim/provisioning.py's.

Every route takes `Authorization: Bearer <token>`, a token of an application's client_credentials
grant: without one the answer is 401 with WWW-Authenticate, with another kind of token 403.
Answers are application/scim+json; refusals are SCIM error bodies."""

from __future__ import annotations

import logging
from typing import Any

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from scim2_models import (
    Context,
    Error,
    InvalidValueException,
    ListResponse,
    NotFoundException,
    NotImplementedException,
    PayloadTooLargeException,
    SCIMException,
    UnauthorizedException,
)
from sqlmodel import Session

from iam_console.api.bodies import MAX_BODY_BYTES
from iam_console.api.resources import audit_context
from iam_console.core import outbound
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json
from iam_console.db import session_scope
from iam_console.scim import provisioning
from iam_console.scim.schema import CONFIG, PROVIDER, SCHEMAS
from iam_console.signin import credentials

BASES = ("/scim/v2", "/scim")  # /scim: where Casdoor's SCIM server answers
MEDIA_TYPE = "application/scim+json"
ENDPOINTS = ("Users", "Groups")
DISCOVERY = ("ServiceProviderConfig", "ResourceTypes", "Schemas")
router = APIRouter(tags=["scim"])
log = logging.getLogger("iam_console")


def answer(body: Any, status: int = 200, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(body, status_code=status, media_type=MEDIA_TYPE, headers=headers)


def refusal(exc: SCIMException) -> JSONResponse:
    error = exc.to_error()
    headers = {"WWW-Authenticate": 'Bearer realm="SCIM"'} if error.status == 401 else None
    return answer(error.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE), int(error.status), headers)


def _caller(db: Session, request: Request) -> Actor:
    """The client behind the bearer token (the header alone: a token in a URL ends up in logs)."""
    header = request.headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise UnauthorizedException(detail="An access token is needed: Authorization: Bearer <token>")
    try:
        found = credentials.from_bearer(db, token.strip())
    except ServiceError:
        raise UnauthorizedException(detail="The access token is invalid or expired") from None
    outbound.note_caller(provisioning.organization_of(found))  # a client's, else 403
    return found


async def _body(request: Request) -> Any:
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise PayloadTooLargeException(detail=f"The body is larger than {MAX_BODY_BYTES} bytes")
    try:
        return parse_json(raw)
    except ServiceError as exc:
        raise provisioning.Refused(Error(status=400, scim_type="invalidSyntax", detail=str(exc))) from None


def _shown(resource: Any, params: Any = None) -> dict[str, Any]:
    return resource.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, response_parameters=params, mode="json")


def _one(resource: Any, status: int = 200, params: Any = None) -> JSONResponse:
    headers = {"ETag": resource.meta.version, "Location": resource.meta.location}
    return answer(_shown(resource, params), status, headers)


def _parameters(endpoint: str, request: Request) -> Any:
    """The attributes and excludedAttributes of a GET (RFC 7644 §3.9), validated."""
    values = {k: v for k, v in request.query_params.items() if k in ("attributes", "excludedAttributes")}
    return provisioning.search_request(endpoint, values)


def _listing(listing: provisioning.Listing, endpoint: str, params: Any) -> JSONResponse:
    resource = provisioning.ENDPOINTS[endpoint][0]
    response = ListResponse[resource](total_results=listing.total, start_index=listing.start,
                                      items_per_page=len(listing.resources), resources=listing.resources)
    return answer(response.model_dump(scim_ctx=Context.SEARCH_RESPONSE, response_parameters=params, mode="json"))


async def _serve(request: Request, work) -> Response:
    """Authenticate, then `work(db, actor)` in one transaction; a refusal undoes it all and answers
    a SCIM error, whatever raised it (the API's own handlers answer Casdoor's envelope)."""
    try:
        with session_scope() as db:
            return await work(db, _caller(db, request))
    except SCIMException as exc:
        return refusal(exc)
    except ServiceError as exc:
        return refusal(InvalidValueException(detail=str(exc)))
    except Exception:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return refusal(_Internal(detail="Internal server error"))


def _route(path: str, methods: list[str], names: tuple[str, ...] = ("",)):
    """Register `make(name)`'s handler at `path` (its {name} filled with each of `names`) under each base."""
    def register(make):
        for name in names:
            handler = make(name)
            for base in BASES:
                router.add_api_route(base + path.format(name=name), handler, methods=methods,
                                     include_in_schema=False)
        return make
    return register


@_route("/ServiceProviderConfig", ["GET"])
def service_provider_config(_: str):
    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            return answer(CONFIG.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, mode="json"))
        return await _serve(request, work)
    return handler


def _discovered(kind: str) -> dict[str, Any]:
    return {"ResourceTypes": {str(r.id): r for r in PROVIDER.resource_types},
            "Schemas": {str(s.id): s for s in SCHEMAS}}[kind]


@_route("/{name}", ["GET"], DISCOVERY[1:])
def discovery_list(kind: str):
    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            items = list(_discovered(kind).values())
            return answer({"schemas": ["urn:ietf:params:scim:api:messages:2.0:ListResponse"],
                           "totalResults": len(items), "startIndex": 1, "itemsPerPage": len(items),
                           "Resources": [i.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, mode="json")
                                         for i in items]})
        return await _serve(request, work)
    return handler


@_route("/{name}/{{ident}}", ["GET"], DISCOVERY[1:])
def discovery_item(kind: str):
    async def handler(request: Request, ident: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            found = _discovered(kind).get(ident)
            if found is None:
                raise NotFoundException(detail=f"No {kind[:-1]} {ident[:100]}")
            return answer(found.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, mode="json"))
        return await _serve(request, work)
    return handler


@_route("/{name}", ["GET"], ENDPOINTS)
def list_resources(endpoint: str):
    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            search = provisioning.search_request(endpoint, dict(request.query_params))
            return _listing(provisioning.search(db, actor, endpoint, search), endpoint, search)
        return await _serve(request, work)
    return handler


@_route("/{name}/.search", ["POST"], ENDPOINTS)
def search_resources(endpoint: str):
    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            search = provisioning.search_request(endpoint, await _body(request))
            return _listing(provisioning.search(db, actor, endpoint, search), endpoint, search)
        return await _serve(request, work)
    return handler


@_route("/.search", ["POST"])
def search_everything(_: str):
    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            raise NotImplementedException(detail="Search /Users/.search or /Groups/.search")
        return await _serve(request, work)
    return handler


@_route("/{name}", ["POST"], ENDPOINTS)
def create_resource(endpoint: str):
    create = provisioning.create_user if endpoint == "Users" else provisioning.create_group

    async def handler(request: Request) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            return _one(create(db, actor, await _body(request), audit_context(request)), 201)
        return await _serve(request, work)
    return handler


@_route("/{name}/{{ident}}", ["GET"], ENDPOINTS)
def read_resource(endpoint: str):
    async def handler(request: Request, ident: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            params = _parameters(endpoint, request)
            resource = provisioning.read(db, actor, endpoint, ident, params)
            asked = [tag.strip() for tag in request.headers.get("if-none-match", "").split(",")]
            if resource.meta.version in asked or "*" in asked:
                return Response(status_code=304, headers={"ETag": resource.meta.version})
            return _one(resource, params=params)
        return await _serve(request, work)
    return handler


@_route("/{name}/{{ident}}", ["PUT"], ENDPOINTS)
def replace_resource(endpoint: str):
    replace = provisioning.replace_user if endpoint == "Users" else provisioning.replace_group

    async def handler(request: Request, ident: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            return _one(replace(db, actor, ident, await _body(request), request.headers.get("if-match", ""),
                                audit_context(request)))
        return await _serve(request, work)
    return handler


@_route("/{name}/{{ident}}", ["PATCH"], ENDPOINTS)
def patch_resource(endpoint: str):
    patch = provisioning.patch_user if endpoint == "Users" else provisioning.patch_group

    async def handler(request: Request, ident: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            return _one(patch(db, actor, ident, await _body(request), request.headers.get("if-match", ""),
                              audit_context(request)))
        return await _serve(request, work)
    return handler


@_route("/{name}/{{ident}}", ["DELETE"], ENDPOINTS)
def delete_resource(endpoint: str):
    delete = provisioning.delete_user if endpoint == "Users" else provisioning.delete_group

    async def handler(request: Request, ident: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            delete(db, actor, ident, request.headers.get("if-match", ""), audit_context(request))
            return Response(status_code=204)
        return await _serve(request, work)
    return handler


def _served(path: str) -> bool:
    """Whether a path names an endpoint above (then a method it does not take is 405, not 404)."""
    head, _, rest = path.partition("/")
    if head in ("ServiceProviderConfig", ".search"):
        return not rest
    return head in ("ResourceTypes", "Schemas", *ENDPOINTS) and rest.count("/") == 0


@_route("/{{path:path}}", ["GET", "POST", "PUT", "PATCH", "DELETE"])
def elsewhere(_: str):
    async def handler(request: Request, path: str) -> Response:
        async def work(db: Session, actor: Actor) -> Response:
            if path and _served(path):
                return refusal(_MethodNotAllowed(detail=f"{request.method} is not served on /{path[:100]}"))
            raise NotFoundException(detail=f"Nothing is served at /{path[:100]}")
        return await _serve(request, work)
    return handler


class _MethodNotAllowed(SCIMException):
    status = 405


class _Internal(SCIMException):
    status = 500
