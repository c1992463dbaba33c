"""Client authentication: the one check of every endpoint a client calls with its credentials
(every grant of the token endpoint, introspection, revocation, device authorization, PAR).
docs/api.md, "Standards", and docs/security.md, "Client authentication and client assertions",
state the rules.

The methods (OpenID Connect Core 9, RFC 6749 §2.3, RFC 7523 §2.2):
- client_secret_basic: HTTP Basic, the id and secret each form-encoded (api.py reads the header);
- client_secret_post: client_id and client_secret in the body;
- client_secret_jwt: a JWT signed with HMAC under the client secret (HS256/384/512);
- private_key_jwt: a JWT signed with a private key whose public key the application registered,
  as a JWK Set (`jwks`, which also verifies its request objects: oauth/request_objects.py) or the
  URL of one (`jwks_uri`, fetched through the outbound guard with a
  time budget, kept an hour, fetched again once a minute at most for an unknown `kid`);
- none: a public client, which names itself and proves nothing.

The application's `tokenEndpointAuthMethod` names the one it must use; left empty, it is one of
the secret methods, or none where no secret is required (a PKCE code exchange, a public
client's refresh, the device flow). An assertion's `iss` and `sub` are the client id (so
`client_id` may be left out), its `aud` names the issuer or the token endpoint (or the endpoint
called), `exp` is required and at most ASSERTION_SECONDS away, and its `jti` is used once:
kept in `client_assertion` until `exp`, a second use is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import httpx
from joserfc import jwt
from joserfc.errors import JoseError
from joserfc.jwk import KeySet, OctKey
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, delete

from iam_console.core import lookup, outbound
from iam_console.core.errors import ServiceError
from iam_console.federation import id_tokens
from iam_console.models import Application, ClientAssertion
from iam_console.models.base import utcnow
from iam_console.oauth import client_keys
from iam_console.settings import settings

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
SECRET_BASIC, SECRET_POST = "client_secret_basic", "client_secret_post"
SECRET_JWT, PRIVATE_KEY_JWT, NONE = "client_secret_jwt", "private_key_jwt", "none"
METHODS = (SECRET_BASIC, SECRET_POST, SECRET_JWT, PRIVATE_KEY_JWT, NONE)
SIGNING_ALGORITHMS = {SECRET_JWT: ("HS256", "HS384", "HS512"),
                      PRIVATE_KEY_JWT: ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512",
                                        "ES256", "ES384", "ES512")}
ASSERTION_SECONDS = 300  # an assertion's exp is at most this far ahead: it is short-lived
LEEWAY = 30  # clock skew allowed on exp, iat and nbf
MAX_ASSERTION = 8_000
KEY_SET_SECONDS = 5.0  # the time budget of fetching a jwks_uri within a token request
MAX_JWKS = 64 * 1024


class ClientError(Exception):
    """invalid_client (HTTP 401): oauth.py raises it as its OAuthError."""


@dataclass(frozen=True)
class Credentials:
    """What a request carries to authenticate its client, as api.py found it."""

    client_id: str = ""
    secret: str = ""
    method: str = NONE  # how a secret came: SECRET_BASIC or SECRET_POST
    assertion: str = ""
    assertion_type: str = ""
    endpoint: str = ""  # the URL called, which an assertion's aud may name

    @classmethod
    def of(cls, client_id: str, client_secret: str = "") -> Credentials:
        """A pair given in the body (client_secret_post), or an id alone."""
        return cls(client_id, client_secret, SECRET_POST if client_secret else NONE)

    @property
    def present(self) -> bool:
        return bool(self.client_id or self.assertion or self.assertion_type)

    @property
    def claimed_id(self) -> str:
        """The client the request names, before it is authenticated: its client_id, else its
        assertion's `sub` (to read the application's options; authenticate() checks the claim)."""
        if self.client_id or not self.assertion:
            return self.client_id
        try:
            sub = _unverified_claims(self.assertion).get("sub")
        except ClientError:
            return ""
        return sub if isinstance(sub, str) else ""


@dataclass(frozen=True)
class Client:
    application: Application
    method: str  # how it authenticated (NONE: it did not)

    @property
    def authenticated(self) -> bool:
        return self.method != NONE


def _unverified_claims(assertion: str) -> dict[str, Any]:
    """The payload of an assertion, read before its key is known (to find the client)."""
    if len(assertion) > MAX_ASSERTION or assertion.count(".") != 2:
        raise ClientError("The client assertion is not a signed JWT")
    try:
        payload = json.loads(_b64decode(assertion.split(".")[1]))
    except ValueError:
        raise ClientError("The client assertion is not a signed JWT") from None
    if not isinstance(payload, dict):
        raise ClientError("The client assertion is not a signed JWT")
    return payload


def _b64decode(part: str) -> bytes:
    return base64.urlsafe_b64decode(part + "=" * (-len(part) % 4))


def authenticate(db: Session, credentials: Credentials, *, secret_required: bool = True) -> Client:
    """The application the request authenticates as, and how; ClientError otherwise. With
    `secret_required` False a client whose application chose no method (or `none`) may also
    name itself alone: a PKCE code exchange, a public client's refresh, the device flow."""
    if credentials.assertion or credentials.assertion_type:
        return _by_assertion(db, credentials)
    application = lookup.client_application(db, credentials.client_id) if credentials.client_id else None
    if application is None:
        raise ClientError("Invalid client_id")
    registered = application.token_endpoint_auth_method
    used = credentials.method if credentials.secret else NONE
    if registered and registered != used:
        raise ClientError(f"The application must authenticate with {registered}")
    if used == NONE:
        if secret_required:  # a grant only an authenticated client gets: never a public client's
            raise ClientError("Invalid client_secret")
        return Client(application, NONE)
    if not hmac.compare_digest(application.client_secret.encode(), credentials.secret.encode()):
        raise ClientError("Invalid client_secret")
    return Client(application, used)


