"""The API's two cross-cutting checks, as plain ASGI middleware (Starlette's
BaseHTTPMiddleware costs about 0.65 ms a request, measured by bench/oauth_grants.py).
Reflex mounts its own app (the pages, the /_event websocket) under the API's, so
they see every request, the console's websocket included.

- CSRF: a cookie-authenticated write (or a sign-in) from another origin is refused,
  and so is a websocket opened from another origin.
- CORS: OAuth clients in browsers call the token, userinfo and discovery
  endpoints from their own origins; those endpoints never read the session cookie."""

from __future__ import annotations

import functools
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..settings import settings
from .callers import session_cookie
from .envelope import error
from .oauth import cross_origin

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


def request_origin(headers: Headers) -> str | None:
    """Where a browser says the request comes from: Origin, else the origin of the
    Referer (browsers that omit Origin on a same-origin form still send Referer);
    None when the request carries neither."""
    origin = headers.get("origin")
    if origin is not None:
        return origin
    referer = headers.get("referer")
    return origin_of(referer) if referer else None


def foreign(origin: str | None) -> bool:
    """An origin other than the console's own ("null", a sandboxed page's, included)."""
    return origin is not None and origin_of(origin) not in allowed_origins()


class CsrfGuard:
    """Requests that would ride on the session cookie must come from the console's origin.

    - An unsafe request (POST, PUT, PATCH, DELETE) that carries the session cookie, or
      that signs in, is refused when its origin (Origin, else Referer) is another one.
      The cookie is read as authentication reads it (callers.session_cookie). A request
      with neither header passes: every current browser sends Origin on each unsafe
      request, so such a request does not come from a page; clients with credentials of
      their own (the SDKs) send no cookie at all. The OAuth endpoints that other origins
      call (oauth.cross_origin) never read the cookie.
    - A websocket handshake (the console's /_event) with another Origin is refused with
      HTTP 403 before the socket opens: the socket acts as the cookie's user."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and foreign(Headers(scope=scope).get("origin")):
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        if scope["type"] == "http" and scope["method"] in UNSAFE_METHODS and not cross_origin(scope["path"]):
            headers = Headers(scope=scope)
            rides_cookie = scope["path"] in SIGN_IN_PATHS or bool(session_cookie(headers.get("cookie")))
            origin = request_origin(headers)
            if rides_cookie and foreign(origin):
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
