"""OAuth 2.0 and OpenID Connect endpoints. Token, refresh,
introspection, revocation, device, userinfo, client registration and resource metadata answers
are raw RFC JSON, not the envelope; their errors are RFC errors (RFC 6749, RFC 7591)."""

from __future__ import annotations

import html
import json
from dataclasses import replace
from typing import Any
from urllib.parse import parse_qsl

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response

# imported, the token exchange joins the token endpoint, and metadata documents' clients the
# authorization request
import iam_console.oauth.exchange
import iam_console.oauth.metadata_documents
from iam_console.api.bodies import MAX_BODY_BYTES, form_fields, json_body
from iam_console.api.callers import SESSION_COOKIE, basic_credentials, bearer_token, client_ip, session_token, signed_in
from iam_console.api.envelope import ok
from iam_console.core import lookup, navigation
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.oauth import clients, dpop, jwt_tokens, logout, oauth, registration, resources, tokens
from iam_console.settings import settings
from iam_console.signin import auth

router = APIRouter(tags=["oauth"])
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
# clients call these from other origins, with their own credentials and never the session cookie
PAR_PATH = "/api/login/oauth/par"
CROSS_ORIGIN_PATHS = frozenset({
    "/api/login/oauth/access_token", "/api/login/oauth/refresh_token", "/api/login/oauth/introspect",
    "/api/login/oauth/revoke", "/api/device-auth", "/api/userinfo", "/api/user", PAR_PATH,
})
WELL_KNOWN = "/.well-known/"  # discovery documents and key sets: public, read by clients anywhere


def cross_origin(path: str) -> bool:
    return path in CROSS_ORIGIN_PATHS or path.startswith((WELL_KNOWN, registration.PATH))


def oauth_error(exc: oauth.OAuthError) -> JSONResponse:
    headers = dict(NO_STORE)
    if exc.status == 401:
        headers["WWW-Authenticate"] = ('Bearer error="invalid_token"' if exc.error == "invalid_token"
                                       else 'Basic realm="OAuth2"')
    headers.update(exc.headers)
    return JSONResponse({"error": exc.error, "error_description": exc.description}, status_code=exc.status,
                        headers=headers)


async def _parameters(request: Request) -> dict[str, str]:
    """Query, then form, then a JSON body (the Node SDK sends JSON)."""
    values: dict[str, str] = {k: v for k, v in request.query_params.items()}
    content_type = request.headers.get("content-type", "")
    if content_type.startswith("application/x-www-form-urlencoded"):
        # what OAuth clients send: parsed here, a third of the cost of the generic form parser
        raw = await request.body()
        if len(raw) > MAX_BODY_BYTES:
            raise oauth.OAuthError("invalid_request", "The request body is too large")
        pairs = parse_qsl(raw.decode("utf-8", "replace"), keep_blank_values=True)
        values.update({k: v for k, v in pairs if k not in values})
    elif "form" in content_type:
        if int(request.headers.get("content-length") or 0) > MAX_BODY_BYTES:
            raise oauth.OAuthError("invalid_request", "The request body is too large")
        try:
            form = await form_fields(request)
        except ServiceError as exc:
            raise oauth.OAuthError("invalid_request", str(exc)) from None
        values.update({k: v for k, v in form.items() if k not in values})
    elif (await request.body()).strip():
        try:
            body = await json_body(request)
        except ServiceError as exc:
            raise oauth.OAuthError("invalid_request", str(exc)) from None
        values.update({k: str(v) for k, v in body.items() if isinstance(v, str | int) and k not in values})
    return values


def client_credentials(request: Request, values: dict[str, str]) -> clients.Credentials:
    """What the request carries to authenticate its client (oauth/clients.py): a client
    assertion, client_id/client_secret in the body, or HTTP Basic (client_secret_basic: the id
    and secret each form-encoded)."""
    basic = basic_credentials(request, form_encoded=True)
    client_id, secret = values.get("client_id", ""), values.get("client_secret", "")
    method = clients.SECRET_POST
    if basic and (not client_id or basic[0] == client_id) and not secret:
        client_id, secret, method = basic[0], basic[1], clients.SECRET_BASIC  # the id may be in both
    return clients.Credentials(client_id, secret, method if secret else clients.NONE,
                               values.get("client_assertion", ""), values.get("client_assertion_type", ""),
                               f"{settings.origin}{request.url.path}")


