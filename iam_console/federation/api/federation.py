"""Sign-in with an upstream identity provider: the start (to the provider: an OAuth provider's
authorize URL, or a SAML provider's IdP with an AuthnRequest), the callback (back from an OAuth
provider; a SAML IdP posts to /api/acs, saml/api.py, which goes on as here), Casdoor's
/api/login with a provider and code, and /api/unlink. The rules are in
federation/upstream.py and federation/federation.py; docs/security.md, "Upstream identity
providers"."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, RedirectResponse, Response

from iam_console.api.bodies import field, json_object
from iam_console.api.callers import (
    MFA_COOKIE,
    SESSION_COOKIE,
    actor,
    client_ip,
    session_token,
    with_pending_second_factor,
    with_session,
)
from iam_console.api.envelope import ok
from iam_console.core import lookup, navigation
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError, Unauthorized
from iam_console.db import session_scope
from iam_console.federation import federation, upstream
from iam_console.models import Application, Organization, Provider, UpstreamState, User
from iam_console.oauth import oauth
from iam_console.settings import settings
from iam_console.signin import auth, mfa, mfa_props, prompt
from iam_console.signin.api.sign_in_answers import page

router = APIRouter(tags=["federation"])
COOKIE_OPTIONS = {"httponly": True, "samesite": "lax", "path": "/"}


def _browser(request: Request) -> str:
    return request.cookies.get(upstream.COOKIE, "")


REDIRECTS = {302: {"description": "On to the provider, or back to this server's page with the error's id"}}
QUERY = {"parameters": [{"name": name, "in": "query", "required": False, "schema": {"type": "string"}}
                        for name in ("application", "provider", "method", "from", "authorize", "invitationCode")]}


@router.get("/api/federation/start", summary="Begin a sign-in, sign-up or link at an upstream OAuth/OIDC provider",
            responses=REDIRECTS, openapi_extra=QUERY)
async def start(request: Request) -> Response:
    """Query: application, provider, method (signin, signup, link), from (a path of this server to
    go on to), authorize (the OAuth authorize request's query the sign-in answers), invitationCode
    (spent if the callback, or a SAML provider's /api/acs, signs a user up). Redirects to the
    provider (a SAML provider signing its requests: the page that posts the request to its IdP),
    with the browser's binding cookie; a refused start goes back to the sign-in page."""
    params = request.query_params
    application = params.get("application", "")[:100]
    method = params.get("method", federation.SIGN_IN)[:20]
    with session_scope() as db:
        user = actor(db, request).user if method == federation.LINK else None
        try:
            started = upstream.start(db, application_name=application, provider_name=params.get("provider", ""),
                                     method=method, browser_token=_browser(request),
                                     authorize_query=params.get("authorize", ""), return_to=params.get("from", "/"),
                                     user=user, client_ip=client_ip(request),
                                     invitation_code=params.get("invitationCode", ""))
        except ServiceError as exc:
            db.rollback()
            return refused(db, str(exc), application, params.get("authorize", ""), method,
                           params.get("from", ""))
    if started.page:
        response = page(started.page)
    else:
        response = RedirectResponse(started.url, status_code=302)
    response.set_cookie(upstream.COOKIE, started.browser_token, secure=settings.cookie_secure,
                        max_age=upstream.STATE_MINUTES * 60, **COOKIE_OPTIONS)
    return response


def _link_return(return_to: str) -> str:
    """Where a link goes back to: the page it started from (the account page, the prompt page)."""
    path = navigation.safe_return_path(return_to)
    return path if path != "/" else "/account"


def _login_path(db, application_name: str, authorize_query: str, method: str, return_to: str = "") -> str:
    """The page a refused sign-in goes back to: the page a link started from, the authorize
    page for an authorization request, else the sign-in (or sign-up) page of the application."""
    if method == federation.LINK:
        return _link_return(return_to)
    if authorize_query:
        return f"/login/oauth/authorize?{authorize_query}"
    application = lookup.application(db, application_name) if application_name else None
    if method == federation.SIGN_UP and application is not None:
        return f"/signup/{quote(application.name, safe='')}"
    return f"/login/{quote(application.organization, safe='')}" if application is not None else "/login"


def refused(db, message: str, application: str, authorize_query: str, method: str,
            return_to: str = "") -> RedirectResponse:
    error_id = upstream.note_error(db, message, application)
    db.commit()
    path = _login_path(db, application, authorize_query, method, return_to)
    joiner = "&" if "?" in path else "?"
    return RedirectResponse(f"{path}{joiner}{urlencode({'upstreamError': error_id})}", status_code=302)


@dataclass(frozen=True)
class Outcome:
    """Where a finished upstream sign-in goes: a URL, and the cookies to set."""
    url: str
    data: object = ""  # /api/login's data: the user's id, the code, NextMfa, or true for a link
    data2: object = None
    session: auth.SignedIn | None = None
    pending: auth.SecondFactorOwed | None = None
    ended: bool = False  # the browser's earlier session ended (its cookie goes)


def _finish(db, request: Request, state: str, code: str, invitation_code: str = "") -> Outcome:
    """`invitation_code`: /api/login's, for a state that carries none."""
    row = upstream.consume(db, state, _browser(request))
    application = lookup.application(db, row.application)
    if application is None:
        raise ServiceError("The application: %s does not exist", row.application)
    provider, provider_row = federation.provider_of(db, application, row.provider)
    identity = upstream.fetch_identity(provider, code, row.code_verifier, row.nonce)
    return _signed_in(db, request, row, application, provider, provider_row, identity, invitation_code)


def _signed_in(db, request: Request, row: UpstreamState, application: Application, provider: Provider,
               provider_row: federation.ProviderRow, identity: federation.UpstreamIdentity,
               invitation_code: str = "") -> Outcome:
    """The account for the proven identity (federation.resolve), then on as a password sign-in;
    a sign-up spends the state's invitation code, else `invitation_code` (the body's)."""
    if row.method == federation.LINK:
        owner, _, name = row.user.partition("/")
        current = actor(db, request).user
        if current is None or current.owner != owner or current.name != name:
            raise ServiceError("Please sign in first")
        federation.link(db, current, application, provider, identity, client_ip=client_ip(request))
        return Outcome(_link_return(row.return_to), data=True)
    checked = None
    if row.authorize_query:  # checked again: the application may have changed meanwhile
        checked = oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(upstream.authorize_params(row)))
    resolved = federation.resolve(db, application, provider, provider_row, identity, method=row.method,
                                  client_ip=client_ip(request), invitation_code=row.invitation_code or invitation_code)
    return finish_sign_in(db, request, row, application, resolved.user, checked, provider.type)


def finish_sign_in(db, request: Request, row: UpstreamState, application: Application, user: User,
                   checked: oauth.Authorization | None, signin_method: str) -> Outcome:
    """An upstream identity's account signs in: the second factor it owes, else the session and
    on as after a password sign-in (`_continue`)."""
    organization = lookup.organization(db, application.organization)
    signin = auth.SignInRequest(application=application.name, organization=user.owner, username=user.name,
                                password="", auto_signin=True, signin_method=signin_method,
                                client_ip=client_ip(request), user_agent=request.headers.get("user-agent", ""),
                                previous_token=session_token(request))
    if mfa_props.enabled_types(user):
        owed = auth.owe_second_factor(db, user, application, signin)
        path = f"/login/oauth/authorize?{row.authorize_query}&" if row.authorize_query else \
            f"/login/{quote(user.owner, safe='')}?{urlencode({'from': row.return_to})}&"
        # the browser's earlier session ends here, as a completed sign-in rotates it: the page that
        # asks for the second factor must not find someone signed in already
        ended = bool(signin.previous_token) and auth.sign_out(db, signin.previous_token, signin.client_ip) is not None
        return Outcome(path + "nextMfa=1", data=auth.NEXT_MFA, data2=owed.methods, pending=owed, ended=ended)
    session = auth.complete_sign_in(db, user, organization, application, auto_signin=True,
                                    client_ip=signin.client_ip, user_agent=signin.user_agent,
                                    previous_token=signin.previous_token, signin_method=signin_method)
    return _continue(db, checked, application, organization, user, session, row)


def _continue(db, checked: oauth.Authorization | None, application: Application, organization: Organization,
              user: User, session: auth.SignedIn, row: UpstreamState) -> Outcome:
    """As after a password sign-in: the MFA setup the organization requires, the prompt for
    missing items, then the authorization's code to the client's registered redirect URI, or
    the console path the sign-in started from."""
    user_id = f"{user.owner}/{user.name}"
    if checked is None:
        if prompt.needed(db, application, user):
            query = urlencode({"from": navigation.safe_return_path(row.return_to)})
            return Outcome(f"/prompt/{quote(application.name, safe='')}?{query}", user_id, session=session)
        return Outcome(navigation.safe_return_path(row.return_to), user_id, session=session)
    setup = mfa.required_setup_path(organization, user, f"/login/oauth/authorize?{row.authorize_query}")
    if setup:
        return Outcome(setup, user_id, setup, session=session)
    if prompt.needed(db, checked.application, user):
        url = f"/prompt/{quote(checked.application.name, safe='')}?{row.authorize_query}"
        return Outcome(url, user_id, url, session=session)
    answer = oauth.authorize(db, checked, user, "OAuth", sid=session.session_id, signed_in_at=session.signed_in_at,
                             acr=oauth.acr_of(session.signin_method))
    return Outcome(answer.url, answer.code or answer.tokens.get("access_token") or "", answer.url, session=session)


def with_cookies(request: Request, response: Response, outcome: Outcome) -> Response:
    if outcome.session is not None:
        response = with_session(request, response, outcome.session)
    if outcome.pending is not None:
        response = with_pending_second_factor(response, outcome.pending)
    if outcome.ended:
        response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.get(upstream.CALLBACK_PATH, summary="Back from an upstream OAuth/OIDC provider (code and state)",
            responses={302: {"description": "On as a password sign-in goes on, or back to the sign-in page"}},
            openapi_extra={"parameters": [{"name": n, "in": "query", "required": False, "schema": {"type": "string"}}
                                          for n in ("code", "state", "error", "error_description")]})
async def callback(request: Request) -> Response:
    """Consumes the state once; signs in (or up, or links) and goes on as a password sign-in does.
    Every refusal goes back to this server's sign-in page with the message; the only address
    outside this server it redirects to is the authorization's registered redirect URI."""
    params = request.query_params
    state, code = params.get("state", ""), params.get("code", "")
    with session_scope() as db:
        try:
            if params.get("error"):
                upstream.consume(db, state, _browser(request))
                raise ServiceError("Failed to login in: %s", params.get("error_description") or params["error"])
            outcome = _finish(db, request, state, code)
        except ServiceError as exc:
            db.rollback()
            kept = upstream.peek(db, state)
            return refused(db, str(exc), kept.application if kept else "", kept.authorize_query if kept else "",
                           kept.method if kept else federation.SIGN_IN, kept.return_to if kept else "")
        return with_cookies(request, RedirectResponse(outcome.url, status_code=302), outcome)


@router.get("/api/federation/pending-mfa", summary="The methods of the second factor an upstream sign-in owes")
async def pending_mfa(request: Request) -> JSONResponse:
    """Casdoor's NextMfa answer for the pending sign-in the MFA cookie names (set by the callback):
    its enabled methods, masked; to the browser holding that cookie only."""
    with session_scope() as db:
        pending = auth.pending_user(db, request.cookies.get(MFA_COOKIE, ""))
        if pending is None:
            raise ServiceError(auth.PENDING_EXPIRED)
        methods = [p for p in mfa_props.all_props(pending[1]) if p["enabled"]]
        methods.sort(key=lambda p: not p["isPreferred"])
        return ok(auth.NEXT_MFA, methods)


async def login_with_provider(request: Request, body: dict) -> JSONResponse:
    """/api/login with provider, code and state (Casdoor's callback page posts these, and
    invitationCode): the same state, bound to the same browser, consumed the same way."""
    with session_scope() as db:
        state, code = field(body, "state", str, ""), field(body, "code", str, "")
        outcome = _finish(db, request, state, code, field(body, "invitationCode", str, "")[:upstream.MAX_CODE + 1])
        data2 = outcome.data2 if outcome.data2 is not None else outcome.url
        return with_cookies(request, ok(outcome.data, data2), outcome)


ONE_TAP_START = "/api/federation/google-one-tap/start"
ONE_TAP = "/api/federation/google-one-tap"


@router.post(ONE_TAP_START, summary="A state and nonce for Google One Tap on a sign-in page")
async def one_tap_start(request: Request) -> JSONResponse:
    """Body: application, provider (a Google provider whose row's rule is OneTap), authorize (the
    OAuth authorize request's query the sign-in answers), from (a path of this server to go on
    to). Answers {clientId, nonce, state} for google.accounts.id.initialize, the state bound to
    this browser's cookie."""
    body = await json_object(request)
    with session_scope() as db:
        started = upstream.start_one_tap(
            db, application_name=field(body, "application", str, "")[:100],
            provider_name=field(body, "provider", str, ""), browser_token=_browser(request),
            authorize_query=field(body, "authorize", str, ""),
            return_to=field(body, "from", str, "/"), client_ip=client_ip(request))
        response = ok({"clientId": started.client_id, "nonce": started.nonce, "state": started.state})
    response.set_cookie(upstream.COOKIE, started.browser_token, secure=settings.cookie_secure,
                        max_age=upstream.STATE_MINUTES * 60, **COOKIE_OPTIONS)
    return response


@router.post(ONE_TAP, summary="Sign in with the credential (an ID token) Google One Tap handed to the page")
async def one_tap(request: Request) -> JSONResponse:
    """Body: application, provider, credential, state (from the start, bound to this browser,
    used once), invitationCode (spent if the credential signs a user up). The credential is
    verified here against Google's keys with the state's nonce; then on as the callback goes: data
    is the user's id (NextMfa when a second factor is owed, the code for an authorize request),
    data2 the URL to go on to."""
    body = await json_object(request)
    with session_scope() as db:
        row = upstream.consume(db, field(body, "state", str, ""), _browser(request), kind=upstream.ONE_TAP)
        if row.application != field(body, "application", str, "") or row.provider != field(body, "provider", str, ""):
            raise ServiceError("The state was issued for another application or provider")
        application = lookup.application(db, row.application)
        if application is None:
            raise ServiceError("The application: %s does not exist", row.application)
        provider, provider_row = federation.provider_of(db, application, row.provider)
        identity = upstream.one_tap_identity(provider, provider_row, row, field(body, "credential", str, ""))
        outcome = _signed_in(db, request, row, application, provider, provider_row, identity,
                             field(body, "invitationCode", str, "")[:upstream.MAX_CODE + 1])
        return with_cookies(request, ok(outcome.data, outcome.url), outcome)


@router.post("/api/unlink", summary="Unlink an upstream identity from an account (canUnlink; a global admin: anyone's)")
async def unlink(request: Request) -> JSONResponse:
    """Casdoor's LinkForm: providerType, providerName, user (owner, name)."""
    body = await json_object(request)
    with session_scope() as db:
        caller: Actor = actor(db, request)
        if caller.user is None:
            raise Unauthorized()
        target_body = body["user"] if isinstance(body.get("user"), dict) else {}
        owner = str(target_body.get("owner") or caller.user.owner)[:100]
        name = str(target_body.get("name") or caller.user.name)[:100]
        target = lookup.user(db, owner, name)
        if target is None:
            raise ServiceError("The user: %s/%s doesn't exist", owner, name)
        federation.unlink(db, caller.user, target, field(body, "providerType", str, ""),
                          field(body, "providerName", str, ""), is_global_admin=caller.is_global_admin,
                          client_ip=client_ip(request))
        return ok()