def _by_assertion(db: Session, credentials: Credentials) -> Client:
    if credentials.assertion_type != ASSERTION_TYPE or not credentials.assertion:
        raise ClientError(f"client_assertion_type must be {ASSERTION_TYPE}, with a client_assertion")
    if credentials.secret:
        raise ClientError("A client authenticates with one method: a client assertion, or a client secret")
    claims = _unverified_claims(credentials.assertion)
    client_id = credentials.client_id or claims.get("sub")
    if not isinstance(client_id, str) or not client_id or claims.get("sub") != client_id \
            or claims.get("iss") != client_id:
        raise ClientError("The client assertion's iss and sub must be the client id")
    application = lookup.client_application(db, client_id)
    if application is None:
        raise ClientError("Invalid client_id")
    method = application.token_endpoint_auth_method
    if method not in SIGNING_ALGORITHMS:
        raise ClientError(f"The application must authenticate with {method or 'its client secret'}")
    verified = _verify(application, method, credentials.assertion)
    _check_claims(verified, credentials.endpoint)
    _use_once(db, client_id, verified)
    return Client(application, method)


def _verify(application: Application, method: str, assertion: str) -> dict[str, Any]:
    def key_of(guest) -> Any:
        if method == SECRET_JWT:
            return OctKey.import_key(application.client_secret.encode())
        return _public_key(application, guest.headers())

    try:
        return dict(jwt.decode(assertion, key_of, algorithms=list(SIGNING_ALGORITHMS[method])).claims)
    except (ClientError, ServiceError):
        raise
    except (JoseError, ValueError, TypeError) as exc:
        name = type(exc).__name__
        reason = "has an invalid signature" if "Signature" in name else \
            f"is not signed with {' or '.join(SIGNING_ALGORITHMS[method])}" if "Algorithm" in name else \
            f"cannot be read ({name})"
        raise ClientError(f"The client assertion {reason}") from None


