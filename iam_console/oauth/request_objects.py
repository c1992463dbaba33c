"""Request objects (RFC 9101, JAR): an authorization request's parameters as a JWT the client
signs with a key of its registered JWK Set (oauth/client_keys.py). Only signed objects are
taken (never alg "none", never a key the object names itself), addressed to this issuer (`aud`),
from the client (`iss`, `client_id`), and short-lived (`exp`); a request object leads to one code
at most (oauth/oauth.py `authorize`, docs/security.md "PAR, JAR and DPoP")."""

from __future__ import annotations

import time
from typing import Any

import jwt
from sqlmodel import Session

from iam_console.core import throttle
from iam_console.models import Application
from iam_console.oauth.client_keys import client_keys
from iam_console.oauth.errors import OAuthError, digest
from iam_console.settings import settings

ALGORITHMS = ("RS256", "ES256")  # advertised as request_object_signing_alg_values_supported
MAX_REQUEST = 20_000
MAX_LIFETIME = 3600  # seconds from now to `exp`
KEY_TYPES = {"RS256": "RSA", "ES256": "EC"}
REGISTERED = ("iss", "aud", "exp", "iat", "nbf", "jti", "request", "request_uri")  # not parameters


def refuse(description: str) -> OAuthError:
    return OAuthError("invalid_request_object", description)


def _claims(application: Application, request: str) -> dict[str, Any]:
    if len(request) > MAX_REQUEST:
        raise refuse("The request object is too long")
    try:
        header = jwt.get_unverified_header(request)
    except jwt.PyJWTError:
        raise refuse("The request object is not a JWT") from None
    algorithm = header.get("alg")
    if algorithm not in ALGORITHMS:
        raise refuse(f"The request object must be signed with one of {', '.join(ALGORITHMS)}")
    keys = [k for k in client_keys(application) if k.get("kty") == KEY_TYPES[algorithm]
            and (not header.get("kid") or k.get("kid") == header["kid"])]
    if not keys:
        raise refuse("The application has no registered key (jwks) that verifies this request object")
    for key in keys:
        try:
            return jwt.decode(request, jwt.PyJWK(key, algorithm).key, algorithms=[algorithm],
                              audience=settings.origin, issuer=application.client_id,
                              options={"require": ["exp", "aud", "iss"]})
        except jwt.InvalidSignatureError:
            continue
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise refuse(f"The request object is invalid: {exc}") from None
    raise refuse("The request object's signature does not verify with the application's keys")


def parameters(application: Application, request: str) -> dict[str, str]:
    """The authorization request's parameters from a request object of `application`'s client."""
    claims = _claims(application, request)
    if claims["exp"] > time.time() + MAX_LIFETIME:
        raise refuse(f"The request object must expire within {MAX_LIFETIME} seconds")
    if claims.get("client_id", application.client_id) != application.client_id:
        raise refuse("The request object's client_id is not the request's")
    found = {k: str(v) for k, v in claims.items() if k not in REGISTERED and isinstance(v, str | int)}
    return {**found, "client_id": application.client_id}


def spend(db: Session, request: str) -> bool:
    """Mark a request object used (for as long as it would be accepted); False if it was before."""
    try:
        expires = int(jwt.decode(request, options={"verify_signature": False}).get("exp", 0))
    except (jwt.PyJWTError, ValueError, TypeError):
        return False
    return throttle.claim(db, f"jar:{digest(request)}", max(1, expires - int(time.time()) + 1))
