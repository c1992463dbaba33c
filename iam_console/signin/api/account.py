"""Sign-in, sign-out and the signed-in account."""

from __future__ import annotations

import dataclasses

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from iam_console.api.bodies import field, form_fields, form_or_json, json_object
from iam_console.api.callers import (
    IMPERSONATOR_COOKIE,
    MFA_COOKIE,
    SESSION_COOKIE,
    actor,
    client_ip,
    session_token,
    with_pending_second_factor,
)
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import lookup, navigation
from iam_console.core.errors import Unauthorized
from iam_console.db import session_scope
from iam_console.federation import wallet
from iam_console.federation.api.federation import login_with_provider
from iam_console.identity import impersonation
from iam_console.models import Organization, User
from iam_console.models.base import masked, to_wire
from iam_console.oauth.api import end_session, navigated, signed_out
from iam_console.oauth.logout import frames as front_channel_frames
from iam_console.saml.api import login_with_saml
from iam_console.settings import settings
from iam_console.signin import auth, code_signin, second_factor, signup
from iam_console.signin.api.sign_in_answers import authorization_in, signed_in

router = APIRouter(prefix="/api", tags=["account"])


def user_wire(user: User) -> dict:
    return masked(to_wire(user), User)


def organization_wire(organization: Organization | None) -> dict | None:
    return masked(to_wire(organization), Organization) if organization else None


def _wallet_login(body: dict) -> bool:
    """Whether /api/login's provider is a Web3 provider: the wallet sign-in (federation/wallet.py)."""
    with session_scope() as db:
        return wallet.is_wallet(db, str(body.get("application") or "")[:100], str(body.get("organization") or "")[:100],
                                str(body.get("provider") or "")[:100])


@router.post("/login")
async def login(request: Request) -> JSONResponse:
    """Casdoor's AuthForm: application, organization, username, password, autoSignin, type, signinMethod.
    With an authorization request in the query (clientId, responseType, redirectUri, scope, state,
    nonce, code_challenge...) the sign-in also answers it: data is the code (or the token), data2
    the URL to send the browser to.

    An account with a second factor gets data "NextMfa" and data2 its enabled methods (masked),
    and no session: a short-lived HttpOnly cookie names the pending sign-in, which a second
    call with passcode (and mfaType) or recoveryCode completes."""
    body = await json_object(request)
    if "samlresponse" in body:  # Casdoor's front end, with what a SAML provider's IdP posted (saml/api.py)
        return login_with_saml(request, body)
    if body.get("provider") and not _wallet_login(body):  # back from an upstream provider (federation/api/)
        return await login_with_provider(request, body)
    password = field(body, "password", str, "")
    passcode, recovery_code = field(body, "passcode", str, ""), field(body, "recoveryCode", str, "")
    provider = field(body, "provider", str, "")
    form = auth.SignInRequest(
        application=field(body, "application", str, ""),
        organization=field(body, "organization", str, ""),
        username=field(body, "username", str, ""),
        password=password,
        auto_signin=field(body, "autoSignin", bool, False),
        type=field(body, "type", str, "login"),
        signin_method=field(body, "signinMethod", str, "Password"),
        client_ip=client_ip(request),
        user_agent=request.headers.get("user-agent", ""),
        previous_token=session_token(request),
    )
    with session_scope() as db:
        checked = authorization_in(db, dict(request.query_params))
        if checked is not None:  # the sign-in is for that application, whatever the body says
            form = dataclasses.replace(form, application=checked.application.name, type="login",
                                       organization=form.organization or checked.organization.name)
        # the second step names its code (even left empty: then it is told so, not asked
        # for a username); the first step names a password. Keys come lower-cased.
        if ("passcode" in body or "recoverycode" in body) and not password:
            result = second_factor.complete(db, second_factor.Answer(
                pending_token=request.cookies.get(MFA_COOKIE, ""), passcode=passcode,
                mfa_type=field(body, "mfaType", str, ""), recovery_code=recovery_code,
                application=checked.application.name if checked else "", client_ip=form.client_ip,
                user_agent=form.user_agent, previous_token=form.previous_token))
        elif provider and wallet.is_wallet(db, form.application, form.organization, provider):
            # a wallet sign-in: code is the Web3 auth token the wallet signed (federation/wallet.py)
            result = wallet.sign_in(db, form, provider, field(body, "code", str, ""),
                                    field(body, "invitationCode", str, "")[:101])
        elif form.signin_method == code_signin.METHOD:  # the code sent to the typed email or phone
            result = code_signin.sign_in(db, form, field(body, "code", str, ""), field(body, "countryCode", str, ""))
        else:
            result = auth.sign_in(db, form)
        if isinstance(result, auth.SecondFactorOwed):
            return with_pending_second_factor(ok(auth.NEXT_MFA, result.methods), result)
        return signed_in(db, request, checked, result, form.signin_method or "Password")