def _token_request(request: Request, values: dict[str, str], grant_type: str) -> oauth.TokenRequest:
    return oauth.TokenRequest(
        grant_type=grant_type, credentials=client_credentials(request, values), code=values.get("code", ""),
        code_verifier=values.get("code_verifier", ""), redirect_uri=values.get("redirect_uri", ""),
        username=values.get("username", ""), password=values.get("password", ""), scope=values.get("scope", ""),
        refresh_token=values.get("refresh_token", ""), device_code=values.get("device_code", ""),
        resource=values.get("resource", ""), client_ip=client_ip(request), parameters=values)


def _proofs(request: Request) -> list[str]:
    return request.headers.getlist("dpop")


def _nonce_header(db, request: Request) -> dict[str, str]:
    """A fresh DPoP nonce for a client that sends proofs: the next proof may carry it (RFC 9449 §8)."""
    return {dpop.HEADER: dpop.nonce(db)} if _proofs(request) else {}


async def _grant(request: Request, grant_type: str | None = None) -> Response:
    try:
        values = await _parameters(request)
        req = _token_request(request, values, grant_type or values.get("grant_type", ""))
        with session_scope() as db:
            jkt = dpop.token_binding(db, lookup.client_application(db, req.credentials.claimed_id),
                                     _proofs(request), dpop.url_of(request.url.path))
            answer = oauth.token(db, replace(req, dpop_jkt=jkt))
            headers = {**NO_STORE, **_nonce_header(db, request)}
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse(answer, headers=headers)


@router.post("/api/login/oauth/access_token")
async def access_token(request: Request) -> Response:
    """grant_type authorization_code, password, client_credentials, refresh_token, token,
    id_token or urn:ietf:params:oauth:grant-type:device_code."""
    return await _grant(request)


@router.post("/api/login/oauth/refresh_token")
async def refresh_token(request: Request) -> Response:
    return await _grant(request, "refresh_token")


async def _authenticated_client(request: Request) -> tuple[clients.Credentials, dict[str, str]]:
    values = await _parameters(request)
    credentials = client_credentials(request, values)
    if not credentials.present:
        raise oauth.OAuthError("invalid_client", "Client authentication is required", 401)
    return credentials, values


@router.post("/api/login/oauth/introspect")
async def introspect(request: Request) -> Response:
    """RFC 7662, for clients of the token's organization."""
    try:
        credentials, values = await _authenticated_client(request)
        with session_scope() as db:
            application = oauth.client(db, credentials)
            if _proofs(request):  # a proof sent along is checked like any other (RFC 9449 §4.3)
                dpop.token_binding(db, application, _proofs(request), dpop.url_of(request.url.path))
            answer = tokens.introspect(db, application, values.get("token", ""), values.get("token_type_hint", ""))
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse(answer, headers=NO_STORE)


@router.post("/api/login/oauth/revoke")
async def revoke(request: Request) -> Response:
    """RFC 7009: 200 whether or not the token existed."""
    try:
        credentials, values = await _authenticated_client(request)
        with session_scope() as db:
            application = oauth.client(db, credentials)
            tokens.revoke(db, application, values.get("token", ""), values.get("token_type_hint", ""))
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse({}, headers=NO_STORE)


@router.post(PAR_PATH, status_code=201, summary="Pushed authorization requests (RFC 9126)")
async def pushed_authorization_request(request: Request) -> Response:
    """The client's authorization request, checked and kept: 201 with the request_uri to send the
    browser to the authorization endpoint with (docs/api.md "Standards")."""
    try:
        credentials, values = await _authenticated_client(request)
        with session_scope() as db:
            caller = oauth.authenticated_client(db, credentials, secret_required=False)
            application = caller.application
            jkt = dpop.token_binding(db, application, _proofs(request), dpop.url_of(PAR_PATH)) \
                if _proofs(request) else ""
            answer = oauth.push(db, application, values, authenticated=caller.authenticated, dpop_jkt=jkt)
            headers = {**NO_STORE, **_nonce_header(db, request)}
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse(answer, status_code=201, headers=headers)


