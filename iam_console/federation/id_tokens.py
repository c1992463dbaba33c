"""Verifying an OpenID Connect ID token from an upstream provider (the code flow's id_token,
Google One Tap's credential). docs/security.md, "Upstream identity providers", states the rules.

The signature is checked by joserfc (Authlib's JOSE library; `authlib.jose` is its deprecated
predecessor) against the issuer's key set, asymmetric algorithms only: "none" and the HMAC ones
(whose key would be the client secret) are refused. The key set is fetched through the outbound
guard with its time limits and kept JWKS_TTL seconds; a `kid` it does not hold fetches it once
more (the issuer rotated its keys), at most once per REFETCH_SECONDS and key set, so tokens naming
made-up keys cannot make the server fetch on every request. Then the claims: `iss` one of the issuer's
names, `aud` holding the client id (with several audiences, `azp` must be the client id), `exp`
and `iat` within LEEWAY seconds, `nonce` the one this server sent, and a `sub`."""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet

from iam_console.core import outbound
from iam_console.core.errors import ServiceError

JWKS_TTL = 3600
REFETCH_SECONDS = 60
LEEWAY = 120
MAX_TOKEN = 16_000
MAX_KEY_SET_BYTES = 256 * 1024
ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
TENANT = "{tid}"  # in an issuer: Microsoft's multi-tenant issuer, the token's own tenant id

_cache: dict[str, tuple[float, KeySet]] = {}  # jwks uri -> (fetched at, keys)
_refetched: dict[str, float] = {}  # jwks uri -> when an unknown kid last fetched it again
_lock = threading.Lock()


@dataclass(frozen=True)
class Expected:
    """What a provider's ID token must say: its keys' URL, the issuer's names, the client id,
    and the nonce sent ("" when none was sent)."""
    jwks_uri: str
    issuers: tuple[str, ...]
    audience: str
    nonce: str = ""


def refused(reason: str) -> ServiceError:
    return ServiceError("Failed to login in: %s", f"the ID token {reason}")


def _fetch(uri: str, timeout: float) -> KeySet:
    with outbound.http_client(headers={"Accept": "application/json"}, timeout=timeout,
                              max_bytes=MAX_KEY_SET_BYTES) as client:
        answer = client.get(uri)
    if answer.status_code != 200:
        raise ServiceError("The key set %s answered HTTP %d", uri[:200], answer.status_code)
    try:
        document = answer.json()
        keys = [k for k in document["keys"] if isinstance(k, dict) and k.get("use", "sig") == "sig"]
        return KeySet.import_key_set({"keys": keys})
    except (ValueError, KeyError, TypeError, JoseError):
        raise ServiceError("The key set %s is not a JSON Web Key Set", uri[:200]) from None


def key_set(uri: str, kid: str | None, *, timeout: float = outbound.TIMEOUT_SECONDS) -> KeySet:
    """The keys at `uri` (an issuer's, or a client's jwks_uri: oauth/clients.py), fetched through
    the outbound guard within `timeout` seconds, again when stale, or when they lack `kid` and no
    key id made them fetched again in the last REFETCH_SECONDS."""
    now = time.monotonic()
    with _lock:
        cached, refetched_at = _cache.get(uri), _refetched.get(uri)
    if cached is not None and now - cached[0] < JWKS_TTL:
        if kid is None or any(k.kid == kid for k in cached[1]):
            return cached[1]
        if refetched_at is not None and now - refetched_at < REFETCH_SECONDS:
            return cached[1]
        with _lock:
            _refetched[uri] = now
    keys = _fetch(uri, timeout)
    with _lock:
        _cache[uri] = (now, keys)
    return keys


def forget_keys() -> None:
    with _lock:
        _cache.clear()
        _refetched.clear()


def _audiences(claims: dict[str, Any]) -> list[str]:
    aud = claims.get("aud")
    if isinstance(aud, str):
        return [aud]
    if isinstance(aud, list) and all(isinstance(a, str) for a in aud):
        return aud
    return []


def _check_claims(claims: dict[str, Any], expected: Expected, now: float) -> None:
    issuers = [i.replace(TENANT, str(claims.get("tid") or "")) if TENANT in i else i for i in expected.issuers]
    if not isinstance(claims.get("iss"), str) or claims["iss"] not in issuers or not claims["iss"]:
        raise refused(f"was issued by {str(claims.get('iss'))[:200]!r}, not by {' or '.join(issuers)[:400]}")
    audiences = _audiences(claims)
    if expected.audience not in audiences:
        raise refused("is not for this client")
    if len(audiences) > 1 and claims.get("azp") != expected.audience:
        raise refused("has several audiences and was not issued to this client (azp)")
    exp, iat = claims.get("exp"), claims.get("iat")
    if not isinstance(exp, int | float) or isinstance(exp, bool) or not isinstance(iat, int | float) \
            or isinstance(iat, bool):
        raise refused("has no expiry or issue time")
    if exp + LEEWAY < now:
        raise refused("has expired")
    if iat - LEEWAY > now:
        raise refused("was issued in the future")
    if expected.nonce:
        nonce = claims.get("nonce")
        if not isinstance(nonce, str) or not secrets.compare_digest(nonce.encode(), expected.nonce.encode()):
            raise refused("does not carry the nonce of this sign-in")
    if not isinstance(claims.get("sub"), str) or not claims["sub"]:
        raise refused("names no subject")


def verify(token: str, expected: Expected) -> dict[str, Any]:
    """The token's claims once its signature and claims check out; else a ServiceError saying
    which check failed."""
    if not isinstance(token, str) or not token or len(token) > MAX_TOKEN or token.count(".") != 2:
        raise refused("is not a signed JWT")
    if not expected.jwks_uri or not expected.audience:
        raise ServiceError("The provider has no key set or client ID to verify ID tokens with")

    def key_of(guest) -> Any:
        kid = guest.headers().get("kid")
        kid = kid if isinstance(kid, str) else None
        keys = key_set(expected.jwks_uri, kid)
        try:
            return keys.get_by_kid(kid)
        except (JoseError, ValueError):
            raise refused(f"is signed by an unknown key ({str(kid)[:100]})") from None

    try:
        decoded = jwt.decode(token, key_of, algorithms=list(ALGORITHMS))
    except ServiceError:
        raise
    except (JoseError, ValueError, TypeError) as exc:
        name = type(exc).__name__
        reason = "has an invalid signature" if "Signature" in name else \
            "is signed with an algorithm that is not accepted" if "Algorithm" in name else f"cannot be read ({name})"
        raise refused(reason) from None
    claims = dict(decoded.claims)
    _check_claims(claims, expected, time.time())
    return claims
