"""Sign-in, sign-out and the signed-in account (casdoor-api.md §1, 'Login/account')."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from ..db import session_scope
from ..models import Organization, User
from ..models.base import masked, to_wire
from ..services import auth
from ..services.errors import Unauthorized
from ..settings import settings
from .bodies import field, json_object
from .callers import SESSION_COOKIE, client_ip, session_token, signed_in
from .envelope import ok

router = APIRouter(prefix="/api", tags=["account"])


def user_wire(user: User) -> dict:
    return masked(to_wire(user), User)


def organization_wire(organization: Organization | None) -> dict | None:
    return masked(to_wire(organization), Organization) if organization else None


@router.post("/login")
async def login(request: Request) -> JSONResponse:
    """Casdoor's AuthForm: application, organization, username, password, autoSignin, type, signinMethod."""
    body = await json_object(request)
    form = auth.SignInRequest(
        application=field(body, "application", str, ""),
        organization=field(body, "organization", str, ""),
        username=field(body, "username", str, ""),
        password=field(body, "password", str, ""),
        auto_signin=field(body, "autoSignin", bool, False),
        type=field(body, "type", str, "login"),
        signin_method=field(body, "signinMethod", str, "Password"),
        client_ip=client_ip(request),
        user_agent=request.headers.get("user-agent", ""),
        previous_token=session_token(request),
    )
    with session_scope() as db:
        result = auth.sign_in(db, form)
        response = ok(f"{result.user.owner}/{result.user.name}")
    response.set_cookie(
        SESSION_COOKIE, result.token, httponly=True, samesite="lax", secure=settings.cookie_secure, path="/",
        max_age=int((result.expires_at - result.user.last_signin_time).total_seconds()) if result.persistent
        else None,
    )
    return response


@router.get("/logout", operation_id="logout_get")
@router.post("/logout", operation_id="logout_post")
async def logout(request: Request) -> JSONResponse:
    """Without an id_token_hint: ends the cookie's session; data is the user,
    data2 the application's homepage (where the console goes next, if set)."""
    with session_scope() as db:
        ended = auth.sign_out(db, session_token(request), client_ip(request))
    response = ok(ended.user_id, ended.homepage) if ended else ok()
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get("/get-account")
async def get_account(request: Request) -> JSONResponse:
    with session_scope() as db:
        found = signed_in(db, request)
        if found is None:
            raise Unauthorized()
        user = found[0]
        organization = auth.organization_of(db, user)
        return ok(user_wire(user), organization_wire(organization), sub=user.uuid, name=user.name)
