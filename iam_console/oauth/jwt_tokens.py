"""JWTs: the claims of each token format, signing with an application's cert,
verification with the cert of the token's application, and the key sets.

A token's `kid` is the RFC 7638 thumbprint of its cert's public key: unique to
the key, where a cert's name is not (every organization names its certs freely).
Parsed keys are cached by their PEM text: loading an RSA key checks it, which
costs more than signing with it."""

from __future__ import annotations

import base64
import functools
import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import jwt
import phonenumbers
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from joserfc.jwk import thumbprint
from sqlmodel import Session, select

from iam_console import cpu_work
from iam_console.applications.certs import ALGORITHMS
from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.models import Application, Cert, Permission, Role, User
from iam_console.models.base import masked, to_wire
from iam_console.settings import settings

ACCESS, REFRESH = "access-token", "refresh-token"
DEFAULT_EXPIRE_HOURS = 168
# never in a token, whatever the format: credentials and second-factor material
_NEVER_CLAIMED = ("password", "passwordSalt", "accessKey", "accessSecret", "accessToken", "originalToken",
                  "originalRefreshToken", "totpSecret", "recoveryCodes", "webauthnCredentials",
                  "multiFactorAuths", "faceIds")


class InvalidToken(Exception):
    """A token this server did not sign, or signed with a key it no longer has."""


@functools.lru_cache(maxsize=64)
def _public_key(certificate_pem: str):
    return x509.load_pem_x509_certificate(certificate_pem.encode()).public_key()


def signing_algorithm(cert: Cert, wanted: str) -> str:
    """The application's signing method where the cert's key can do it; an EC
    key's curve fixes its algorithm, an RSA key signs RS* and PS*."""
    own = cert.crypto_algorithm if cert.crypto_algorithm in ALGORITHMS else "RS256"
    if own.startswith("ES"):
        return own
    if wanted == "PS512" and cert.bit_size and cert.bit_size < 2048:
        return own  # PSS with SHA-512 and its salt does not fit in a 1024-bit modulus
    return wanted if wanted in ALGORITHMS and wanted[:2] in ("RS", "PS") else own


def signing_cert(db: Session, application: Application) -> Cert:
    name = application.cert or b.BUILT_IN_CERT
    cert = lookup.signing_cert(db, application.organization, name)
    if cert is None or not cert.private_key or not cert.certificate:
        raise ServiceError("The cert %s of application %s has no key pair", name, application.name)
    return cert


def sign(claims: dict[str, Any], cert: Cert, algorithm: str, organization: str = "", *, typ: str = "") -> str:
    """The claims signed with the cert's key (`typ`: the header's, e.g. logout+jwt); with an RSA key
    above 2048 bits in a child process, as one of `organization`'s calls (the signature would hold
    the interpreter lock: cpu_work)."""
    headers = {"kid": key_id(cert), **({"typ": typ} if typ else {})}
    return cpu_work.signature(cert.private_key, organization, cpu_work.sign_jwt, cert.private_key, claims,
                              algorithm, headers)


# Refresh tokens are read by nobody but this server: they carry Casdoor's claims
# but are signed with HMAC-SHA256 under a key derived from the cert's private key
# (kid = the cert's), which costs microseconds where an RSA-4096 signature costs 2 ms.
REFRESH_ALGORITHM = "HS256"


@functools.lru_cache(maxsize=64)
def _refresh_key(private_key_pem: str) -> bytes:
    return hashlib.sha256(b"iam-console refresh-token key\0" + private_key_pem.encode()).digest()


def sign_refresh(claims: dict[str, Any], cert: Cert) -> str:
    return jwt.encode(claims, _refresh_key(cert.private_key), algorithm=REFRESH_ALGORITHM,
                      headers={"kid": key_id(cert)})


def verify(db: Session, token: str, application: Application, *, check_expiry: bool = True,
           refresh: bool = False) -> dict[str, Any]:
    """The claims of a token signed with the cert of `application`, the token's own (its
    Token row, or the client presenting a refresh token, names it): an access or id token,
    or with `refresh` a refresh token. The key is never chosen by the token's `kid`: a
    token signed with any other cert, whoever holds it, is refused."""
    try:
        cert = signing_cert(db, application)
        algorithm = jwt.get_unverified_header(token).get("alg")
    except ServiceError:
        raise InvalidToken("The token's application has no key to verify it with") from None
    except jwt.PyJWTError as exc:
        raise InvalidToken(str(exc)) from None
    if algorithm not in ((REFRESH_ALGORITHM,) if refresh else ALGORITHMS):
        raise InvalidToken("The token is not signed by this server")
    try:
        key = _refresh_key(cert.private_key) if refresh else _public_key(cert.certificate)
        return jwt.decode(token, key, algorithms=[algorithm], issuer=settings.origin,
                          options={"verify_aud": False, "verify_exp": check_expiry})
    except jwt.InvalidSignatureError:
        raise InvalidToken("The token is not signed with its application's cert") from None
    except TypeError:  # PyJWT's answer to a key of another type than the token's algorithm
        raise InvalidToken("The token is not signed with its application's cert") from None
    except (jwt.PyJWTError, ValueError) as exc:
        raise InvalidToken(str(exc)) from None


