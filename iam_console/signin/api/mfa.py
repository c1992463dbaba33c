"""Multi-factor setup routes, over signin/mfa.py.

Casdoor's SDKs send multipart forms (delete-mfa: owner and name in the query with an
empty body); urlencoded forms and JSON are accepted too. The user is owner/name: the
caller, or (enable email/sms, set preferred, delete) a user an admin manages."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import form_or_json
from iam_console.api.callers import actor, client_ip
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.db import session_scope
from iam_console.signin import mfa

router = APIRouter(prefix="/api", tags=["mfa"])


async def _form(request: Request) -> dict[str, str]:
    form = {k: v for k, v in request.query_params.items()}
    form.update({k: v for k, v in (await form_or_json(request)).items() if isinstance(v, str)})
    return {k: v[:1000] for k, v in form.items()}


@router.post("/mfa/setup/initiate")
async def mfa_setup_initiate(request: Request) -> JSONResponse:
    """Form: owner, name, mfaType (app | email | sms). data: the MfaProps, with the TOTP secret
    and otpauth URL (app) and the recovery code, shown only here."""
    form = await _form(request)
    with session_scope() as db:
        props = mfa.initiate(db, actor(db, request), form.get("owner", ""), form.get("name", ""),
                             form.get("mfaType", ""), audit_context(request))
    return ok(props)


@router.post("/mfa/setup/verify")
async def mfa_setup_verify(request: Request) -> JSONResponse:
    """Form: owner, name, mfaType, passcode (and secret: if sent, it must be the one issued)."""
    form = await _form(request)
    with session_scope() as db:
        mfa.verify(db, actor(db, request), form.get("owner", ""), form.get("name", ""), form.get("mfaType", ""),
                   form.get("passcode", ""), secret=form.get("secret", ""), client_ip=client_ip(request))
    return ok("OK")


@router.post("/mfa/setup/enable")
async def mfa_setup_enable(request: Request) -> JSONResponse:
    """Form: owner, name, mfaType (secret and recoveryCode(s): if sent, the ones issued)."""
    form = await _form(request)
    with session_scope() as db:
        mfa.enable(db, actor(db, request), form.get("owner", ""), form.get("name", ""), form.get("mfaType", ""),
                   secret=form.get("secret", ""),
                   recovery_code=form.get("recoveryCode", "") or form.get("recoveryCodes", ""),
                   request=audit_context(request))
    return ok("OK")


@router.post("/set-preferred-mfa")
async def set_preferred_mfa(request: Request) -> JSONResponse:
    """Form: owner, name, mfaType. data: the user's MfaProps, masked."""
    form = await _form(request)
    with session_scope() as db:
        props = mfa.set_preferred(db, actor(db, request), form.get("owner", ""), form.get("name", ""),
                                  form.get("mfaType", ""), audit_context(request))
    return ok(props)


@router.post("/delete-mfa")
async def delete_mfa(request: Request) -> JSONResponse:
    """owner and name (query or form): every method, the preference and the recovery codes go.
    data: the user's MfaProps, masked."""
    form = await _form(request)
    with session_scope() as db:
        props = mfa.delete_all(db, actor(db, request), form.get("owner", ""), form.get("name", ""),
                               audit_context(request))
    return ok(props)
