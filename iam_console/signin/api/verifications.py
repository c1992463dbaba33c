"""Verification codes: send-verification-code and
reset-email-or-phone, over signin/verifications.py; the forgotten-password flow
(get-email-and-phone, the forget method, verify-code), over signin/recovery.py; captchas:
get-captcha and verify-captcha, over signin/captcha.py.

Both take Casdoor's form fields (multipart or urlencoded; JSON is accepted too). Sending
talks to an SMTP server or an SMS gateway, so it runs in a worker thread and never holds up
the event loop that serves every other request and the console's websocket."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console import workers
from iam_console.api.bodies import form_or_json, json_body
from iam_console.api.callers import MFA_COOKIE, RESET_COOKIE, actor, client_ip
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.db import session_scope
from iam_console.settings import settings
from iam_console.signin import captcha, code_signin, mfa, recovery, second_factor, signup, verifications

router = APIRouter(prefix="/api", tags=["verification"])


def _text(form: dict, key: str) -> str:
    value = form.get(key)
    return value[:1000] if isinstance(value, str) else ""


@router.post("/send-verification-code")
async def send_verification_code(request: Request) -> JSONResponse:
    """Form: dest, type (email | phone), countryCode, applicationId (owner/name, optional: the
    organization's default application), method (reset). Methods:
    - reset: the signed-in user's new address;
    - forget: a visitor's forgotten password; checkUser names the account, the code goes to its
      own address, and the application's captcha is checked from captchaType, captchaToken and
      clientSecret;
    - login: sign-in with a code, to the typed address when it is an account's own email or
      phone (the application's "Verification code" signin method; the captcha as for forget);
    - signup: a visitor's new address, unused in the application's organization, where its
      sign-up verifies it; the captcha as for forget;
    - mfaSetup: the signed-in user's own address, for an email or sms setup they initiated;
    - mfaAuth: a pending sign-in's second factor, to the account's own address.
    For the MFA methods dest is not used: codes only ever go to the address the account has."""
    form = await form_or_json(request)
    context = audit_context(request)

    method = _text(form, "method") or "reset"
    kind = _text(form, "type")
    mfa_type = {"email": "email", "phone": "sms"}.get(kind, kind)

    def send() -> None:
        with session_scope() as db:
            if method == "mfaAuth":  # the second factor of a pending sign-in: the account's own address
                second_factor.send_code(db, request.cookies.get(MFA_COOKIE, ""), mfa_type, client_ip(request))
                return
            if method == "forget":
                recovery.send_code(db, _text(form, "applicationId"), _text(form, "checkUser"), _text(form, "dest"),
                                   kind, country_code=_text(form, "countryCode"), client_ip=client_ip(request),
                                   solved=recovery.Solved(_text(form, "captchaType"), _text(form, "captchaToken"),
                                                          _text(form, "clientSecret")),
                                   request=context)
                return
            if method == "signup":  # a visitor's new address, for an application whose sign-up verifies it
                signup.send_code(db, _text(form, "applicationId"), kind, _text(form, "dest"),
                                 country_code=_text(form, "countryCode"), captcha_type=_text(form, "captchaType"),
                                 captcha_token=_text(form, "captchaToken"), captcha_id=_text(form, "clientSecret"),
                                 client_ip=client_ip(request), request=context)
                return
            if method == "login":  # sign-in with a code: the typed address must be an account's own
                code_signin.send_code(db, _text(form, "applicationId"), _text(form, "dest"),
                                      country_code=_text(form, "countryCode"),
                                      captcha_type=_text(form, "captchaType"),
                                      captcha_token=_text(form, "captchaToken"),
                                      captcha_id=_text(form, "clientSecret"), client_ip=client_ip(request),
                                      request=context)
                return
            if method == "mfaSetup":  # a setup the caller initiated: the account's own address
                mfa.send_setup_code(db, actor(db, request), mfa_type, client_ip=client_ip(request),
                                    request=context)
                return
            verifications.send_code(db, actor(db, request), _text(form, "dest"), _text(form, "type"),
                                    country_code=_text(form, "countryCode"),
                                    application_id=_text(form, "applicationId"),
                                    method=method, client_ip=client_ip(request),
                                    request=context)

    await workers.run(send)
    return ok()


@router.post("/reset-email-or-phone")
async def reset_email_or_phone(request: Request) -> JSONResponse:
    """Form: type (email | phone), dest, code; the signed-in user's own email or phone."""
    form = await form_or_json(request)
    with session_scope() as db:
        verifications.reset(db, actor(db, request), _text(form, "dest"), _text(form, "type"), _text(form, "code"),
                            country_code=_text(form, "countryCode"), request=audit_context(request))
    return ok()


@router.get("/get-email-and-phone", summary="A forgotten password's first step: the account a name, email or phone "
                                            "answers to, its addresses masked (data2: email, phone or username)")
async def get_email_and_phone(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:
        found, how = recovery.contacts(db, params.get("organization", "")[:100], params.get("username", "")[:255],
                                       client_ip(request))
    return ok(found, how)


@router.post("/verify-code", summary="A forgotten password's code checked: the browser gets the grant that "
                                     "set-password with the code takes, in an HttpOnly cookie")
async def verify_code(request: Request) -> JSONResponse:
    body = await json_body(request)
    with session_scope() as db:
        token = recovery.verify(db, _text(body, "organization"), _text(body, "name"), _text(body, "username"),
                                _text(body, "code"), country_code=_text(body, "countryCode"))
    response = ok()
    response.set_cookie(RESET_COOKIE, token, httponly=True, samesite="strict", secure=settings.cookie_secure,
                        path="/api/", max_age=recovery.GRANT_SECONDS)
    return response


@router.get("/get-captcha", summary="The captcha of an application (applicationId=admin/name): none, a Default "
                                     "picture (captchaId, captchaImage as base64 PNG), or another type's settings")
async def get_captcha(request: Request) -> JSONResponse:
    with session_scope() as db:
        return ok(captcha.challenge(db, request.query_params.get("applicationId", ""), client_ip(request)))


@router.post("/verify-captcha", summary="Whether captchaToken answers the Default captcha clientSecret (its id)")
async def verify_captcha(request: Request) -> JSONResponse:
    form = await form_or_json(request)
    with session_scope() as db:
        return ok(captcha.verify(db, _text(form, "captchaType"), _text(form, "captchaToken"),
                                 _text(form, "clientSecret")))
