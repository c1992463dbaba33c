"""Verification codes (casdoor-api.md §1, 'Verification'): send-verification-code and
reset-email-or-phone, over services/verifications.py.

Both take Casdoor's form fields (multipart or urlencoded; JSON is accepted too). Sending
talks to an SMTP server or an SMS gateway, so it runs in a worker thread and never holds up
the event loop that serves every other request and the console's websocket."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.concurrency import run_in_threadpool

from ..db import session_scope
from ..services import verifications
from .bodies import form_or_json
from .callers import actor, client_ip
from .envelope import ok
from .resources import audit_context

router = APIRouter(prefix="/api", tags=["verification"])


def _text(form: dict, key: str) -> str:
    value = form.get(key)
    return value[:1000] if isinstance(value, str) else ""


@router.post("/send-verification-code")
async def send_verification_code(request: Request) -> JSONResponse:
    """Form: dest, type (email | phone), countryCode, applicationId (owner/name, optional: the
    organization's default application), method (reset). The captcha fields (captchaType,
    captchaToken, clientSecret) and checkUser are not checked yet; only the signed-in user's
    reset codes are sent."""
    form = await form_or_json(request)
    context = audit_context(request)

    def send() -> None:
        with session_scope() as db:
            verifications.send_code(db, actor(db, request), _text(form, "dest"), _text(form, "type"),
                                    country_code=_text(form, "countryCode"),
                                    application_id=_text(form, "applicationId"),
                                    method=_text(form, "method") or "reset", client_ip=client_ip(request),
                                    request=context)

    await run_in_threadpool(send)
    return ok()


@router.post("/reset-email-or-phone")
async def reset_email_or_phone(request: Request) -> JSONResponse:
    """Form: type (email | phone), dest, code; the signed-in user's own email or phone."""
    form = await form_or_json(request)
    with session_scope() as db:
        verifications.reset(db, actor(db, request), _text(form, "dest"), _text(form, "type"), _text(form, "code"),
                            country_code=_text(form, "countryCode"), request=audit_context(request))
    return ok()
