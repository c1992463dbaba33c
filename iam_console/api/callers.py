"""Who is calling, from any of Casdoor's credentials, in Casdoor's order:
an access token, then client id/secret, then an access key, then the session cookie."""

from __future__ import annotations

import base64
import binascii

from fastapi import Request
from sqlmodel import Session
from starlette.requests import cookie_parser

from ..models import AuthSession, User
from ..services import access, credentials
from ..services.auth import account_for_token
from ..services.errors import ServiceError

SESSION_COOKIE = "iam_session"
RESET_COOKIE = "iam_reset"  # a verified forgotten-password code's grant (services/recovery.py)
MFA_COOKIE = "iam_mfa"  # a pending sign-in that owes its second factor (services/auth.py)
# while a global admin impersonates someone: the admin's own session, given back on exit
IMPERSONATOR_COOKIE = "iam_impersonator"


def client_ip(request: Request) -> str:
    return request.client.host if request.client else ""


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


def basic_credentials(request: Request) -> tuple[str, str] | None:
    header = request.headers.get("authorization", "")
    if not header.lower().startswith("basic "):
        return None
    try:
        user, _, password = base64.b64decode(header[6:].strip()).decode().partition(":")
    except (binascii.Error, UnicodeDecodeError):
        return None
    return user, password


def bearer_token(request: Request) -> str:
    header = request.headers.get("authorization", "")
    for scheme in ("bearer ", "dpop "):
        if header.lower().startswith(scheme):
            return header[len(scheme):].strip()
    return request.query_params.get("accessToken") or request.query_params.get("access_token") or ""


def actor(db: Session, request: Request) -> access.Actor:
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
