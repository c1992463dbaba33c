"""The LDAP routes beyond CRUD: the directory's users and their sync."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..db import session_scope
from ..services import crud, ldap
from ..services.errors import ServiceError
from ..services.json_input import parse_json
from .bodies import MAX_BODY_BYTES
from .callers import actor
from .envelope import ok
from .resources import audit_context

router = APIRouter(prefix="/api", tags=["ldap"])
MAX_SYNC_BODY_BYTES = 16 * MAX_BODY_BYTES  # a few tens of thousands of directory users in one call


@router.get("/get-ldap-users", summary="The directory's users (id=owner/ldapId) and the uuids already synced")
async def get_ldap_users(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        users, exist = ldap.directory_users(db, actor(db, request), owner, name)
    return ok({"users": users, "existUuids": exist})


async def _user_list(request: Request) -> list:
    raw = await request.body()
    if len(raw) > MAX_SYNC_BODY_BYTES:
        raise ServiceError("The request body is too large")
    value = parse_json(raw) if raw.strip() else None
    if not isinstance(value, list):
        raise ServiceError("The request body must be a list of LDAP users")
    return value


@router.post("/sync-ldap-users", summary="Add the posted directory users (id=owner/ldapId) to its organization")
async def sync_ldap_users(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        caller = actor(db, request)
        ldap.server(db, caller, owner, name)  # who may: refused before the body is read
        result = ldap.sync_users(db, caller, owner, name, await _user_list(request), audit_context(request))
    return ok({"exist": result.exist, "failed": result.failed})
