"""WebAuthn: registration for the signed-in user's own account,
sign-in with a registered credential, and delete-credential (which Casdoor's console
calls but its router lacks). Every rule is signin/webauthn.py's.

As in Casdoor, the begin routes answer the options object itself ({"publicKey": ...},
base64url bytes), errors in the envelope; the finish routes take the browser's
credential JSON as the body. The challenge stays on the server, found again through
an HttpOnly cookie scoped to these routes."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import form_or_json, json_body
from iam_console.api.callers import client_ip, session_token
from iam_console.api.callers import signed_in as session_of
from iam_console.api.envelope import ok
from iam_console.core.errors import Unauthorized
from iam_console.db import session_scope
from iam_console.settings import settings
from iam_console.signin import auth
from iam_console.signin import webauthn as service
from iam_console.signin.api.sign_in_answers import authorization_in, signed_in

router = APIRouter(prefix="/api/webauthn", tags=["webauthn"])
CEREMONY_COOKIE = "iam_webauthn"
COOKIE_PATH = "/api/webauthn"


def _ceremony(ceremony: service.Ceremony) -> JSONResponse:
    response = JSONResponse({"publicKey": ceremony.options})
    response.set_cookie(CEREMONY_COOKIE, ceremony.token, max_age=service.CHALLENGE_SECONDS, httponly=True,
                        samesite="strict", secure=settings.cookie_secure, path=COOKIE_PATH)
    return response


def _finished(response: JSONResponse) -> JSONResponse:
    response.delete_cookie(CEREMONY_COOKIE, path=COOKIE_PATH)
    return response


def _own_session(db, request: Request):
    """Registration and deletion are for the signed-in user's own account, in the console."""
    found = session_of(db, request)
    if found is None:
        raise Unauthorized()
    return found


@router.get("/signup/begin")
async def signup_begin(request: Request) -> JSONResponse:
    """Options for navigator.credentials.create() for the signed-in user."""
    with session_scope() as db:
        user, session = _own_session(db, request)
        ceremony = service.begin_registration(db, user, session, client_ip(request),
                                              request.cookies.get(CEREMONY_COOKIE, ""))
    return _ceremony(ceremony)


@router.post("/signup/finish")
async def signup_finish(request: Request) -> JSONResponse:
    """The attestation from navigator.credentials.create(); `name` (query) names the credential."""
    credential = await json_body(request)
    with session_scope() as db:
        user, session = _own_session(db, request)
        entry = service.finish_registration(db, user, session, request.cookies.get(CEREMONY_COOKIE, ""), credential,
                                            request.query_params.get("name", ""), client_ip(request))
    return _finished(ok({"id": entry["ID"], "name": entry["Name"], "createdTime": entry["CreatedTime"]}))


@router.post("/delete-credential")
async def delete_credential(request: Request) -> JSONResponse:
    """credentialID (form or JSON): one of the signed-in user's own credentials, by its stored ID."""
    body = await form_or_json(request)
    with session_scope() as db:
        user, _ = _own_session(db, request)
        deleted = service.delete_credential(db, user, body.get("credentialID", ""), client_ip(request))
    return ok("Affected" if deleted else "Unaffected")


@router.get("/signin/begin")
async def signin_begin(request: Request) -> JSONResponse:
    """owner and name (the account), application (optional: the organization's default):
    options for navigator.credentials.get() allowing that account's credentials."""
    query = request.query_params
    with session_scope() as db:
        ceremony = service.begin_authentication(db, query.get("owner", ""), query.get("name", ""),
                                                query.get("application", ""), client_ip(request),
                                                request.cookies.get(CEREMONY_COOKIE, ""))
    return _ceremony(ceremony)


@router.post("/signin/finish")
async def signin_finish(request: Request) -> JSONResponse:
    """The assertion from navigator.credentials.get(). Answers as POST /api/login does: with an
    authorization request in the query, the code (or token) and the URL to go to; autoSignin
    (query, default true) as its body field."""
    credential = await json_body(request)
    params = dict(request.query_params)
    form = auth.SignInRequest(
        application="", organization="", username="", password="",
        auto_signin=params.get("autoSignin", "true").lower() != "false", signin_method=service.METHOD,
        client_ip=client_ip(request), user_agent=request.headers.get("user-agent", ""),
        previous_token=session_token(request))
    with session_scope() as db:
        checked = authorization_in(db, params)
        if checked is not None:
            form = dataclasses.replace(form, application=checked.application.name)
        result = service.finish_authentication(db, request.cookies.get(CEREMONY_COOKIE, ""), credential, form,
                                               form.application)
        return _finished(signed_in(db, request, checked, result, service.METHOD))