@router.post("/api/device-auth")
async def device_authorization(request: Request) -> Response:
    """RFC 8628 §3.1: a device code, and the user code to type at verification_uri."""
    try:
        values = await _parameters(request)
        with session_scope() as db:
            answer = oauth.device_authorization(db, client_credentials(request, values), values.get("scope", ""))
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse(answer, headers=NO_STORE)


def _about_bearer(request: Request, describe) -> Response:
    """What `describe(db, token)` says of the request's Bearer token's user, or its OAuth error."""
    try:
        with session_scope() as db:
            return JSONResponse(describe(db, bearer_token(request)), headers=NO_STORE)
    except oauth.OAuthError as exc:
        return oauth_error(exc)


@router.get("/api/userinfo", operation_id="userinfo_get")
@router.post("/api/userinfo", operation_id="userinfo_post")
async def userinfo(request: Request) -> Response:
    """With a Bearer token, or a DPoP-bound token (`Authorization: DPoP`) and its proof."""
    scheme = request.headers.get("authorization", "").partition(" ")[0].lower()
    token = bearer_token(request)
    try:
        with session_scope() as db:
            jkt = dpop.resource_binding(db, scheme, _proofs(request), request.method,
                                        dpop.url_of(request.url.path), token)
            return JSONResponse(tokens.userinfo(db, token, jkt), headers={**NO_STORE, **_nonce_header(db, request)})
    except oauth.OAuthError as exc:
        if scheme == "dpop" and exc.error == "invalid_token":
            exc.headers["WWW-Authenticate"] = dpop.challenge(exc.error, exc.description)
        return oauth_error(exc)


@router.get("/api/user", summary="The token's user as Laravel's OAuth clients read it (Casdoor's second userinfo)")
async def laravel_user(request: Request) -> Response:
    return _about_bearer(request, tokens.laravel_user)


@router.get("/.well-known/oauth-authorization-server")
@router.get("/.well-known/openid-configuration")
async def openid_configuration() -> JSONResponse:
    """For the applications that sign with a shared or built-in cert (docs/api.md, 'Which
    discovery document'); an organization's applications have their own below."""
    with session_scope() as db:
        return JSONResponse(tokens.discovery(extra=_opted_in(db)))


def _opted_in(db, application: Any = None) -> dict[str, Any]:
    """The discovery members of what some organization (the application's) opted into."""
    endpoint = registration.endpoint(db, application)
    documents = iam_console.oauth.metadata_documents.accepted(db, application)
    return {**({"registration_endpoint": endpoint} if endpoint else {}),
            **({"client_id_metadata_document_supported": True} if documents else {})}


@router.get("/.well-known/jwks")
async def jwks() -> JSONResponse:
    with session_scope() as db:
        return JSONResponse(jwt_tokens.jwks(db))


def _unknown_application(name: str) -> JSONResponse:
    return JSONResponse({"error": "not_found",
                         "error_description": f"The application: admin/{name[:100]} does not exist"},
                        status_code=404)


def _webfinger(request: Request, application: Any = None) -> Response:
    rels = [value for key, value in request.query_params.multi_items() if key.startswith("rel")]
    try:
        answer = tokens.webfinger(request.query_params.get("resource", ""), rels, application)
    except oauth.OAuthError as exc:
        return oauth_error(exc)
    return JSONResponse(answer, media_type="application/jrd+json")


@router.get("/.well-known/webfinger", summary="OpenID issuer discovery for acct: resources (RFC 7033)")
async def webfinger(request: Request) -> Response:
    return _webfinger(request)


@router.get("/.well-known/{application}/webfinger")
async def application_webfinger(application: str, request: Request) -> Response:
    with session_scope() as db:
        found = lookup.application(db, application)
    return _webfinger(request, found) if found else _unknown_application(application)


@router.get("/.well-known/{application}/oauth-authorization-server")
@router.get("/.well-known/{application}/openid-configuration")
async def application_openid_configuration(application: str) -> JSONResponse:
    """The application's own discovery document: its jwks_uri lists its cert's key alone."""
    with session_scope() as db:
        found = lookup.application(db, application)
        if found is None:
            return _unknown_application(application)
        return JSONResponse(tokens.discovery(found, _opted_in(db, found)))


@router.get("/.well-known/{application}/jwks")
async def application_jwks(application: str) -> JSONResponse:
    with session_scope() as db:
        found = lookup.application(db, application)
        return JSONResponse(jwt_tokens.jwks(db, found)) if found else _unknown_application(application)


