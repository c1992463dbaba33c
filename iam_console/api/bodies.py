"""Request bodies as Casdoor reads them: JSON whatever the Content-Type says,
keys matched without regard to case."""

from __future__ import annotations

import json
from typing import Any

from fastapi import Request

from ..services.errors import ServiceError

MAX_BODY_BYTES = 1 << 20


async def json_object(request: Request) -> dict[str, Any]:
    """The body as a dict with lower-cased keys; a clear error for anything else."""
    raw = await request.body()
    if len(raw) > MAX_BODY_BYTES:
        raise ServiceError("The request body is too large")
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ServiceError("The request body is not valid JSON") from exc
    if not isinstance(value, dict):
        raise ServiceError("The request body must be a JSON object")
    return {str(k).lower(): v for k, v in value.items()}


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
