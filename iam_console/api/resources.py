"""The CRUD family of every resource kind, generated from the registry:
get-Xs, get-global-Xs, get-X, add-X, update-X, delete-X."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import json_body
from iam_console.api.callers import actor, client_ip
from iam_console.api.envelope import language, ok
from iam_console.core import crud
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY, Kind
from iam_console.db import session_scope
from iam_console.models.base import attribute_named


def audit_context(request: Request) -> crud.Request:
    uri = request.url.path + (f"?{request.url.query}" if request.url.query else "")
    return crud.Request(uri=uri, client_ip=client_ip(request), language=language(request))


def _id(request: Request) -> tuple[str, str]:
    return crud.split_id(request.query_params.get("id", ""))


def _body_id(request: Request, body: dict) -> tuple[str, str]:
    """add/delete take the id from the body (owner, name); ?id= is accepted too."""
    if request.query_params.get("id") and not (body.get("owner") and body.get("name")):
        return _id(request)
    owner, name = body.get("owner"), body.get("name") or body.get("id")
    if not isinstance(owner, str) or not isinstance(name, str) or not owner or not name:
        raise ServiceError("The owner and name cannot be empty")
    return owner, name


def _list(kind: Kind, unscoped: bool) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        params = dict(request.query_params)
        # get-records names the organization organizationName
        owner = "" if unscoped else params.get("owner") or params.get("organizationName", "")
        with session_scope() as db:
            page = crud.list_records(db, actor(db, request), kind, params, owner=owner,
                                     organization=params.get("organization", ""))
        return ok(page.rows, page.total)
    return handler


def _alternative_key(kind: Kind, request: Request) -> str | None:
    """The find_by parameter addressing the record instead of ?id= (get-user?owner=&email=)."""
    params = request.query_params
    if params.get("id"):
        return None
    return next((param for param in kind.find_by if params.get(param)), None)


def _target(db, caller, kind: Kind, request: Request) -> tuple[str, str]:
    """owner/name from ?id=, or from ?owner=&userId= and the like."""
    by = _alternative_key(kind, request)
    if by is None:
        return _id(request)
    owner = request.query_params.get("owner", "")
    found = crud.find_record(db, caller, kind, owner, kind.find_by[by], request.query_params[by])
    return (owner, found["name"]) if found else (owner, "")


def _get(kind: Kind) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        params = request.query_params
        with session_scope() as db:
            caller = actor(db, request)
            by = _alternative_key(kind, request)
            if by:
                return ok(crud.find_record(db, caller, kind, params.get("owner", ""), kind.find_by[by], params[by]))
            owner, name = _id(request)
            return ok(crud.get_record(db, caller, kind, owner, name, params.get("withSecret") == "1"))
    return handler


def _add(kind: Kind) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        body = await json_body(request)
        with session_scope() as db:
            return ok(*crud.add_answer(db, actor(db, request), kind, body, audit_context(request),
                                       dry_run=request.query_params.get("dryRun") in ("1", "true")))
    return handler


def _only_columns(kind: Kind, body: dict, columns: str) -> dict:
    """update-X?columns=a,b changes only those fields (the SDKs' update_X_for_columns),
    named in camelCase or snake_case."""
    named = {c.strip().lower() for c in columns.split(",") if c.strip()}
    wanted = {attribute_named(kind.model, c) for c in named} - {None}
    return {key: value for key, value in body.items()
            if str(key).lower() in named or attribute_named(kind.model, str(key)) in wanted}


def _update(kind: Kind) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        body = await json_body(request)
        if request.query_params.get("columns"):
            body = _only_columns(kind, body, request.query_params["columns"])
        with session_scope() as db:
            caller = actor(db, request)
            owner, name = _target(db, caller, kind, request)
            if not name:
                return ok(crud.UNAFFECTED)
            return ok(crud.update_record(db, caller, kind, owner, name, body, audit_context(request)))
    return handler


def _delete(kind: Kind) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        body = await json_body(request, allow_empty=True)
        owner, name = _body_id(request, {k.lower(): v for k, v in body.items()})
        with session_scope() as db:
            return ok(crud.delete_record(db, actor(db, request), kind, owner, name, audit_context(request)))
    return handler


def generic_router() -> APIRouter:
    """The generic routes of every kind the extensions declare, as the registry holds them now."""
    router = APIRouter(prefix="/api", tags=["resources"])
    for kind in REGISTRY.values():
        plural = kind.plural_name
        router.add_api_route(f"/get-{plural}", _list(kind, False), methods=["GET"], name=f"get-{plural}",
                             summary=f"List {plural} (paged with p and pageSize)")
        if kind.global_list:
            router.add_api_route(f"/get-global-{plural}", _list(kind, True), methods=["GET"],
                                 name=f"get-global-{plural}", summary=f"List {plural} of every organization")
        if not kind.named:
            continue
        router.add_api_route(f"/get-{kind.name}", _get(kind), methods=["GET"], name=f"get-{kind.name}",
                             summary=f"Read one {kind.name} by id=owner/name")
        if not kind.writable:
            continue
        router.add_api_route(f"/add-{kind.name}", _add(kind), methods=["POST"], name=f"add-{kind.name}",
                             summary=f"Add a {kind.name}")
        router.add_api_route(f"/update-{kind.name}", _update(kind), methods=["POST"], name=f"update-{kind.name}",
                             summary=f"Update the {kind.name} id=owner/name (renaming allowed)")
        router.add_api_route(f"/delete-{kind.name}", _delete(kind), methods=["POST"], name=f"delete-{kind.name}",
                             summary=f"Delete a {kind.name} (owner and name in the body)")
    return router