@router.get("/api/get-app-login")
async def get_app_login(request: Request) -> JSONResponse:
    """Casdoor's check of an authorization request before its sign-in page shows:
    the application (without secrets) if client, redirect URI, scope and PKCE are right."""
    with session_scope() as db:
        checked = oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(dict(request.query_params)))
        application = checked.application
        return ok({"owner": application.owner, "name": application.name, "displayName": application.display_name,
                   "logo": application.logo, "organization": application.organization,
                   "homepageUrl": application.homepage_url, "enablePassword": application.enable_password,
                   "scope": checked.scope})


@router.get("/api/sso-logout", operation_id="sso_logout_get")
@router.post("/api/sso-logout", operation_id="sso_logout_post")
async def sso_logout(request: Request) -> Response:
    """Every token and session of the signed-in user ends; with logoutAll=false (the SDKs'
    logout_current_session) only the caller's own: its Bearer token and its session.
    A GET acts only for a Bearer token, never for the session cookie: a link or picture
    on another site must not sign anyone out."""
    everything = request.query_params.get("logoutAll", "").lower() not in ("false", "0")
    with session_scope() as db:
        found = signed_in(db, request) if request.method == "POST" else None
        row = tokens.live_token(db, bearer_token(request))
        if found is None:
            user = lookup.user(db, row.organization, row.user) if row and row.user else None
        else:
            user = found[0]
        if user is None:
            raise ServiceError("Please login first")
        sids = logout.sessions_of(db, user) if everything else {found[1].session_id} if found else set()
        if everything:
            auth.revoke_all(db, user)  # the applications are told (oauth/logout.py)
        else:
            tokens.end_current(db, user, row, found[1] if found else None)
        user_id = f"{user.owner}/{user.name}"
        frames = logout.frames(db, sids) if found is not None and navigated(request) else []
    if found is not None and navigated(request):
        response: Response = signed_out(frames, navigation.after_logout("", user.owner))
    else:
        response = ok(user_id)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def end_session(request: Request, values: dict[str, str]) -> Response:
    """GET|POST /api/logout with an id_token_hint (called from signin/api/account.py): the hinted
    token and the browser's session end, and the applications that session (and the token's)
    signed in to are told (oauth/logout.py): by back-channel notices, and by the front-channel
    page when one of them has a front-channel URI."""
    with session_scope() as db:
        ended = tokens.end_session(db, values["id_token_hint"], values.get("post_logout_redirect_uri", ""),
                                  values.get("state", ""))
        signed_out = auth.sign_out(db, session_token(request), client_ip(request))
        cookies = signed_out.session_id if signed_out else ""
        if ended.sid != cookies:
            auth.end_sessions(db, {ended.sid})  # the hinted token's session too, wherever it is
        frames = logout.frames(db, {ended.sid, cookies})
    if frames:
        response: Response = front_channel_page(frames, ended.redirect)
    elif ended.redirect:
        response = RedirectResponse(ended.redirect, status_code=302)
    else:
        response = ok(ended.user_id)
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


def navigated(request: Request) -> bool:
    """A browser's top-level navigation (Fetch Metadata): the browser is there to load the
    front-channel frames, so a sign-out answers a page rather than the JSON envelope."""
    return (request.headers.get("sec-fetch-mode"), request.headers.get("sec-fetch-dest")) == ("navigate", "document")


def signed_out(frames: list[str], next_url: str) -> Response:
    """A sign-out by navigation goes on to `next_url`: through the front-channel page when
    applications are to be framed."""
    if frames:
        return front_channel_page(frames, next_url)
    return RedirectResponse(next_url, status_code=303, headers=NO_STORE)


# --- dynamic client registration (RFC 7591/7592) and protected resource metadata (RFC 9728) ---

def _registration_error(exc: registration.RegistrationError) -> JSONResponse:
    headers = dict(NO_STORE)
    if exc.status == 401:
        headers["WWW-Authenticate"] = 'Bearer error="invalid_token"'
    return JSONResponse({"error": exc.error, "error_description": exc.description}, status_code=exc.status,
                        headers=headers)


async def _body(request: Request) -> dict[str, Any]:
    try:
        return await json_body(request)
    except ServiceError as exc:
        raise registration.RegistrationError("invalid_client_metadata", str(exc)) from None