# --- key sets ---

def _b64(data: bytes) -> str:
    return base64.standard_b64encode(data).decode()


# RFC 7638 §3.2: the members a thumbprint covers, by key type
_THUMBPRINT_MEMBERS = {"RSA": ("e", "kty", "n"), "EC": ("crv", "kty", "x", "y")}


@functools.lru_cache(maxsize=256)
def _public_jwk(certificate_pem: str) -> dict[str, Any]:
    """The certificate's public key as a JWK with `kid` = its RFC 7638 thumbprint and the
    certificate as `x5c`; {} for a key type that signs no JWT here. ValueError if the
    certificate does not parse."""
    certificate = x509.load_pem_x509_certificate(certificate_pem.encode())
    key = certificate.public_key()
    if isinstance(key, rsa.RSAPublicKey):
        jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key))
    elif isinstance(key, ec.EllipticCurvePublicKey):
        jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(key))
    else:
        return {}
    kid = thumbprint({member: jwk[member] for member in _THUMBPRINT_MEMBERS[jwk["kty"]]})
    der = certificate.public_bytes(serialization.Encoding.DER)
    return {**jwk, "kid": kid, "use": "sig", "x5c": [_b64(der)]}


def key_id(cert: Cert) -> str:
    """The `kid` of the cert's key (a ServiceError if its certificate holds none that signs JWTs)."""
    try:
        kid = _public_jwk(cert.certificate).get("kid")
    except ValueError:
        kid = None
    if not kid:
        raise ServiceError("The cert %s has no certificate that signs JWTs", cert.name)
    return kid


def jwks(db: Session, application: Application | None = None) -> dict[str, list]:
    """The public keys relying parties verify tokens with, each key once. An application's
    set: the key of its cert, `alg` the algorithm its tokens are signed in. The global set:
    the keys of shared certs (owner admin) and of the built-in organization's, which only
    global admins control; an organization's own certs are in its applications' sets alone,
    so that no relying party following the global discovery trusts a key an organization's
    admin holds (docs/api.md, 'Which discovery document')."""
    if application is not None:
        try:
            cert = signing_cert(db, application)
        except ServiceError:
            return {"keys": []}  # the application signs nothing
        published = [(cert.certificate, signing_algorithm(cert, application.token_signing_method))]
    else:
        published = db.exec(select(Cert.certificate, Cert.crypto_algorithm)
                            .where(Cert.owner.in_((b.ADMIN_OWNER, b.BUILT_IN_ORG)), Cert.scope == "JWT",
                                   Cert.type == "x509", Cert.certificate != "")
                            .order_by(Cert.pk)).all()
    keys: dict[str, dict[str, Any]] = {}
    for certificate, algorithm in published:
        try:
            jwk = _public_jwk(certificate)
        except ValueError:
            continue  # a pasted certificate that does not parse signs nothing either
        if jwk and jwk["kid"] not in keys:
            keys[jwk["kid"]] = {**jwk, "alg": algorithm or "RS256"}
    return {"keys": list(keys.values())}


# --- claims ---

@dataclass(frozen=True)
class Grant:
    """What a token is about, for the claims."""

    application: Application
    token_name: str
    scope: str
    issued_at: datetime
    user: User | None = None  # None: the application itself (client_credentials)
    nonce: str = ""
    resource: str = ""
    signin_method: str = ""
    # a token exchange's (oauth/exchange.py): the audiences it names instead of the client and its
    # resource, the `act` claim of the delegation, and the subject token's expiry, never outlived
    audience: tuple[str, ...] = ()
    act: dict[str, Any] = field(default_factory=dict)
    not_after: datetime | None = None
    sid: str = ""  # the browser session it was given in (Token.sid), the ID token's `sid`
    jkt: str = ""  # the DPoP key the access token is bound to (RFC 9449): its `cnf`

    @property
    def scopes(self) -> set[str]:
        return set(self.scope.split())


def _registered(grant: Grant, token_type: str, expires_at: datetime) -> dict[str, Any]:
    audience = list(grant.audience) or [grant.application.client_id] + ([grant.resource] if grant.resource else [])
    subject = grant.user.uuid if grant.user else f"{b.ADMIN_OWNER}/{grant.application.name}"
    claims = {
        "iss": settings.origin, "sub": subject, "aud": audience,
        "exp": int(expires_at.timestamp()), "nbf": int(grant.issued_at.timestamp()),
        "iat": int(grant.issued_at.timestamp()), "jti": f"{b.ADMIN_OWNER}/{grant.token_name}",
        "tokenType": token_type, "nonce": grant.nonce, "scope": grant.scope, "azp": grant.application.client_id,
        "signinMethod": grant.signin_method, "act": grant.act, "sid": grant.sid,
    }
    if grant.jkt and token_type == ACCESS:
        claims["cnf"] = {"jkt": grant.jkt}
    return {k: v for k, v in claims.items() if v != "" and v != {}}


