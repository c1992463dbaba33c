"""A client's registered public keys: the JWK Set of the application's `jwks` (RFC 7591's client
metadata of that name), which verify the request objects it signs (oauth/request_objects.py)."""

from __future__ import annotations

from typing import Any

from iam_console.models import Application

PRIVATE_MEMBERS = ("d", "p", "q", "dp", "dq", "qi", "k")  # never used to verify, whatever was pasted


def client_keys(application: Application) -> list[dict[str, Any]]:
    """The public keys of the application's JWK Set, each without any private member."""
    keys = application.jwks.get("keys") if isinstance(application.jwks, dict) else None
    if not isinstance(keys, list):
        return []
    return [{k: v for k, v in key.items() if k not in PRIVATE_MEMBERS} for key in keys
            if isinstance(key, dict) and key.get("kty") in ("RSA", "EC")]
