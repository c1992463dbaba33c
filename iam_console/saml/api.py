"""SAML 2.0 over HTTP: this server as identity provider (metadata, single sign-on over the
HTTP-Redirect and HTTP-POST bindings) and as service provider of SAML providers
(/api/get-saml-login, /api/acs, and /api/login with samlResponse; the provider buttons start at
/api/federation/start). The rules are the services' (saml/saml_idp.py, saml/saml_sp.py);
docs/api.md lists the routes."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from iam_console import workers
from iam_console.api.auditing import record_refusal
from iam_console.api.bodies import field, form_fields
from iam_console.api.callers import (
    SESSION_COOKIE,
    client_ip,
    session_token,
    signed_in,
    with_pending_second_factor,
    with_session,
)
from iam_console.api.envelope import language, ok
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.federation import upstream
from iam_console.federation.api import federation as federation_api
from iam_console.i18n import translate
from iam_console.oauth import oauth
from iam_console.saml import saml_accounts, saml_idp, saml_sp
from iam_console.saml import saml_xml as x
from iam_console.signin import auth, mfa, mfa_props, verifications
from iam_console.signin.api.sign_in_answers import NO_STORE, authorization_in, page
from iam_console.signin.api.sign_in_answers import signed_in as answered

router = APIRouter(prefix="/api", tags=["saml"])
METHOD = "SAML"
CANNOT_USE = "The user %s/%s cannot sign in to application %s"  # the OAuth authorize page's refusal
HTML = {"content": {"text/html": {}}}
# the single sign-on and ACS answers: a redirect, the page that posts a SAML message, or a refusal's page
PAGES = {200: {**HTML, "description": "The page that posts the SAML message"},
         303: {"description": "On to sign in, or to where the sign-in goes"},
         400: {**HTML, "description": "The refused message's reason"}}


async def _refused(request: Request, exc: ServiceError) -> HTMLResponse:
    """A refused SAML message: the reason on a page of its own; nothing is sent anywhere."""
    text = translate(exc.template, language(request), *exc.args_)
    await workers.run(record_refusal, request, {"status": "error", "msg": text})
    message = escape(text)
    title = escape(translate("Sign in", language(request)))
    return page(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
                f'<body><main><h1>{title}</h1><p role="alert" id="saml-error">{message}</p></main></body></html>',
                400)


@router.get("/saml/metadata", response_class=Response, responses={200: {
    "content": {"application/xml": {}, "application/json": {}}, "description": "The metadata, or the error envelope"}})
async def saml_metadata(request: Request) -> Response:
    """Casdoor's GetSamlMeta: ?application=admin/name[&enablePostBinding=true] -> the application's
    IdP metadata (XML)."""
    params = request.query_params
    with session_scope() as db:
        xml = saml_idp.metadata(db, params.get("application", ""),
                                params.get("enablePostBinding", "").lower() == "true")
    return Response(xml, media_type="application/xml")


def _sso(request: Request, owner: str, application: str, params: dict[str, str], *, redirect_binding: bool,
         raw_query: str) -> Response:
    with session_scope() as db:
        sso = saml_idp.check_request(db, owner, application, params.get("SAMLRequest", ""),
                                     params.get("RelayState", ""), redirect_binding=redirect_binding,
                                     raw_query=raw_query, sig_alg=params.get("SigAlg", ""),
                                     signature=params.get("Signature", ""))
        if not redirect_binding:  # on as a GET of the same request: the browser's session cookie comes along
            return RedirectResponse(saml_idp.resume_path(sso, saml_idp.redeflate(params.get("SAMLRequest", ""))),
                                    status_code=303, headers=NO_STORE)
        if saml_idp.name_id_refused(sso):  # answered before anyone signs in: no user would change it
            return page(saml_idp.invalid_name_id_policy_page(db, sso))
        here = saml_idp.resume_path(sso, "", raw_query)
        account = signed_in(db, request)
        user = account[0] if account is not None else None
        if user is not None and not oauth.may_use(user, sso.application):
            raise ServiceError(CANNOT_USE, user.owner, user.name, sso.application.name)
        stale = account is not None and saml_idp.needs_fresh_sign_in(sso, account[1].created_time)
        setup = mfa.required_setup_path(lookup.organization(db, user.owner), user, here) if user else ""
        if sso.is_passive and (user is None or stale or setup):  # a page would be needed: NoPassive instead
            return page(saml_idp.no_passive_page(db, sso))
        if user is None or stale:
            target = f"/login/{quote(sso.application.organization, safe='')}?from={quote(here, safe='/')}"
            response = RedirectResponse(target, status_code=303, headers=NO_STORE)
            if stale:  # ForceAuthn: the session signed in before the request ends; the user signs in anew
                auth.sign_out(db, session_token(request), client_ip(request))
                response.delete_cookie(SESSION_COOKIE, path="/")
            return response
        if setup:
            return RedirectResponse(setup, status_code=303, headers=NO_STORE)
        answer = saml_idp.answer_page(db, sso, user)
        audit(db, organization=user.owner, user=user.name, action="saml-sso", request_uri=saml_idp.SSO_PATH,
              client_ip=client_ip(request), obj={"application": sso.application.name, "issuer": sso.issuer,
                                                  "acs": sso.acs_url})
        return page(answer)


@router.get("/saml/redirect/{owner}/{application}", response_class=Response, responses=PAGES)
async def saml_sso_redirect(request: Request, owner: str, application: str) -> Response:
    """Single sign-on, HTTP-Redirect binding: SAMLRequest (deflated), RelayState, SigAlg and
    Signature. A signed-in user gets the page that posts the signed Response to the service
    provider; anyone else signs in first and comes back here. A refused request shows why."""
    try:
        return await workers.run(_sso, request, owner, application, dict(request.query_params),
                                       redirect_binding=True, raw_query=request.url.query)
    except ServiceError as exc:
        return await _refused(request, exc)


@router.post("/saml/redirect/{owner}/{application}", response_class=Response, responses=PAGES)
async def saml_sso_post(request: Request, owner: str, application: str) -> Response:
    """Single sign-on, HTTP-POST binding: SAMLRequest and RelayState as a form; checked, then
    on to the Redirect binding's form of the same request (303)."""
    try:
        params = await form_fields(request)
        return await workers.run(_sso, request, owner, application, params, redirect_binding=False,
                                       raw_query="")
    except ServiceError as exc:
        return await _refused(request, exc)