SIGNUP_FIELDS = {"application": "application", "organization": "organization", "username": "username",
                 "password": "password", "name": "name", "firstName": "first_name", "lastName": "last_name",
                 "email": "email", "emailCode": "email_code", "phone": "phone", "phoneCode": "phone_code",
                 "countryCode": "country_code", "invitationCode": "invitation_code", "affiliation": "affiliation",
                 "idCard": "id_card", "region": "region", "gender": "gender", "bio": "bio", "tag": "tag",
                 "education": "education", "language": "language", "captchaType": "captchaType",
                 "captchaToken": "captcha_token", "clientSecret": "client_secret"}


@router.post("/signup")
async def signup_route(request: Request) -> JSONResponse:
    """Casdoor's AuthForm (application, username, password, name, email, emailCode, phone,
    phoneCode, countryCode, invitationCode, captchaType, captchaToken, ...; custom items'
    values by their item name): a new account of the application's organization, signed in
    at once. data is its owner/name, or with an authorization request in the query (clientId,
    responseType=code, redirectUri...) the code and in data2 the URL to go on to."""
    body = await json_object(request)
    values = {attr: field(body, key, str, "") for key, attr in SIGNUP_FIELDS.items()}
    values["captcha_type"] = values.pop("captchaType")
    known = {key.lower() for key in SIGNUP_FIELDS} | {"type", "autosignin", "agreement", "plan", "pricing"}
    extra = {key: value[:1000] for key, value in body.items() if key not in known and isinstance(value, str)}
    with session_scope() as db:
        checked = authorization_in(db, dict(request.query_params))
        form = signup.SignupForm(**values, extra=extra, client_ip=client_ip(request))
        if checked is not None:  # signing up through that application's authorization request
            form = dataclasses.replace(form, application=checked.application.name)
        user, organization, application = signup.sign_up(db, form, audit_context(request))
        result = auth.complete_sign_in(db, user, organization, application, client_ip=form.client_ip,
                                       user_agent=request.headers.get("user-agent", ""),
                                       previous_token=session_token(request), signin_method="Signup")
        return signed_in(db, request, checked, result, "Signup")


@router.get("/logout", operation_id="logout_get")
@router.post("/logout", operation_id="logout_post")
async def logout(request: Request) -> Response:
    """With an id_token_hint (OpenID RP-initiated logout): that token is revoked
    and the browser goes to post_logout_redirect_uri if it is registered.
    Without: ends the cookie's session; data is the user, data2 the
    application's homepage (where the console goes next, if set)."""
    values = dict(request.query_params)
    if request.method == "POST" and "form" in request.headers.get("content-type", ""):
        values.update(await form_fields(request))
    if values.get("id_token_hint"):
        return end_session(request, values)
    with session_scope() as db:
        ended = auth.sign_out(db, session_token(request), client_ip(request))  # its applications are told
        frames = front_channel_frames(db, {ended.session_id}) if ended and navigated(request) else []
    if navigated(request):  # the console's sign-out (assets/iam.js iamLogoutNavigation): where it goes next
        response: Response = signed_out(frames, navigation.after_logout(
            ended.homepage if ended else "", ended.user_id.partition("/")[0] if ended else ""))
    else:
        response = ok(ended.user_id, ended.homepage) if ended else ok()
    response.delete_cookie(SESSION_COOKIE, path="/")
    return response


@router.post("/impersonate-user", summary="A global admin acts as owner/name until exit-impersonate-user")
async def impersonate_user(request: Request) -> JSONResponse:
    body = await form_or_json(request)
    own_token = session_token(request)
    with session_scope() as db:
        started = impersonation.start(db, actor(db, request), own_token, str(body.get("owner") or ""),
                                      str(body.get("name") or ""), client_ip(request))
    response = ok(started.user_id)
    cookie = {"httponly": True, "samesite": "strict", "secure": settings.cookie_secure}
    response.set_cookie(IMPERSONATOR_COOKIE, own_token, path="/api/", **cookie)  # the way back
    response.set_cookie(SESSION_COOKIE, started.token, path="/", **{**cookie, "samesite": "lax"})
    return response


@router.post("/exit-impersonate-user", summary="Back to the impersonating admin's own console session")
async def exit_impersonate_user(request: Request) -> JSONResponse:
    admin_token = request.cookies.get(IMPERSONATOR_COOKIE, "")
    with session_scope() as db:
        admin_id = impersonation.exit_(db, session_token(request), admin_token, client_ip(request))
    response = ok(admin_id)
    response.delete_cookie(IMPERSONATOR_COOKIE, path="/api/")
    response.set_cookie(SESSION_COOKIE, admin_token, httponly=True, samesite="lax", secure=settings.cookie_secure,
                        path="/")
    return response


@router.get("/get-account")
async def get_account(request: Request) -> JSONResponse:
    """The caller's account: from the session cookie, or an access token (apps call it with their user's)."""
    with session_scope() as db:
        user = actor(db, request).user
        if user is None:
            raise Unauthorized()
        organization = lookup.organization(db, user.owner)
        return ok(user_wire(user), organization_wire(organization), sub=user.uuid, name=user.name)