def parse_key_set(document: dict[str, Any]) -> KeySet:
    """A registered JWK Set (the application's `jwks`): public RSA or EC keys; ValueError saying
    what is wrong."""
    if len(json.dumps(document)) > MAX_JWKS:
        raise ValueError(f"The JWKS is too long (at most {MAX_JWKS} characters)")
    keys = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(keys, list) or not keys or not all(isinstance(k, dict) for k in keys):
        raise ValueError('The JWKS must be a JSON Web Key Set: {"keys": [...]}, with at least one key')
    if any(k.get("kty") not in ("RSA", "EC") for k in keys):
        raise ValueError("The JWKS may hold RSA and EC keys only")
    if any(member in k for k in keys for member in client_keys.PRIVATE_MEMBERS):
        raise ValueError("The JWKS must hold public keys only: a private key never leaves its client")
    try:
        return KeySet.import_key_set({"keys": keys})
    except (JoseError, ValueError, TypeError, KeyError) as exc:
        raise ValueError(f"The JWKS holds a key that cannot be read ({type(exc).__name__})") from None


def _public_key(application: Application, header: dict[str, Any]) -> Any:
    kid = header.get("kid") if isinstance(header.get("kid"), str) else None
    try:
        if application.jwks_uri:
            keys = id_tokens.key_set(application.jwks_uri, kid, timeout=KEY_SET_SECONDS)
        else:
            keys = parse_key_set(application.jwks)
    except (outbound.OutboundError, httpx.HTTPError) as exc:
        raise ClientError(f"The application's jwks_uri cannot be read: {exc}") from None
    except (ServiceError, ValueError, JoseError):
        raise ClientError("The application has no usable JWK Set for private_key_jwt") from None
    family = {"R": "RSA", "P": "RSA", "E": "EC"}.get(str(header.get("alg", ""))[:1], "")
    for key in keys:  # the key of the assertion's kid; a key registered without one fits any
        if key.key_type == family and (not kid or not key.kid or key.kid == kid):
            return key
    raise ClientError(f"The client assertion is signed with a key the application did not register ({kid})")


def _number(claims: dict[str, Any], name: str) -> float | None:
    value = claims.get(name)
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def _check_claims(claims: dict[str, Any], endpoint: str) -> None:
    audiences = claims.get("aud")
    audiences = [audiences] if isinstance(audiences, str) else audiences if isinstance(audiences, list) else []
    accepted = {settings.origin, f"{settings.origin}/api/login/oauth/access_token", endpoint} - {""}
    if not accepted.intersection(a for a in audiences if isinstance(a, str)):
        raise ClientError("The client assertion's aud must name this server's issuer or token endpoint")
    now, exp = time.time(), _number(claims, "exp")
    if exp is None:
        raise ClientError("The client assertion has no exp")
    if exp + LEEWAY < now:
        raise ClientError("The client assertion has expired")
    if exp - now > ASSERTION_SECONDS + LEEWAY:
        raise ClientError(f"The client assertion's exp is more than {ASSERTION_SECONDS} seconds away")
    for name in ("iat", "nbf"):
        moment = _number(claims, name)
        if claims.get(name) is not None and (moment is None or moment - LEEWAY > now):
            raise ClientError(f"The client assertion's {name} must be a time (in seconds) not in the future")
    if not isinstance(claims.get("jti"), str) or not claims["jti"] or len(claims["jti"]) > 500:
        raise ClientError("The client assertion has no jti")


def _use_once(db: Session, client_id: str, claims: dict[str, Any]) -> None:
    """Keep the assertion's jti until it expires; refuse one kept already. Committed at once:
    the assertion is spent even if the request fails later."""
    jti_hash = hashlib.sha256(f"{client_id}\0{claims['jti']}".encode()).hexdigest()
    now = utcnow()
    expires = datetime.fromtimestamp(_number(claims, "exp") + LEEWAY, UTC)
    db.exec(delete(ClientAssertion).where(ClientAssertion.expires_at < now))
    try:
        with db.begin_nested():
            db.add(ClientAssertion(jti_hash=jti_hash, expires_at=expires))
    except IntegrityError:
        raise ClientError("The client assertion has been used already (its jti is spent)") from None
    db.commit()