@router.get("/get-saml-login")
async def get_saml_login(request: Request) -> Response:
    """Casdoor's GetSamlLogin: ?id=owner/provider&relayState=... -> data: the URL of the IdP's
    single sign-on with the AuthnRequest and data2 "GET" (the Redirect binding), or data the page
    that posts the signed request and data2 "POST" (enableSignAuthnRequest). Optional: application (the
    one signed in to; the provider organization's default application otherwise) and from (the
    same-site path to go to after sign-in)."""
    params = request.query_params
    with session_scope() as db:
        provider = saml_sp.provider_of(db, params.get("id", ""))
        application = _application(db, provider, params.get("application", ""))
        login = saml_sp.login(db, f"{provider.owner}/{provider.name}", application, params.get("relayState", ""),
                              params.get("from", "/"))
    return ok(login.page or login.url, login.method)


def _application(db, provider, name: str):
    if name:
        application = lookup.application(db, name)
    else:
        owner = provider.owner if provider.owner != b.ADMIN_OWNER else b.BUILT_IN_ORG
        application = verifications.default_application(db, lookup.organization(db, owner))
    if application is None:
        raise ServiceError(saml_idp.NOT_FOUND, name or provider.owner)
    return application


BOUNCED = "bounced"  # the ACS's own page posted the Response again, from this server's site


def _acs(request: Request, form: dict[str, str]) -> Response:
    saml_response = form.get("SAMLResponse", "")
    with session_scope() as db:
        request_id = saml_sp.answered_request(saml_response)
        started = upstream.saml_start(db, request_id)
        if started is not None:  # a provider button's sign-in
            if not request.cookies.get(upstream.COOKIE) and not form.get(BOUNCED):
                # posted from the IdP's site, the browser left out its SameSite=Lax binding cookie:
                # posted again from here, it comes along
                return page(x.auto_post_page(saml_sp.ACS_PATH, {**form, BOUNCED: "1"}))
            return _acs_started(db, request, saml_response, request_id, started)
        assertion = saml_sp.accept(db, saml_response)
        application = lookup.application(db, assertion.application)
        if application is None:
            raise ServiceError(saml_idp.NOT_FOUND, assertion.application)
        user = saml_accounts.account(db, application, assertion, client_ip=client_ip(request))
        organization = lookup.organization(db, user.owner)
        back = saml_sp.login_return(user.owner, assertion.return_to)
        if mfa_props.enabled_types(user):  # the login page asks for the second factor
            owed = auth.owe_second_factor(db, user, application, auth.SignInRequest(
                application=application.name, organization=user.owner, username=user.name, password="",
                signin_method=METHOD))
            response = RedirectResponse(f"{back}&nextMfa=1", status_code=303, headers=NO_STORE)
            if session_token(request):  # the browser's earlier session ends here, as a sign-in rotates it
                auth.sign_out(db, session_token(request), client_ip(request))
                response.delete_cookie(SESSION_COOKIE, path="/")
            return with_pending_second_factor(response, owed)
        result = auth.complete_sign_in(db, user, organization, application, client_ip=client_ip(request),
                                       user_agent=request.headers.get("user-agent", ""),
                                       previous_token=session_token(request), signin_method=METHOD)
        return with_session(request, RedirectResponse(assertion.return_to, status_code=303, headers=NO_STORE),
                            result)


