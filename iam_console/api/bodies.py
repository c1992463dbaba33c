"""Request bodies as Casdoor reads them: JSON whatever the Content-Type says,
keys matched without regard to case; parsed by core/json_input.py."""

from __future__ import annotations

from typing import Any

from fastapi import Request
from starlette.exceptions import HTTPException

from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json

MAX_BODY_BYTES = 1 << 20


async def json_body(request: Request, *, allow_empty: bool = False) -> dict[str, Any]:
    """The body as a JSON object, whatever the Content-Type says; a clear error otherwise."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ServiceError("The request body is too large")
    if not raw.strip() or (allow_empty and raw.strip() == b'""'):
        if allow_empty:
            return {}
        raise ServiceError("The request body cannot be empty")
    value = parse_json(raw)
    if not isinstance(value, dict):
        raise ServiceError("The request body must be a JSON object")
    return value


async def json_list(request: Request, what: str, limit: int = MAX_BODY_BYTES) -> list:
    """The body as a JSON list (sync-ldap-users' users, send-invitation's addresses)."""
    raw = await request.body()
    if len(raw) > limit:
        raise ServiceError("The request body is too large")
    value = parse_json(raw) if raw.strip() else None
    if not isinstance(value, list):
        raise ServiceError("The request body must be a list of %s", what)
    return value


async def form_fields(request: Request) -> dict[str, str]:
    """The text fields of a multipart or urlencoded form. Starlette answers a malformed
    multipart body (no boundary, a part without a name) with its own HTTP 400, outside the
    envelope the SDKs read: here it is the envelope's clear error instead."""
    try:
        form = await request.form()
    except HTTPException as exc:
        raise ServiceError("The request body is not a valid form: %s", exc.detail) from None
    return {k: v for k, v in form.items() if isinstance(v, str)}


async def form_or_json(request: Request) -> dict[str, Any]:
    """Casdoor's form routes (set-password, send-verification-code...): a multipart or
    urlencoded form, as its SDKs and console send them, or a JSON object."""
    if "form" in request.headers.get("content-type", ""):
        return await form_fields(request)
    return await json_body(request, allow_empty=True)


async def json_object(request: Request) -> dict[str, Any]:
    """The body as a dict with lower-cased keys (an empty body is an empty object)."""
    raw = await request.body()
    if not raw.strip():
        return {}
    return {str(k).lower(): v for k, v in (await json_body(request)).items()}


def field(body: dict[str, Any], key: str, kind: type, default: Any) -> Any:
    """One field of a parsed body, checked against the type it must have."""
    value = body.get(key.lower(), default)
    if value is None:
        return default
    if kind is bool and isinstance(value, bool):
        return value
    if kind is not bool and isinstance(value, kind):
        return value
    raise ServiceError("The field %s must be of type %s", key, {str: "string", bool: "boolean"}.get(kind, "value"))
