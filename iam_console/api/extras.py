"""Routes beyond the CRUD family that the console and the SDKs call."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from sqlmodel import select

from iam_console import models as m
from iam_console.api.bodies import form_fields, form_or_json, json_body, json_list
from iam_console.api.callers import RESET_COOKIE, actor, client_ip
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.applications import applications
from iam_console.core import builtin as b
from iam_console.core import crud, policy
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_console.home import dashboard
from iam_console.identity import accounts, invitations, users
from iam_console.signin import messages, recovery

router = APIRouter(prefix="/api", tags=["extras"])


def _flag(value: str | None) -> bool | None:
    """isOnline as the SDKs send it: '' (all), 1/0, true/false."""
    if value in (None, ""):
        return None
    return value.lower() in ("1", "true")


@router.get("/get-organization-names")
async def get_organization_names(request: Request) -> JSONResponse:
    """Names and display names of the organizations the caller may see."""
    with session_scope() as db:
        rows = accounts.organization_names(db, actor(db, request))
    return ok([{"owner": b.ADMIN_OWNER, "name": n, "displayName": d} for n, d in rows])


@router.get("/get-default-application")
async def get_default_application(request: Request) -> JSONResponse:
    _, organization = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        return ok(applications.default_of(db, actor(db, request), organization))


@router.get("/get-organization-applications")
async def get_organization_applications(request: Request) -> JSONResponse:
    params = dict(request.query_params)
    organization = params.get("organization", "")
    if not organization:
        raise ServiceError("The organization cannot be empty")
    with session_scope() as db:
        page = crud.list_records(db, actor(db, request), REGISTRY["application"], params, organization=organization)
    return ok(page.rows, page.total)


@router.get("/get-user-application")
async def get_user_application(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        return ok(applications.of_user(db, actor(db, request), owner, name))


@router.get("/get-permissions-by-submitter")
async def get_permissions_by_submitter(request: Request) -> JSONResponse:
    params = dict(request.query_params)
    with session_scope() as db:
        caller = actor(db, request)
        policy.require_user(caller)
        page = crud.list_records(db, caller, REGISTRY["permission"], params, owner=caller.organization,
                                 where=[m.Permission.submitter == caller.name])
    # unpaged, as Casdoor answers it: data2 is the count
    return ok(page.rows, page.total if page.total is not None else len(page.rows))


@router.post("/update-permissions", summary="Update several permissions at once (a JSON list, each with its "
             "owner and name); all or none")
async def update_permissions(request: Request) -> JSONResponse:
    permissions = await json_list(request, "permissions")
    with session_scope() as db:
        return ok(crud.update_records(db, actor(db, request), REGISTRY["permission"], permissions,
                                      audit_context(request)))


@router.get("/get-user-count")
async def get_user_count(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:
        return ok(users.count(db, actor(db, request), params.get("owner", ""), _flag(params.get("isOnline"))))


@router.get("/get-sorted-users")
async def get_sorted_users(request: Request) -> JSONResponse:
    params = request.query_params
    try:
        limit = int(params.get("limit") or 10)
    except ValueError:
        raise ServiceError("The parameter limit must be an integer") from None
    with session_scope() as db:
        return ok(users.sorted_users(db, actor(db, request), params.get("owner", ""),
                                            params.get("sorter", ""), limit))


@router.post("/set-password")
async def set_password(request: Request) -> JSONResponse:
    """With `code` (the forget flow), the grant verify-code gave this browser stands in for a
    signed-in caller and the old password, once."""
    form = await form_or_json(request)
    owner, name, new = str(form.get("userOwner", "")), str(form.get("userName", "")), str(form.get("newPassword", ""))
    code = str(form.get("code", ""))
    with session_scope() as db:
        if code:
            recovery.set_password(db, owner, name, new, code, request.cookies.get(RESET_COOKIE, ""),
                                  request=audit_context(request))
        else:
            users.set_password(db, actor(db, request), owner, name, str(form.get("oldPassword", "")), new,
                               audit_context(request))
    response = ok()
    if code:
        response.delete_cookie(RESET_COOKIE, path="/api/")
    return response


@router.post("/add-user-keys")
async def add_user_keys(request: Request) -> JSONResponse:
    """A new accessKey and accessSecret for the user named in the body (owner, name): only the
    secret's hash is kept, so this answer is the one place it is shown."""
    body = {k.lower(): v for k, v in (await json_body(request)).items()}
    owner, name = body.get("owner"), body.get("name")
    if not isinstance(owner, str) or not isinstance(name, str) or not owner or not name:
        raise ServiceError("The owner and name cannot be empty")
    with session_scope() as db:
        key, secret = users.add_keys(db, actor(db, request), owner, name, audit_context(request))
    # data as Casdoor answers it; the new pair in data2, the one time the secret is shown
    return ok(True, {"accessKey": key, "accessSecret": secret})