def _user_record(db: Session, user: User) -> dict[str, Any]:
    claims = masked(to_wire(user), User)
    for key in _NEVER_CLAIMED:
        claims.pop(key, None)
    claims["password"] = ""  # Casdoor's apps read the claims into a User: the key stays, empty
    claims["email_verified"] = user.email_verified
    roles = roles_of(db, user)
    claims["roles"] = [to_wire(r) for r in roles]
    claims["permissions"] = [to_wire(p) for p in permissions_of(db, user, roles)]
    return claims


def _member(row: Role | Permission, user: User) -> bool:
    me = f"{user.owner}/{user.name}"
    return me in row.users or f"{user.owner}/*" in row.users or any(g in row.groups for g in user.groups)


def roles_of(db: Session, user: User) -> list[Role]:
    return [r for r in db.exec(select(Role).where(Role.owner == user.owner)).all() if _member(r, user)]


def permissions_of(db: Session, user: User, roles: list[Role] | None = None) -> list[Permission]:
    """The user's permissions: their own, their groups' and their roles' (`roles`: roles_of, if known)."""
    role_ids = {f"{r.owner}/{r.name}" for r in (roles_of(db, user) if roles is None else roles)}
    return [p for p in db.exec(select(Permission).where(Permission.owner == user.owner)).all()
            if _member(p, user) or role_ids.intersection(p.roles)]


def _standard(user: User, scopes: set[str]) -> dict[str, Any]:
    claims = {"owner": user.owner, "preferred_username": user.name, "id": user.uuid, "name": user.display_name,
              "picture": user.avatar, "email": user.email, "email_verified": user.email_verified,
              "address": {"street_address": " ".join(user.address) if "address" in scopes else ""}}
    if "profile" in scopes:
        claims["gender"] = user.gender
    if "phone" in scopes and user.phone:
        claims["phone_number"] = e164(user.phone, user.country_code)
        claims["phone_number_verified"] = True
    return claims


def e164(phone: str, country_code: str) -> str:
    """A phone number in E.164 (the user's country code names its region); as stored if it does not parse."""
    try:
        number = phonenumbers.parse(phone, (country_code or "").upper() or None)
    except phonenumbers.NumberParseException:
        return phone
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _custom(db: Session, user: User, application: Application) -> dict[str, Any]:
    """The application's tokenFields (User field names; Properties.x; permissionNames)
    and tokenAttributes ({name, value} pairs)."""
    wire = to_wire(user)
    claims: dict[str, Any] = {}
    for field_name in application.token_fields:
        if not isinstance(field_name, str) or not field_name:
            continue
        if field_name.startswith("Properties."):
            key = field_name.removeprefix("Properties.")
            claims[key] = user.properties.get(key, "")
        elif field_name == "permissionNames":
            claims[field_name] = [p.name for p in permissions_of(db, user)]
        else:
            key = field_name[0].lower() + field_name[1:]
            if key in wire and key not in _NEVER_CLAIMED:
                claims[key] = wire[key]
    for attribute in application.token_attributes:
        if isinstance(attribute, dict) and isinstance(attribute.get("name"), str) and attribute["name"]:
            claims[attribute["name"]] = attribute.get("value", "")
    return claims


def subject_claims(db: Session, grant: Grant) -> dict[str, Any]:
    """Who the token is about, in the application's token format."""
    user, application = grant.user, grant.application
    if user is None:  # the application's own token
        return {"owner": b.ADMIN_OWNER, "name": application.name, "displayName": application.display_name,
                "type": "application"}
    token_format = application.token_format or "JWT"
    if token_format == "JWT-Empty":
        return {"owner": user.owner, "name": user.name, "id": user.uuid, "displayName": user.display_name,
                "avatar": user.avatar, "email": user.email, "email_verified": user.email_verified,
                "phone": user.phone}
    if token_format == "JWT-Standard":
        return _standard(user, grant.scopes)
    if token_format == "JWT-Custom":
        return _custom(db, user, application)
    return _user_record(db, user)


def claims(db: Session, grant: Grant, token_type: str, expires_at: datetime,
           subject: dict[str, Any] | None = None) -> dict[str, Any]:
    """`subject`: subject_claims(db, grant) when the caller has it already (the access
    and refresh tokens of one grant share it: building a user's record takes queries)."""
    subject = subject_claims(db, grant) if subject is None else subject
    result = {**subject, **_registered(grant, token_type, expires_at)}
    if token_type == REFRESH and (grant.application.token_format == "JWT-Custom"):
        result["TokenType"] = REFRESH
    return result