@router.post(registration.PATH, status_code=201,
             summary="Dynamic client registration (RFC 7591), where the organization's dcrPolicy allows it")
async def register(request: Request, organization: str = "") -> Response:
    try:
        body = await _body(request)
        with session_scope() as db:
            answer = registration.register(db, body, bearer_token(request), organization, client_ip(request))
    except registration.RegistrationError as exc:
        return _registration_error(exc)
    return JSONResponse(answer, status_code=201, headers=NO_STORE)


@router.get(registration.PATH + "/{client_id}", summary="A registered client's metadata (RFC 7592)")
async def read_client(client_id: str, request: Request) -> Response:
    try:
        with session_scope() as db:
            answer = registration.answer(registration.registered(db, client_id, bearer_token(request)))
    except registration.RegistrationError as exc:
        return _registration_error(exc)
    return JSONResponse(answer, headers=NO_STORE)


@router.put(registration.PATH + "/{client_id}", summary="Replace a registered client's metadata (RFC 7592)")
async def update_client(client_id: str, request: Request) -> Response:
    try:
        with session_scope() as db:
            row = registration.registered(db, client_id, bearer_token(request))
            answer = registration.update(db, row, await _body(request))
    except registration.RegistrationError as exc:
        return _registration_error(exc)
    return JSONResponse(answer, headers=NO_STORE)


@router.delete(registration.PATH + "/{client_id}", status_code=204,
               summary="Delete a registered client (RFC 7592)")
async def delete_client(client_id: str, request: Request) -> Response:
    try:
        with session_scope() as db:
            registration.delete(db, registration.registered(db, client_id, bearer_token(request)),
                                client_ip(request))
    except registration.RegistrationError as exc:
        return _registration_error(exc)
    return Response(status_code=204, headers=NO_STORE)


def _resource_metadata(path: str, resource: str) -> Response:
    with session_scope() as db:
        document = resources.metadata(db, sorted(oauth.STANDARD_SCOPES), path, resource[:resources.MAX_RESOURCE])
    if document is None:
        return JSONResponse({"error": "not_found", "error_description": "No organization declares this resource"},
                            status_code=404)
    return JSONResponse(document)


@router.get("/.well-known/oauth-protected-resource",
            summary="Protected resource metadata (RFC 9728) of this server's API, or of a declared resource")
async def protected_resource(resource: str = "") -> Response:
    return _resource_metadata("", resource)


@router.get("/.well-known/oauth-protected-resource/{path:path}",
            summary="Protected resource metadata (RFC 9728) of a resource declared at this origin")
async def declared_resource(path: str) -> Response:
    return _resource_metadata(path, "")


FRAME_WAIT_MS = 5000  # the page goes on when every frame has loaded, or after this at the latest


def front_channel_page(frames: list[str], next_url: str) -> HTMLResponse:
    """OpenID Front-Channel Logout 1.0: the applications' logout URIs in hidden frames, then the
    post_logout_redirect_uri (when there is one). Its own inline script only, never framed itself,
    framing only the origins of those URIs."""
    iframes = "".join(f'<iframe hidden title="Signing out" src="{html.escape(uri)}" onload="loaded()"></iframe>'
                      for uri in frames)
    onward = (f'<p><a href="{html.escape(next_url)}">Continue</a></p>' if next_url
              else "<p>You may close this window.</p>")
    # the URL as a script's string: no "</script>" (nor any markup) can close the element early
    target = json.dumps(next_url).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    script = (f"let left = {len(frames)}, gone = false; const next = {target};"
              "function go() { if (!gone && next) { gone = true; location.replace(next); } }"
              "function loaded() { if (--left <= 0) go(); }"
              f"setTimeout(go, {FRAME_WAIT_MS});")
    body = (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title>'
            f'<script>{script}</script></head><body><main><h1>You have signed out</h1>{onward}'
            f'{iframes}</main></body></html>')
    policy = (f"default-src 'none'; script-src 'unsafe-inline'; frame-src {' '.join(logout.frame_origins(frames))}; "
              "frame-ancestors 'none'")
    return HTMLResponse(body, headers={**NO_STORE, "Content-Security-Policy": policy,
                                       "Referrer-Policy": "no-referrer"})
