"""DPoP (RFC 9449): proofs of possession of a client's key, and the server nonces.

A proof is a JWT the client signs with a key whose public half rides in its header; the token it
obtains is bound to that key's RFC 7638 thumbprint (`cnf.jkt`), and every use of the token needs a
new proof by the same key. A proof is refused when it is malformed, signed with another key than
its header's, for another method or URL, too old or from the future, or seen before: the proofs
seen are marked in the throttle table (core/throttle.py), which every worker shares, for as long
as their `iat` would be accepted (docs/security.md, "PAR, JAR and DPoP").

Nonces are stateless: the number of the current time window and its HMAC under a key derived
from the server's key, so any worker checks any other's; the current and the previous windows
are accepted."""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass
from typing import Any

import jwt
from joserfc.jwk import thumbprint
from sqlmodel import Session, select

from iam_console.core import lookup, server_keys, throttle
from iam_console.models import Token
from iam_console.oauth.errors import OAuthError, digest
from iam_console.settings import settings

ALGORITHMS = ("ES256", "RS256")  # advertised as dpop_signing_alg_values_supported
PROOF_TYPE = "dpop+jwt"
MAX_PROOF = 8_000
PAST_SECONDS, FUTURE_SECONDS = 300, 60  # how old (and how far ahead, for clock skew) an iat may be
NONCE_WINDOW = 300
HEADER = "DPoP-Nonce"
_THUMBPRINTED = {"RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y")}


class ProofError(OAuthError):
    """invalid_dpop_proof or use_dpop_nonce. At the token endpoint (RFC 9449 §5) a 400 in JSON;
    at a resource (userinfo, RFC 9449 §7.1) a 401 with its WWW-Authenticate: DPoP challenge."""

    def __init__(self, error: str, description: str, *, resource: bool = False, nonce: str = "") -> None:
        super().__init__(error, description, 401 if resource else 400)
        self.headers = {HEADER: nonce} if nonce else {}
        if resource:
            self.headers["WWW-Authenticate"] = challenge(error, description)


def challenge(error: str = "", description: str = "") -> str:
    """The WWW-Authenticate value of a resource's refusal (RFC 9449 §7.1)."""
    parts = [f'error="{error}"', f'error_description="{description}"'] if error else []
    return "DPoP " + ", ".join([*parts, f'algs="{" ".join(ALGORITHMS)}"'])


@dataclass(frozen=True)
class Proof:
    jkt: str  # the thumbprint of the proof's key
    nonce_ok: bool  # it carries a nonce of this server, still fresh


def url_of(path: str) -> str:
    """The public URL of one of this server's paths: what a proof's `htu` must name (the request
    may reach the server through a proxy, under another address)."""
    return f"{settings.origin}{path}"


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def key_thumbprint(jwk: dict[str, Any]) -> str:
    members = _THUMBPRINTED.get(jwk.get("kty", ""))
    if members is None or any(not isinstance(jwk.get(m), str) for m in members):
        raise ValueError("unsupported key")
    return thumbprint({m: jwk[m] for m in members})


def _same_url(htu: str, url: str) -> bool:
    """RFC 9449 §4.3: the URL without its query and fragment; scheme and host compare without case."""
    def normal(value: str) -> str:
        value = value.split("#", 1)[0].split("?", 1)[0]
        scheme, _, rest = value.partition("://")
        host, slash, path = rest.partition("/")
        return f"{scheme.lower()}://{host.lower()}{slash}{path}"
    return normal(htu) == normal(url)