@router.post("/check-user-password")
async def check_user_password(request: Request) -> JSONResponse:
    owner, name = crud.split_id(request.query_params.get("id", ""))
    body = {k.lower(): v for k, v in (await json_body(request)).items()}
    password = body.get("password")
    if not isinstance(password, str) or not password:
        raise ServiceError("The password cannot be empty")
    with session_scope() as db:
        users.check_user_password(db, actor(db, request), owner, name, password)
    return ok()


@router.post("/remove-user-from-group")
async def remove_user_from_group(request: Request) -> JSONResponse:
    params = dict(request.query_params)
    if request.headers.get("content-type", "").startswith(("multipart", "application/x-www-form")):
        params.update(await form_fields(request))
    owner, name, group = params.get("owner", ""), params.get("name", ""), params.get("groupName", "")
    if not owner or not name or not group:
        raise ServiceError("The owner, name and groupName cannot be empty")
    with session_scope() as db:
        return ok(users.remove_from_group(db, actor(db, request), owner, name, group, audit_context(request)))


@router.post("/add-record")
async def add_record(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        return ok(crud.add_client_record(db, actor(db, request), body))


@router.post("/get-records-filter", summary="Records whose fields equal the given ones (admins)")
async def get_records_filter(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        return ok(crud.filter_records(db, actor(db, request), body))


def _sender(send):
    """A POST route handing its JSON body to one of signin/messages.py's senders."""
    async def handler(request: Request) -> JSONResponse:
        body = await json_body(request)
        with session_scope() as db:
            send(db, actor(db, request), body, audit_context(request))
        return ok()
    return handler


for _path, _send, _summary in (
        ("/send-email", messages.send_email, "Email through the organization's provider (admins and application "
                                             "clients)"),
        ("/send-sms", messages.send_sms, "SMS through the organization's provider (admins and application clients)"),
        ("/send-notification", messages.send_notification, "A notification through the organization's provider")):
    router.add_api_route(_path, _sender(_send), methods=["POST"], summary=_summary, name=_send.__name__,
                         response_class=JSONResponse)


@router.post("/send-invitation", summary="Email an invitation (id=owner/name; body: a list of addresses)")
async def send_invitation(request: Request) -> JSONResponse:
    body = await json_list(request, "email addresses")
    owner, name = crud.split_id(request.query_params.get("id", ""))
    with session_scope() as db:
        messages.send_invitation(db, actor(db, request), owner, name, body, audit_context(request))
    return ok()


@router.get("/get-invitation-info", summary="The invitation a code opens for an application's sign-up page "
                                            "(code, applicationId=admin/name), without its codes, quota or group")
async def get_invitation_info(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:
        return ok(invitations.info_by_code(db, params.get("applicationId", ""), params.get("code", ""),
                                           client_ip(request)))


@router.get("/health", summary="Whether the server is up and its database answers")
async def health() -> JSONResponse:
    with session_scope() as db:
        db.exec(select(1)).one()
    return ok()


@router.get("/get-dashboard")
async def get_dashboard(request: Request) -> JSONResponse:
    with session_scope() as db:
        return ok(dashboard.counts(db, actor(db, request), request.query_params.get("owner", "")))
