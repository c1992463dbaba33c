"""SAML 2.0 over HTTP: this server as identity provider (metadata, single sign-on over the
HTTP-Redirect and HTTP-POST bindings) and as service provider of SAML providers
(/api/get-saml-login, /api/acs). The rules are the services' (services/saml_idp.py,
services/saml_sp.py); docs/api.md lists the routes."""

from __future__ import annotations

from html import escape
from urllib.parse import quote

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from ..db import session_scope
from ..i18n import translate
from ..services import auth, lookup, mfa, mfa_props, oauth, saml_accounts, saml_idp, saml_sp, verifications
from ..services import builtin as b
from ..services.errors import ServiceError
from ..services.records import audit
from .auditing import record_refusal
from .bodies import form_fields
from .callers import SESSION_COOKIE, client_ip, session_token, signed_in, with_pending_second_factor, with_session
from .envelope import language, ok

router = APIRouter(prefix="/api", tags=["saml"])
NO_STORE = {"Cache-Control": "no-store"}
PAGE_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'"
METHOD = "SAML"
CANNOT_USE = "The user %s/%s cannot sign in to application %s"  # the OAuth authorize page's refusal
HTML = {"content": {"text/html": {}}}
# the single sign-on and ACS answers: a redirect, the page that posts a SAML message, or a refusal's page
PAGES = {200: {**HTML, "description": "The page that posts the SAML message"},
         303: {"description": "On to sign in, or to where the sign-in goes"},
         400: {**HTML, "description": "The refused message's reason"}}


def _page(body: str, status: int = 200) -> HTMLResponse:
    return HTMLResponse(body, status_code=status, headers={**NO_STORE, "Content-Security-Policy": PAGE_CSP})


async def _refused(request: Request, exc: ServiceError) -> HTMLResponse:
    """A refused SAML message: the reason on a page of its own; nothing is sent anywhere."""
    message = escape(translate(exc.template, language(request), *exc.args_))
    await run_in_threadpool(record_refusal, request, exc, message.encode())
    title = escape(translate("Sign in", language(request)))
    return _page(f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>'
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
        here = saml_idp.resume_path(sso, "", raw_query)
        account = signed_in(db, request)
        user = account[0] if account is not None else None
        if user is not None and not oauth.may_use(user, sso.application):
            raise ServiceError(CANNOT_USE, user.owner, user.name, sso.application.name)
        if user is None:
            target = f"/login/{quote(sso.application.organization, safe='')}?from={quote(here, safe='/')}"
            return RedirectResponse(target, status_code=303, headers=NO_STORE)
        setup = mfa.required_setup_path(lookup.organization(db, user.owner), user, here)
        if setup:
            return RedirectResponse(setup, status_code=303, headers=NO_STORE)
        page = saml_idp.answer_page(db, sso, user)
        audit(db, organization=user.owner, user=user.name, action="saml-sso", request_uri=saml_idp.SSO_PATH,
              client_ip=client_ip(request), obj={"application": sso.application.name, "issuer": sso.issuer,
                                                  "acs": sso.acs_url})
        return _page(page)


@router.get("/saml/redirect/{owner}/{application}", response_class=Response, responses=PAGES)
async def saml_sso_redirect(request: Request, owner: str, application: str) -> Response:
    """Single sign-on, HTTP-Redirect binding: SAMLRequest (deflated), RelayState, SigAlg and
    Signature. A signed-in user gets the page that posts the signed Response to the service
    provider; anyone else signs in first and comes back here. A refused request shows why."""
    try:
        return await run_in_threadpool(_sso, request, owner, application, dict(request.query_params),
                                       redirect_binding=True, raw_query=request.url.query)
    except ServiceError as exc:
        return await _refused(request, exc)


@router.post("/saml/redirect/{owner}/{application}", response_class=Response, responses=PAGES)
async def saml_sso_post(request: Request, owner: str, application: str) -> Response:
    """Single sign-on, HTTP-POST binding: SAMLRequest and RelayState as a form; checked, then
    on to the Redirect binding's form of the same request (303)."""
    try:
        params = await form_fields(request)
        return await run_in_threadpool(_sso, request, owner, application, params, redirect_binding=False,
                                       raw_query="")
    except ServiceError as exc:
        return await _refused(request, exc)


@router.get("/get-saml-login")
async def get_saml_login(request: Request) -> Response:
    """Casdoor's GetSamlLogin: ?id=owner/provider&relayState=... -> data: the URL of the IdP's
    single sign-on with the AuthnRequest, data2: the method (GET). Optional: application (the
    one signed in to; the provider organization's default application otherwise) and from (the
    same-site path to go to after sign-in)."""
    params = request.query_params
    with session_scope() as db:
        provider = saml_sp.provider_of(db, params.get("id", ""))
        application = _application(db, provider, params.get("application", ""))
        login = saml_sp.login(db, f"{provider.owner}/{provider.name}", application, params.get("relayState", ""),
                              params.get("from", "/"))
    return ok(login.url, login.method)


def _application(db, provider, name: str):
    if name:
        application = lookup.application(db, name)
    else:
        owner = provider.owner if provider.owner != b.ADMIN_OWNER else b.BUILT_IN_ORG
        application = verifications.default_application(db, lookup.organization(db, owner))
    if application is None:
        raise ServiceError(saml_idp.NOT_FOUND, name or provider.owner)
    return application


def _acs(request: Request, form: dict[str, str]) -> Response:
    with session_scope() as db:
        assertion = saml_sp.accept(db, form.get("SAMLResponse", ""))
        application = lookup.application(db, assertion.application)
        if application is None:
            raise ServiceError(saml_idp.NOT_FOUND, assertion.application)
        user = saml_accounts.account(db, application, assertion, client_ip=client_ip(request))
        organization = lookup.organization(db, user.owner)
        auth.refuse_if_frozen(db, user, application)
        back = saml_sp.login_return(user.owner, assertion.return_to)
        if mfa_props.enabled_types(user):  # the login page asks for the second factor
            owed = auth.owe_second_factor(db, user, application, auth.SignInRequest(
                application=application.name, organization=user.owner, username=user.name, password="",
                signin_method=METHOD))
            types = ",".join(m["mfaType"] for m in owed.methods)
            response = RedirectResponse(f"{back}&secondFactor={quote(types)}", status_code=303, headers=NO_STORE)
            if session_token(request):  # the browser's earlier session ends here, as a sign-in rotates it
                auth.sign_out(db, session_token(request), client_ip(request))
                response.delete_cookie(SESSION_COOKIE, path="/")
            return with_pending_second_factor(response, owed)
        result = auth.complete_sign_in(db, user, organization, application, client_ip=client_ip(request),
                                       user_agent=request.headers.get("user-agent", ""),
                                       previous_token=session_token(request), signin_method=METHOD)
        return with_session(request, RedirectResponse(assertion.return_to, status_code=303, headers=NO_STORE),
                            result)


@router.post("/acs", response_class=Response, responses=PAGES)
async def acs(request: Request) -> Response:
    """The assertion consumer service: SAMLResponse (and RelayState) posted by a SAML
    provider's IdP. A checked Response signs its user in (a second factor, when the account
    has one, is asked on the login page) and goes on to where the sign-in started."""
    try:
        form = await form_fields(request)
        return await run_in_threadpool(_acs, request, form)
    except ServiceError as exc:
        return await _refused(request, exc)
