"""Casdoor's Casbin routes: enforce, batch-enforce, what a user may do, and an enforcer's
policies (docs/api.md, "Authorization"); the rules are in authorization/enforcement.py."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import MAX_BODY_BYTES
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.authorization import casbin_cli, enforcement
from iam_console.core import policy
from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json
from iam_console.db import session_scope

router = APIRouter(prefix="/api", tags=["enforce"])
MAX_BATCH_BYTES = 16 * MAX_BODY_BYTES


async def _body(request: Request, limit: int = MAX_BODY_BYTES) -> Any:
    raw = await request.body()
    if len(raw) > limit:
        raise ServiceError("The request body is too large")
    if not raw.strip():
        raise ServiceError("The request body should not be empty")
    return parse_json(raw)


def _requests(body: Any, batch: bool) -> list[list[Any]]:
    if batch:
        if not isinstance(body, list) or not all(isinstance(r, list) for r in body):
            raise ServiceError("The request body must be a list of Casbin requests")
        return body
    if not isinstance(body, list):
        raise ServiceError("The request body must be a Casbin request: a list of values")
    return [body]


@router.post("/enforce", summary="Casbin's enforce, by permissionId, modelId, resourceId, enforcerId or owner")
async def enforce(request: Request) -> JSONResponse:
    body = await _body(request)
    with session_scope() as db:
        data, keys = enforcement.enforce(db, actor(db, request), dict(request.query_params),
                                         _requests(body, False), batch=False)
    return ok(data, keys)


@router.post("/batch-enforce", summary="Casbin's batch enforce, by permissionId, modelId, enforcerId or owner")
async def batch_enforce(request: Request) -> JSONResponse:
    body = await _body(request, MAX_BATCH_BYTES)
    with session_scope() as db:
        data, keys = enforcement.enforce(db, actor(db, request), dict(request.query_params),
                                         _requests(body, True), batch=True)
    return ok(data, keys)


def _all(what: str):
    async def route(request: Request) -> JSONResponse:
        with session_scope() as db:
            return ok(enforcement.all_of(db, actor(db, request), request.query_params.get("userId", ""), what))
    route.__name__ = f"get_all_{what}"
    return route


for _what in ("objects", "actions", "roles"):
    router.add_api_route(f"/get-all-{_what}", _all(_what), methods=["GET"],
                         summary=f"The {_what} of the permissions of a user (userId=owner/name, else the caller)")


@router.get("/get-permissions-by-role", summary="The permissions naming a role (id=owner/name)")
async def get_permissions_by_role(request: Request) -> JSONResponse:
    with session_scope() as db:
        found = enforcement.permissions_by_role(db, actor(db, request), request.query_params.get("id", ""))
    return ok(found, len(found))


@router.get("/get-policies", summary="An enforcer's policies (id=owner/name), or an adapter's test (adapterId)")
async def get_policies(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:
        return ok(enforcement.policies(db, actor(db, request), params.get("id", ""), params.get("adapterId", "")))


@router.post("/get-filtered-policies", summary="An enforcer's policies matching every filter of the body")
async def get_filtered_policies(request: Request) -> JSONResponse:
    body = await _body(request)
    if not isinstance(body, list):
        raise ServiceError("The request body must be a list of filters")
    with session_scope() as db:
        return ok(enforcement.filtered_policies(db, actor(db, request), request.query_params.get("id", ""), body))


def _write(action: str, limit: int = MAX_BODY_BYTES):
    async def route(request: Request) -> JSONResponse:
        body = await _body(request, limit)
        with session_scope() as db:
            affected = enforcement.write_policy(db, actor(db, request), action, request.query_params.get("id", ""),
                                                body)
        return ok("Affected" if affected else "Unaffected")
    route.__name__ = action.replace("-", "_")
    return route


for _action, _summary, _limit in (
        ("add-policy", "Add one rule to an enforcer (id=owner/name): Affected, or a duplicate", MAX_BODY_BYTES),
        ("update-policy", "Replace a rule of an enforcer: the body is [old, new]", MAX_BODY_BYTES),
        ("remove-policy", "Remove one rule from an enforcer", MAX_BODY_BYTES),
        ("add-policies", "Add a list of rules to an enforcer, all or none (not in Casdoor)", MAX_BATCH_BYTES),
        ("remove-policies", "Remove a list of rules from an enforcer, all or none (not in Casdoor)", MAX_BATCH_BYTES)):
    router.add_api_route(f"/{_action}", _write(_action, _limit), methods=["POST"], summary=_summary)


@router.get("/run-casbin-command", summary="The model editor's Casbin CLI calls (enforce, enforceEx, --version), "
            "answered in process by pycasbin: language, args (a JSON list), m and t (the editor's identifier)")
async def run_casbin_command(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:
        caller = actor(db, request)
    return ok(casbin_cli.run(caller, params.get("language", ""), params.get("args", ""), params.get("m", ""),
                             params.get("t", "")))


@router.post("/refresh-engines", summary="Forget every enforcer this worker keeps in memory (global admins)")
async def refresh_engines(request: Request) -> JSONResponse:
    with session_scope() as db:
        caller = actor(db, request)
        policy.require_admin(caller)
        if not caller.is_global_admin:
            raise ServiceError(policy.UNAUTHORIZED)  # every organization's enforcers
    enforcement.refresh()
    return ok(True)
