"""The API's two cross-cutting checks, and its metrics, as plain ASGI middleware (Starlette's
BaseHTTPMiddleware costs about 0.65 ms a request, measured by bench/oauth_grants.py).
Reflex mounts its own app (the pages, the /_event websocket) under the API's, so
they see every request, the console's websocket included.

- CSRF: a cookie-authenticated write (or a sign-in) from another origin is refused,
  and so is a websocket opened from another origin.
- CORS: OAuth clients in browsers call the token, userinfo and discovery
  endpoints from their own origins; those endpoints never read the session cookie."""

from __future__ import annotations

import functools
import time

from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from iam_console.api.callers import client_ip, other_credentials, session_cookie
from iam_console.api.envelope import error, language
from iam_console.audit import records
from iam_console.oauth.api import cross_origin
from iam_console.operations import metrics
from iam_console.settings import console_origins, origin_of, settings

UNSAFE_METHODS = {"POST", "PUT", "PATCH", "DELETE"}
SIGN_IN_PATHS = frozenset({"/api/login", "/api/webauthn/signin/finish", "/api/federation/google-one-tap",
                           "/api/federation/google-one-tap/start"})  # no cookie yet, one to come
# SAML messages another site's page posts (a service provider's AuthnRequest, an identity
# provider's Response): they do not act as the cookie's user, and a signed message, not the
# origin, is what they trust (saml/saml_idp.py, saml/saml_sp.py)
POSTED_BY_OTHER_SITES = ("/api/acs", "/api/saml/redirect/")


@functools.cache
def allowed_origins() -> frozenset[str]:
    return console_origins(settings.origin)


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


def _posted_by_other_sites(path: str) -> bool:
    return path == POSTED_BY_OTHER_SITES[0] or path.startswith(POSTED_BY_OTHER_SITES[1])


class CsrfGuard:
    """Requests that would ride on the session cookie must come from the console's origin.

    - An unsafe request (POST, PUT, PATCH, DELETE) that carries the session cookie, or
      that signs in, is refused when its origin (Origin, else Referer) is another one.
      The cookie is read as authentication reads it (callers.session_cookie).
    - An unsafe request that the session cookie authenticates (it carries the cookie and no
      credential read before it, callers.other_credentials) is refused when it carries
      neither header: every current browser sends Origin on each unsafe request, so the
      guard never has to guess where a cookie-borne write comes from. Clients with
      credentials of their own (the SDKs' client id and secret, access tokens, access keys)
      need no header, nor does a sign-in (its password, code or assertion authenticates it;
      a cookie beside it only names the session it replaces).
    - The OAuth endpoints that other origins call (oauth.cross_origin) never read the cookie,
      and the SAML messages other sites' pages post (POSTED_BY_OTHER_SITES) never act as the
      cookie's user: neither rule applies to them.
    - A websocket handshake (the console's /_event) with another Origin is refused with
      HTTP 403 before the socket opens: the socket acts as the cookie's user."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and foreign(Headers(scope=scope).get("origin")):
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008})  # before accept: HTTP 403
            return
        if (scope["type"] == "http" and scope["method"] in UNSAFE_METHODS and not cross_origin(scope["path"])
                and not _posted_by_other_sites(scope["path"])):
            refusal = _csrf_refusal(Request(scope))
            if refusal is not None:
                await refusal(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _csrf_refusal(request: Request) -> Response | None:
    """The answer (HTTP 403, the envelope's error) to an unsafe request the guard refuses, else None."""
    has_cookie = bool(session_cookie(request.headers.get("cookie")))
    signs_in = request.scope["path"] in SIGN_IN_PATHS
    origin = request_origin(request.headers)
    if (has_cookie or signs_in) and foreign(origin):
        refusal = error(request, "The request's origin %s is not allowed", origin)
    # a sign-in is authenticated by what it carries; a cookie beside it only names the session it replaces
    elif has_cookie and origin is None and not signs_in and not other_credentials(request):
        refusal = error(request, "A request signed in by the session cookie must carry an Origin or Referer header")
    else:
        return None
    refusal.status_code = 403
    return refusal


class CrossOrigin:
    """CORS: the public OAuth endpoints and discovery documents (oauth.cross_origin), which
    never read the session cookie, answer every origin (`*`, no credentials), preflight
    included. Nothing else answers another origin: the console is served from one origin
    and needs no CORS, and an answer that let another origin read the API with the user's
    cookie (a page on another port, or a sibling subdomain, is same-site: the cookie goes
    along) would give that page everything the user sees. Reflex's own CORS, which echoes
    any origin with credentials, is therefore left out (without_reflex_cors)."""

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


class SecurityHeaders:
    """The headers every answer carries, the console's pages and websocket's HTTP included
    (Reflex's app is mounted under the API's), documented in docs/security.md:
    - X-Content-Type-Options nosniff: a file is never read as another type than declared;
    - X-Frame-Options SAMEORIGIN and CSP frame-ancestors 'self': no other site frames a page
      (the authorize page's consent, the console's buttons) to trick a click;
    - Referrer-Policy same-origin: no URL of the console (an authorize request's state, an
      edit page's path) reaches another site as a Referer;
    - Strict-Transport-Security on an https:// IAM_ORIGIN;
    - Cache-Control no-store on /api/ answers that set none (they carry accounts and secrets)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.fixed = [(b"x-content-type-options", b"nosniff"), (b"x-frame-options", b"SAMEORIGIN"),
                      (b"content-security-policy", b"frame-ancestors 'self'"),
                      (b"referrer-policy", b"same-origin")]
        if settings.cookie_secure:
            self.fixed.append((b"strict-transport-security", b"max-age=31536000"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        api = scope["path"].startswith("/api/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in self.fixed:
                    if name.decode() not in headers:
                        headers.raw.append((name, value))
                if api and "cache-control" not in headers:
                    headers["Cache-Control"] = "no-store"
            await send(message)

        await self.app(scope, receive, send_with_headers)


def without_reflex_cors() -> None:
    """Reflex wraps the API, its own app and the top-level app in Starlette's CORS middleware
    with its configured origins and credentials allowed; with the default '*' it echoes any
    Origin with Access-Control-Allow-Credentials. The server's CORS is CrossOrigin's alone, so
    Reflex's hook installs nothing. Called before the rx.App is made."""
    from reflex.app import App

    App._add_cors = staticmethod(lambda api: None)


class AuditContext:
    """Every /api/ request is the current call of the audit trail while it is served
    (audit/records.py, CURRENT_CALL): a record written by any service during it has the
    request's method, URI, client address (callers.client_ip) and language."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not scope["path"].startswith("/api/"):
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        uri = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        token = records.CURRENT_CALL.set(records.Call(method=request.method, uri=uri, client_ip=client_ip(request),
                                                       language=language(request)))
        try:
            await self.app(scope, receive, send)
        finally:
            records.CURRENT_CALL.reset(token)


class RequestMetrics:
    """Times every HTTP request and counts it under the route template that answered
    (operations/metrics.py); outermost, so refusals by the other middleware count too.
    Websockets are long-lived connections, not requests: not timed."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500  # what the server answers when the app raises before it starts a response
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            metrics.observe(metrics.route_of(scope), scope["method"], status, time.perf_counter() - started)
