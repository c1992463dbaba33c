"""The API's two cross-cutting checks, as plain ASGI middleware (Starlette's
BaseHTTPMiddleware costs about 0.65 ms a request, measured by bench/oauth_grants.py).

- CSRF: a cookie-authenticated write (or a sign-in) from another origin is refused.
- CORS: OAuth clients in browsers call the token, userinfo and discovery
  endpoints from their own origins; those endpoints never read the session cookie."""

from __future__ import annotations

import functools
from http.cookies import CookieError, SimpleCookie
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..settings import settings
from .callers import SESSION_COOKIE
from .envelope import error
from .oauth import CROSS_ORIGIN_PATHS, cross_origin

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
SIGN_IN_PATHS = frozenset({"/api/login", "/api/webauthn/signin/finish"})  # no cookie yet, one to come


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


@functools.cache
def allowed_origins() -> frozenset[str]:
    """IAM_ORIGIN; on a loopback origin, its other loopback spellings on the same port too."""
    parts = urlsplit(settings.origin)
    origins = {origin_of(settings.origin)}
    if parts.hostname in ("localhost", "127.0.0.1", "::1"):
        port = f":{parts.port}" if parts.port else ""
        origins |= {f"{parts.scheme}://{name}{port}" for name in LOOPBACK_NAMES}
    return frozenset(origins)


def _has_session_cookie(headers: Headers) -> bool:
    try:
        return SESSION_COOKIE in SimpleCookie(headers.get("cookie", ""))
    except CookieError:
        return False


class CsrfGuard:
    """A browser always sends Origin on a cross-site POST; a write that would ride
    on the session cookie (or sign in) from another site is refused. Clients with
    credentials of their own send no cookie and pass."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS:
            path = scope["path"]
            if path.startswith("/api/") and path not in CROSS_ORIGIN_PATHS:
                headers = Headers(scope=scope)
                origin = headers.get("origin")
                rides_cookie = path in SIGN_IN_PATHS or _has_session_cookie(headers)
                if rides_cookie and origin and origin_of(origin) not in allowed_origins():
                    response = error(Request(scope), "The request's origin %s is not allowed", origin)
                    await response(scope, receive, send)
                    return
        await self.app(scope, receive, send)


class OAuthCors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not cross_origin(scope["path"]):
            await self.app(scope, receive, send)
            return
        if scope["method"] == "OPTIONS":
            response = Response(status_code=204, headers={
                "Access-Control-Allow-Origin": "*", "Access-Control-Allow-Methods": "GET, POST, OPTIONS",
                "Access-Control-Allow-Headers": "Authorization, Content-Type, DPoP",
                "Access-Control-Max-Age": "600"})
            await response(scope, receive, send)
            return

        async def send_with_cors(message: Message) -> None:
            if message["type"] == "http.response.start":
                MutableHeaders(scope=message)["Access-Control-Allow-Origin"] = "*"
            await send(message)

        await self.app(scope, receive, send_with_cors)
