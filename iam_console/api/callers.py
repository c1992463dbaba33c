"""Who is calling, from any of Casdoor's credentials, in Casdoor's order:
an access token, then client id/secret, then an access key, then the session cookie."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import unquote_plus

from fastapi import Request, Response
from sqlmodel import Session
from starlette.requests import cookie_parser

from iam_console.core import access, addresses, outbound
from iam_console.core.errors import ServiceError
from iam_console.models import AuthSession, User
from iam_console.settings import settings
from iam_console.signin import auth, credentials
from iam_console.signin.auth import account_for_token

SESSION_COOKIE = "iam_session"
RESET_COOKIE = "iam_reset"  # a verified forgotten-password code's grant (signin/recovery.py)
MFA_COOKIE = "iam_mfa"  # a pending sign-in that owes its second factor (signin/auth.py)
# while a global admin impersonates someone: the admin's own session, given back on exit
IMPERSONATOR_COOKIE = "iam_impersonator"


def client_ip(request: Request) -> str:
    """The client's address: the peer's, or what trusted proxies forwarded (core/addresses.py)."""
    peer = request.client.host if request.client else ""
    return addresses.client_ip(peer, ",".join(request.headers.getlist("x-forwarded-for")))


def session_cookie(cookie_header: str | None) -> str:
    """The session token in a Cookie header. The one reading of the session cookie:
    the API's callers, the console's websocket and the CSRF guard all go through it,
    so that none of them can see a session another one misses. Starlette's parser is
    lenient as browsers are: a malformed neighbour (`junk=b c`) does not hide it."""
    return cookie_parser(cookie_header or "").get(SESSION_COOKIE, "")


def session_token(request: Request) -> str:
    return session_cookie(request.headers.get("cookie"))


def signed_in(db: Session, request: Request) -> tuple[User, AuthSession] | None:
    return account_for_token(db, session_token(request))


def basic_credentials(request: Request, *, form_encoded: bool = False) -> tuple[str, str] | None:
    """The HTTP Basic pair. `form_encoded`: an OAuth client's, whose id and secret are each
    form-encoded before they are joined (RFC 6749 §2.3.1), so both are decoded after the split;
    elsewhere the pair is taken as sent (the SDKs' clientId:clientSecret, as Casdoor takes it)."""
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        user, _, password = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    if form_encoded:
        return unquote_plus(user), unquote_plus(password)
    return user, password


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    for scheme in ("bearer ", "dpop "):
        if header.lower().startswith(scheme):
            return header[len(scheme):].strip()
    return request.query_params.get("accessToken") or request.query_params.get("access_token") or ""


def other_credentials(request: Request) -> bool:
    """The request carries a credential that actor() reads before the session cookie: then
    the cookie, if any, is not what authenticates it. A Basic pair counts although actor()
    falls back to the cookie when the pair is wrong: the CSRF guard that asks this has no
    database to check it, and a browser that attaches a Basic pair sends Origin as well."""
    query = request.query_params
    return bool(bearer_token(request) or (query.get("clientId") and query.get("clientSecret") is not None)
                or basic_credentials(request)
                or (query.get("accessKey") and query.get("accessSecret") is not None))


def actor(db: Session, request: Request) -> access.Actor:
    """Who is calling; the outbound calls the request makes count against their organization
    (core/outbound.py, note_caller)."""
    found = _credentials_actor(db, request)
    outbound.note_caller(found.organization)
    return found


def _credentials_actor(db: Session, request: Request) -> access.Actor:
    token = bearer_token(request)
    if token:
        return credentials.from_bearer(db, token)
    query = request.query_params
    if query.get("clientId") and query.get("clientSecret") is not None:
        return credentials.from_client_credentials(db, query["clientId"], query["clientSecret"])
    basic = basic_credentials(request)
    if basic:
        try:
            return credentials.from_client_credentials(db, *basic)
        except ServiceError:
            pass  # Casdoor ignores a wrong Basic pair: it may belong to a proxy in front
    if query.get("accessKey") and query.get("accessSecret") is not None:
        return credentials.from_access_key(db, query["accessKey"], query["accessSecret"])
    return credentials.from_session(db, session_token(request)) or access.ANONYMOUS


def with_session(request: Request, response: Response, result: auth.SignedIn) -> Response:
    """The response with the new session's cookie (and a pending second factor's cookie gone)."""
    if MFA_COOKIE in request.cookies:  # a pending second factor is settled
        response.delete_cookie(MFA_COOKIE, path="/api/")
    response.set_cookie(
        SESSION_COOKIE, result.token, httponly=True, samesite="lax", secure=settings.cookie_secure, path="/",
        max_age=int((result.expires_at - result.user.last_signin_time).total_seconds()) if result.persistent
        else None,
    )
    return response


def with_pending_second_factor(response: Response, owed: auth.SecondFactorOwed) -> Response:
    """The response with the cookie naming a sign-in that still owes its second factor."""
    response.set_cookie(MFA_COOKIE, owed.token, httponly=True, samesite="lax", secure=settings.cookie_secure,
                        path="/api/", max_age=auth.PENDING_MINUTES * 60)
    return response