def verify(db: Session, proof: str, method: str, url: str, *, access_token: str = "",
           resource: bool = False) -> Proof:
    """The proof's key thumbprint, once every check of RFC 9449 §4.3 passed; ProofError else.
    `access_token`: the token it must be bound to (`ath`), at a resource."""
    def refuse(description: str) -> ProofError:
        return ProofError("invalid_dpop_proof", description, resource=resource)

    if not proof or len(proof) > MAX_PROOF or "," in proof:
        raise refuse("Exactly one DPoP proof is required")
    try:
        header = jwt.get_unverified_header(proof)
    except jwt.PyJWTError:
        raise refuse("The DPoP proof is not a JWT") from None
    algorithm, jwk = header.get("alg"), header.get("jwk")
    if header.get("typ") != PROOF_TYPE:
        raise refuse("The DPoP proof's typ must be dpop+jwt")
    if algorithm not in ALGORITHMS:
        raise refuse(f"The DPoP proof's alg must be one of {', '.join(ALGORITHMS)}")
    if not isinstance(jwk, dict) or "d" in jwk or "p" in jwk:
        raise refuse("The DPoP proof's header must carry its public key as jwk")
    try:
        key = jwt.PyJWK(jwk, algorithm)
        jkt = key_thumbprint(jwk)
        claims = jwt.decode(proof, key.key, algorithms=[algorithm],
                            options={"verify_aud": False, "verify_exp": False, "verify_iat": False,
                                     "require": ["jti", "htm", "htu", "iat"]})
    except (jwt.PyJWTError, ValueError, TypeError):
        raise refuse("The DPoP proof's signature does not verify with its header's key") from None
    if claims["htm"] != method:
        raise refuse("The DPoP proof's htm is not this request's method")
    if not isinstance(claims["htu"], str) or not _same_url(claims["htu"], url):
        raise refuse("The DPoP proof's htu is not this request's URL")
    now = int(time.time())
    iat = claims["iat"]
    if not isinstance(iat, int | float) or not now - PAST_SECONDS <= iat <= now + FUTURE_SECONDS:
        raise refuse("The DPoP proof's iat is too old or in the future")
    if access_token:
        expected = _b64(hashlib.sha256(access_token.encode()).digest())
        if not hmac.compare_digest(str(claims.get("ath", "")), expected):
            raise refuse("The DPoP proof's ath is not the hash of the access token")
    nonce_ok = _nonce_fresh(db, claims.get("nonce"))
    jti = claims["jti"]
    if not isinstance(jti, str) or not jti or len(jti) > 200:
        raise refuse("The DPoP proof's jti is missing or too long")
    # after every other check: a refused proof marks nothing
    if not throttle.claim(db, f"dpop:{digest(jkt + ':' + jti)}", PAST_SECONDS + FUTURE_SECONDS + 1):
        raise refuse("The DPoP proof has been used before")
    return Proof(jkt, nonce_ok)


def require_nonce(db: Session, proof: Proof, *, resource: bool = False) -> None:
    """For an application that requires nonces (require_dpop_nonce): use_dpop_nonce with a fresh one."""
    if not proof.nonce_ok:
        raise ProofError("use_dpop_nonce", "Resend the DPoP proof with the server's nonce", resource=resource,
                         nonce=nonce(db))


def _mac(db: Session, window: int) -> str:
    return hmac.new(server_keys.derived_key(db, "dpop-nonce"), str(window).encode(), hashlib.sha256).hexdigest()[:32]


def nonce(db: Session) -> str:
    window = int(time.time()) // NONCE_WINDOW
    return f"{window}.{_mac(db, window)}"


def _nonce_fresh(db: Session, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    window, _, mac = value.partition(".")
    if not window.isdigit() or int(window) not in (int(time.time()) // NONCE_WINDOW - 1,
                                                   int(time.time()) // NONCE_WINDOW):
        return False
    return hmac.compare_digest(mac, _mac(db, int(window)))


def token_binding(db: Session, application: Any, proofs: list[str], url: str) -> str:
    """At the token endpoint: the thumbprint the tokens will be bound to ('' for Bearer tokens),
    by the application's options (require_dpop, require_dpop_nonce). `application`: the client
    the request names (None: unknown, its authentication fails next)."""
    if not proofs:
        if application is not None and application.require_dpop:
            raise ProofError("invalid_dpop_proof", "This application's tokens must be DPoP-bound: send a DPoP proof")
        return ""
    if len(proofs) > 1:
        raise ProofError("invalid_dpop_proof", "Exactly one DPoP proof is required")
    proof = verify(db, proofs[0], "POST", url)
    if application is not None and application.require_dpop_nonce:
        require_nonce(db, proof)
    return proof.jkt


def resource_binding(db: Session, scheme: str, proofs: list[str], method: str, url: str, access_token: str) -> str:
    """At a resource (userinfo): the thumbprint of the request's proof for its `Authorization:
    DPoP` token ('' for a Bearer token: tokens.live_token then refuses a DPoP-bound one). The
    nonce is asked for when the token's application requires it."""
    if scheme != "dpop":
        return ""
    if len(proofs) != 1:
        raise ProofError("invalid_dpop_proof", "Exactly one DPoP proof is required with a DPoP token", resource=True)
    proof = verify(db, proofs[0], method, url, access_token=access_token, resource=True)
    application = db.exec(select(Token.application).where(Token.access_token_hash == digest(access_token))).first()
    found = lookup.application(db, application) if application else None
    if found is not None and found.require_dpop_nonce:
        require_nonce(db, proof, resource=True)
    return proof.jkt