def _acs_started(db, request: Request, saml_response: str, request_id: str, row) -> Response:
    """The Response to a provider button's AuthnRequest: its state (bound to this browser) used
    up, the Response checked, then on as an OAuth provider's callback goes (the authorization
    request answered, the prompt, the second factor); a refusal goes back to the page it started
    from, with the message."""
    try:
        upstream.consume(db, request_id, request.cookies.get(upstream.COOKIE, ""), kind=upstream.SAML)
        assertion = saml_sp.accept(db, saml_response)
        application = lookup.application(db, row.application)
        if application is None or assertion.application != row.application:
            raise ServiceError(saml_idp.NOT_FOUND, row.application)
        checked = None
        if row.authorize_query:  # checked again: the application may have changed meanwhile
            checked = oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(upstream.authorize_params(row)))
        user = saml_accounts.account(db, application, assertion, method=row.method, client_ip=client_ip(request),
                                     invitation_code=row.invitation_code)
        outcome = federation_api.finish_sign_in(db, request, row, application, user, checked, METHOD)
    except ServiceError as exc:
        db.rollback()
        return federation_api.refused(db, str(exc), row.application, row.authorize_query, row.method)
    return federation_api.with_cookies(request, RedirectResponse(outcome.url, status_code=303, headers=NO_STORE),
                                       outcome)


@router.post("/acs", response_class=Response, responses=PAGES)
async def acs(request: Request) -> Response:
    """The assertion consumer service: SAMLResponse (and RelayState) posted by a SAML
    provider's IdP. A checked Response signs its user in (a second factor, when the account
    has one, is asked on the login page) and goes on to where the sign-in started."""
    try:
        form = await form_fields(request)
        return await workers.run(_acs, request, form)
    except ServiceError as exc:
        return await _refused(request, exc)


def login_with_saml(request: Request, body: dict) -> Response:
    """Casdoor's /api/login with samlResponse (its front end posts what /api/acs received): the
    Response checked as /api/acs checks it (saml_sp.accept: its request used up), for the
    application and provider that request named. A Response to a provider button's request (bound
    to the browser that started it) is taken from that browser only, as at /api/acs. Answered as
    /api/login answers a password sign-in (type login: the session; with an authorization request
    in the query: the code), or NextMfa and the methods when the account owes a second factor."""
    with session_scope() as db:
        checked = authorization_in(db, dict(request.query_params))
        saml_response = field(body, "samlResponse", str, "")
        request_id = saml_sp.answered_request(saml_response)
        if upstream.saml_start(db, request_id) is not None:  # a provider button's: the browser that started it
            upstream.consume(db, request_id, request.cookies.get(upstream.COOKIE, ""), kind=upstream.SAML)
        assertion = saml_sp.accept(db, saml_response)
        named = field(body, "application", str, "")
        if checked is not None:
            named = checked.application.name
        if named and named != assertion.application:
            raise ServiceError("The SAML response answers a request of another application")
        provider = field(body, "provider", str, "")
        if provider and provider not in (assertion.provider.name,
                                         f"{assertion.provider.owner}/{assertion.provider.name}"):
            raise ServiceError("The SAML response answers a request of another provider")
        application = lookup.application(db, assertion.application)
        if application is None:
            raise ServiceError(saml_idp.NOT_FOUND, assertion.application)
        user = saml_accounts.account(db, application, assertion, client_ip=client_ip(request),
                                     invitation_code=field(body, "invitationCode", str, "")[:upstream.MAX_CODE + 1])
        form = auth.SignInRequest(application=application.name, organization=user.owner, username=user.name,
                                  password="", auto_signin=field(body, "autoSignin", bool, False),
                                  signin_method=METHOD, client_ip=client_ip(request),
                                  user_agent=request.headers.get("user-agent", ""),
                                  previous_token=session_token(request))
        if mfa_props.enabled_types(user):
            owed = auth.owe_second_factor(db, user, application, form)
            return with_pending_second_factor(ok(auth.NEXT_MFA, owed.methods), owed)
        result = auth.complete_sign_in(db, user, lookup.organization(db, user.owner), application,
                                       auto_signin=form.auto_signin, client_ip=form.client_ip,
                                       user_agent=form.user_agent, previous_token=form.previous_token,
                                       signin_method=METHOD)
        return answered(db, request, checked, result, METHOD)
