"""The LDAP routes beyond CRUD: the directory's users and their sync."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import MAX_BODY_BYTES, json_list
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import crud
from iam_console.db import session_scope
from iam_console.identity import ldap

router = APIRouter(prefix="/api", tags=["ldap"])
MAX_SYNC_BODY_BYTES = 16 * MAX_BODY_BYTES  # a few tens of thousands of directory users in one call


@router.get("/get-ldap-users", summary="The directory's users (id=owner/ldapId) and the uuids already synced")
async def get_ldap_users(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        users, exist = ldap.directory_users(db, actor(db, request), owner, name)
    return ok({"users": users, "existUuids": exist})



@router.post("/sync-ldap-users", summary="Add the posted directory users (id=owner/ldapId) to its organization")
async def sync_ldap_users(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        caller = actor(db, request)
        ldap.server(db, caller, owner, name)  # who may: refused before the body is read
        users = await json_list(request, "LDAP users", MAX_SYNC_BODY_BYTES)
        result = ldap.sync_users(db, caller, owner, name, users, audit_context(request))
    return ok({"exist": result.exist, "failed": result.failed})
