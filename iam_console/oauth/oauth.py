"""The OAuth 2.0 / OpenID Connect provider: authorization
requests, codes, the token endpoint's grants, refresh and the device flow
(what is done with the tokens afterwards: oauth/tokens.py).

One Token row per issuance. It is written when a code (or a device code) is
issued, holding only the code's hash, and becomes the token when the code is
exchanged. Tokens are found by the SHA-256 of their text; a revoked token has
expiresIn 0, which every check reads.

Refresh tokens rotate (OAuth 2.0 Security BCP, refresh token rotation): each use
revokes the row and issues a new one in the same `family` (the name of the chain's
first row). A refresh token presented again after its rotation means two parties
hold it, so the whole family is revoked, the pair it was rotated into included; so
is the family of a replayed code. A chain begun with the client's secret (a
confidential client) refreshes only with it; one begun without (a PKCE-only code
exchange, the device flow: a public client, `public_client`) refreshes without."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import secrets
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlmodel import Session, or_, select, update

from iam_console.applications import redirects
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import lookup, outbound
from iam_console.core.errors import ServiceError
from iam_console.models import Application, Organization, Token, User
from iam_console.models.base import utcnow
from iam_console.oauth import clients, jwt_tokens, pushed, request_objects, resources
from iam_console.oauth.errors import OAuthError, digest
from iam_console.operations import metrics
from iam_console.settings import settings
from iam_console.signin import auth, mfa_props

CODE_SECONDS = 300  # an authorization code works once, for 5 minutes
DEVICE_SECONDS = 600
DEVICE_INTERVAL = 5
USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"  # no vowels: no words; no digits: no 0/O, 1/I
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"
EXCHANGE_GRANT = "urn:ietf:params:oauth:grant-type:token-exchange"  # RFC 8693, served by oauth/exchange.py
IMPLICIT_GRANTS = ("token", "id_token")
RESPONSE_TYPES = {"code": (), "token": ("token",), "id_token": ("id_token",),
                  "id_token token": ("id_token", "token"), "token id_token": ("id_token", "token")}
STANDARD_SCOPES = {"openid", "profile", "email", "address", "phone", "offline_access"}
SCOPE_TOKEN = re.compile(r"^[\x21\x23-\x5b\x5d-\x7e]+$")  # RFC 6749 §3.3 scope-token
PKCE_VALUE = re.compile(r"^[A-Za-z0-9\-._~]{43,128}$")


FINGERPRINT_LENGTH = 16


def fingerprint(token: str) -> str:
    """What a token row shows of its token: the start of its SHA-256, enough to tell tokens
    apart and to match one a client holds, never enough to use it."""
    return digest(token)[:FINGERPRINT_LENGTH] if token else ""


def _epoch(moment: datetime) -> int:
    return int(moment.timestamp())


# --- clients ---

def authenticated_client(db: Session, credentials: clients.Credentials, *,
                         secret_required: bool = True) -> clients.Client:
    """The client a request authenticates as, and how (oauth/clients.py): the one check of
    every endpoint a client calls with its credentials. invalid_client (HTTP 401) otherwise."""
    try:
        found = clients.authenticate(db, credentials, secret_required=secret_required)
    except clients.ClientError as exc:
        raise OAuthError("invalid_client", str(exc), 401) from None
    outbound.note_caller(found.application.organization)  # the client acts for its organization
    return found


def client(db: Session, credentials: clients.Credentials | str, client_secret: str = "", *,
           secret_required: bool = True) -> Application:
    """The application a request authenticates as (authenticated_client); an id and secret given
    as strings are client_secret_post's."""
    if isinstance(credentials, str):
        credentials = clients.Credentials.of(credentials, client_secret)
    return authenticated_client(db, credentials, secret_required=secret_required).application


def _allows(application: Application, grant: str) -> bool:
    return grant == "authorization_code" or grant in application.grant_types


def _require_grant(application: Application, grant: str) -> None:
    if not _allows(application, grant):
        raise OAuthError("unauthorized_client", f"The grant type {grant} is not allowed for this application")


def check_scope(application: Application, scope: str) -> str:
    """Space-separated scope tokens; an application that declares custom scopes
    allows only those and the OpenID ones."""
    tokens = scope.split()
    if len(scope) > 255 or any(not SCOPE_TOKEN.match(t) for t in tokens):
        raise OAuthError("invalid_scope", "The scope is malformed")
    declared = {s.get("scope") for s in application.custom_scopes if isinstance(s, dict)}
    if declared:
        unknown = [t for t in tokens if t not in STANDARD_SCOPES and t not in declared]
        if unknown:
            raise OAuthError("invalid_scope", f"The scope {unknown[0]} is not allowed for this application")
    return " ".join(dict.fromkeys(tokens))


def _organization_of(db: Session, application: Application) -> Organization:
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise OAuthError("invalid_client", "The application's organization does not exist", 401)
    return organization


def _may_use(user: User, application: Application) -> bool:
    return user.owner == application.organization or application.is_shared


may_use = _may_use  # an account may sign in to the application (SAML single sign-on asks too)


# --- the authorization request ---

# who else may answer for a client id no application has (or one they keep): (db, client id,
# resource) -> the application, or None; added by the modules that serve them when imported
# (oauth/metadata_documents.py)
CLIENT_FINDERS: list[Callable[[Session, str, str], Application | None]] = []


@dataclass(frozen=True)
class AuthorizeRequest:
    client_id: str
    response_type: str
    redirect_uri: str
    scope: str = ""
    state: str = ""
    nonce: str = ""
    code_challenge: str = ""
    code_challenge_method: str = ""
    resource: str = ""
    prompt: str = ""
    request_uri: str = ""  # of a pushed request (RFC 9126): its parameters stand for these
    request: str = ""  # a request object (RFC 9101): its parameters stand for these
    dpop_jkt: str = ""  # RFC 9449 §10: the DPoP key the code is bound to
    max_age: str = ""  # OpenID Connect: seconds since the sign-in beyond which it must be made again
    acr_values: str = ""
    claims: str = ""  # the claims request (JSON)
    ui_locales: str = ""

    @classmethod
    def from_query(cls, params: dict[str, str]) -> AuthorizeRequest:
        """OAuth's names (authorize page) or Casdoor's (POST /api/login?clientId=...)."""
        def value(*names: str, limit: int = 2000) -> str:
            return next((str(params[n]) for n in names if params.get(n)), "")[:limit]
        return cls(client_id=value("client_id", "clientId"), response_type=value("response_type", "responseType"),
                   redirect_uri=value("redirect_uri", "redirectUri"), scope=value("scope"), state=value("state"),
                   nonce=value("nonce"), code_challenge=value("code_challenge"),
                   code_challenge_method=value("code_challenge_method"), resource=value("resource"),
                   prompt=value("prompt"), request_uri=value("request_uri"),
                   request=value("request", limit=request_objects.MAX_REQUEST + 1), dpop_jkt=value("dpop_jkt"),
                   max_age=value("max_age"), acr_values=value("acr_values"), claims=value("claims"),
                   ui_locales=value("ui_locales"))


# what a pushed request keeps of the form it was pushed with
AUTHORIZE_PARAMETERS = frozenset({"client_id", "response_type", "redirect_uri", "scope", "state", "nonce",
                                  "code_challenge", "code_challenge_method", "resource", "prompt", "dpop_jkt",
                                  "request_uri", "max_age", "acr_values", "claims", "ui_locales"})


@dataclass(frozen=True)
class Authorization:
    """A checked authorization request: who asks, and where the answer goes."""

    request: AuthorizeRequest
    application: Application
    organization: Organization
    scope: str
    pushed: str = ""  # the hash of the request_uri it came by (PAR), spent with the code
    request_object: str = ""  # the request object it came in (JAR), spent with the code
    claims: RequestedClaims = field(default_factory=lambda: RequestedClaims())


def _unpacked(db: Session, application: Application, req: AuthorizeRequest, *,
              pushing: bool) -> tuple[AuthorizeRequest, str]:
    """The request a request_uri (PAR) or request object (JAR) stands for (their parameters alone
    count: RFC 9126 §4, RFC 9101 §5), and the pushed request's hash."""
    uri_hash = ""
    if req.request_uri:
        if pushing:
            raise ServiceError("A pushed request cannot name a request_uri")
        parameters, uri_hash = pushed.open_request(db, application, req.request_uri)
        req = AuthorizeRequest.from_query(parameters)  # checked as JAR already at the push
    elif req.request:
        try:
            req = AuthorizeRequest.from_query({**request_objects.parameters(application, req.request),
                                               "request": req.request})
        except OAuthError as exc:
            raise ServiceError(exc.description) from None
    elif application.require_pushed_authorization_requests and not pushing:
        raise ServiceError("The application %s accepts only pushed authorization requests (PAR)", application.name)
    return req, uri_hash


def check_authorize(db: Session, req: AuthorizeRequest, *, pushing: bool = False) -> Authorization:
    """Refuse a request whose client, redirect URI, response type, scope or PKCE
    is wrong. Raised as ServiceError: the page shows it and never redirects.
    `pushing`: checked at the PAR endpoint, before it is stored."""
    application = lookup.application_by_client_id(db, req.client_id)
    if application is None or application.client_metadata.get("fetched_at"):
        # a client id that names a metadata document (oauth/metadata_documents.py), fetched or refreshed
        application = next((found for finder in CLIENT_FINDERS
                            if (found := finder(db, req.client_id, req.resource)) is not None), application)
    if application is None:
        raise ServiceError("Invalid client_id")
    req, uri_hash = _unpacked(db, application, req, pushing=pushing)
    if not redirects.matches(req.redirect_uri, application.redirect_uris):
        raise ServiceError("Redirect URI: %s doesn't exist in the allowed Redirect URI list",
                           req.redirect_uri[:200])
    implicit = RESPONSE_TYPES.get(req.response_type)
    if implicit is None:
        raise ServiceError("Unsupported response type: %s", req.response_type[:50])
    for grant in implicit:
        if not _allows(application, grant):
            raise ServiceError("The response type %s is not allowed for this application", req.response_type)
    if "id_token" in implicit and not req.nonce:
        raise ServiceError("The nonce is required for the response type %s", req.response_type)
    if req.code_challenge or req.code_challenge_method:
        if req.code_challenge_method != "S256":
            raise ServiceError("The code challenge method must be S256")
        if not PKCE_VALUE.match(req.code_challenge):
            raise ServiceError("The code challenge is malformed")
    if len(req.state) > 1000 or len(req.nonce) > 255:
        raise ServiceError("The state or nonce is too long")
    if req.resource:
        _check_resource(db, application, req.resource)
    if req.max_age and (not req.max_age.isdigit() or len(req.max_age) > 9):
        raise ServiceError("max_age must be a number of seconds")
    try:
        scope = check_scope(application, req.scope)
    except OAuthError as exc:
        raise ServiceError(exc.description) from None
    claims = RequestedClaims.parse(req.claims, req.acr_values)
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise ServiceError("The organization: %s does not exist", application.organization)
    if application.disable_signin or organization.disable_signin:
        raise ServiceError("The application: %s has disabled users to signin", application.name)
    if len(req.dpop_jkt) > 100:
        raise ServiceError("The dpop_jkt is too long")
    return Authorization(req, application, organization, scope, uri_hash, req.request, claims)


def push(db: Session, application: Application, values: dict[str, str], *, authenticated: bool,
         dpop_jkt: str = "") -> dict[str, Any]:
    """RFC 9126 §2: check an authorization request as the authorization endpoint would, and keep
    it for the request_uri answered. Its request object, if any, is spent here: one push each.
    `dpop_jkt`: the key of the push's DPoP proof, which the code will be bound to (RFC 9449 §10.1)."""
    request = values.get("request", "")
    if request:
        parameters = request_objects.parameters(application, request[:request_objects.MAX_REQUEST + 1])
    else:
        parameters = {k: v for k, v in values.items() if k in AUTHORIZE_PARAMETERS}
    if parameters.setdefault("client_id", application.client_id) != application.client_id:
        raise OAuthError("invalid_request", "The client_id is not the authenticated client's")
    if not authenticated and not parameters.get("code_challenge"):
        raise OAuthError("invalid_client", "A client without its secret must send a PKCE code_challenge", 401)
    if dpop_jkt and parameters.setdefault("dpop_jkt", dpop_jkt) != dpop_jkt:
        raise OAuthError("invalid_dpop_proof", "The dpop_jkt is not the DPoP proof's key")
    try:
        check_authorize(db, AuthorizeRequest.from_query(parameters), pushing=True)
    except ServiceError as exc:
        raise OAuthError("invalid_request", str(exc)) from None
    if request and not request_objects.spend(db, request):
        raise OAuthError("invalid_request_object", "The request object has been used")
    return pushed.store(db, application, parameters)


def _check_resource(db: Session, application: Application, resource: str) -> None:
    """RFC 8707: the resource a token is meant for, which joins its `aud` (oauth/resources.py)."""
    problem = resources.problem(db, application, resource)
    if problem:
        raise ServiceError(*problem)


def _token_resource(db: Session, application: Application, resource: str) -> str:
    """A token request's resource, checked as an authorization request's (invalid_target)."""
    problem = resources.problem(db, application, resource) if resource else ()
    if problem:
        raise OAuthError("invalid_target", problem[0] % problem[1:])
    return resource


# --- what the ID token says of the sign-in (OpenID Connect Core 3.1.2.1, 5.5) ---

# the levels of a sign-in, named by `acr`: one factor, or a second factor completed (or a sign-in
# that is multi-factor by itself: WebAuthn with user verification). docs/api.md, "Standards".
ACR_ONE_FACTOR, ACR_TWO_FACTORS = "1", "2"
ACR_VALUES = (ACR_ONE_FACTOR, ACR_TWO_FACTORS)
MAX_CLAIMS_REQUEST = 2000


def acr_of(signin_method: str) -> str:
    """The level of a sign-in made with `signin_method` ('Password+app' after a second factor)."""
    return ACR_TWO_FACTORS if "+" in signin_method or signin_method == "WebAuthn" else ACR_ONE_FACTOR


@dataclass(frozen=True)
class RequestedClaims:
    """The claims an authorization request asks for by name (its `claims` parameter, OpenID
    Connect Core 5.5), for the ID token and for userinfo, and the levels its `acr_values` (or an
    `acr` claim request) accept; `acr_essential`: another level is an error."""

    id_token: tuple[str, ...] = ()
    userinfo: tuple[str, ...] = ()
    acr: tuple[str, ...] = ()
    acr_essential: bool = False

    @classmethod
    def parse(cls, text: str, acr_values: str = "") -> RequestedClaims:
        """ServiceError for a claims request that is not JSON of the standard's shape."""
        request: dict[str, Any] = {}
        if text:
            try:
                request = json.loads(text) if len(text) <= MAX_CLAIMS_REQUEST else None
            except ValueError:
                request = None
            if not isinstance(request, dict) or any(
                    k in request and not isinstance(request[k], dict) for k in ("id_token", "userinfo")):
                raise ServiceError("The claims parameter must be a JSON object of id_token and userinfo requests")
        names = {}
        for target in ("id_token", "userinfo"):
            asked = request.get(target) or {}
            if any(v is not None and not isinstance(v, dict) for v in asked.values()):
                raise ServiceError("Each requested claim must be null or an object")
            names[target] = tuple(n for n in asked if n in jwt_tokens.STANDARD_CLAIMS)
        acr = (request.get("id_token") or {}).get("acr") or {}
        values = [v for v in ([acr["value"]] if "value" in acr else acr.get("values") or [])
                  if isinstance(v, str)] or acr_values.split()
        return cls(names["id_token"], names["userinfo"], tuple(values), acr.get("essential") is True)

    def as_json(self) -> str:
        return json.dumps({"id_token": list(self.id_token), "userinfo": list(self.userinfo)}) \
            if self.id_token or self.userinfo else ""

    @staticmethod
    def of_row(text: str) -> RequestedClaims:
        """What a token row kept (as_json)."""
        try:
            kept = json.loads(text) if text else {}
        except ValueError:
            kept = {}
        return RequestedClaims(tuple(kept.get("id_token") or ()), tuple(kept.get("userinfo") or ()))

    def needs_stronger(self, acr: str) -> bool:
        """The request asks only for levels above `acr`, the level of the sign-in there is."""
        known = [v for v in self.acr if v in ACR_VALUES]
        return bool(known) and acr not in known and min(known) > acr


def needs_fresh_sign_in(authorization: Authorization, signed_in_at: datetime, signin_method: str) -> bool:
    """Whether the browser's session cannot answer the request: prompt=login, a sign-in older
    than max_age, or a level below the acr_values asked for. Then the page asks again."""
    req = authorization.request
    if "login" in req.prompt.split():
        return True
    if req.max_age and (utcnow() - signed_in_at).total_seconds() > int(req.max_age):
        return True
    return authorization.claims.needs_stronger(acr_of(signin_method))


@dataclass(frozen=True)
class Redirect:
    url: str
    code: str = ""  # Casdoor's POST /api/login?type=code answers with the code
    tokens: dict[str, Any] = field(default_factory=dict)


def authorize(db: Session, authorization: Authorization, user: User, signin_method: str = "Password", *,
              sid: str = "", signed_in_at: datetime | None = None, acr: str | None = None) -> Redirect:
    """The signed-in user's answer: a code, or the tokens for an implicit response type. `sid`: the
    browser session it is given in (its AuthSession's session_id), which the ID token carries and
    its logout notifies (oauth/logout.py); `signed_in_at`: when that session signed in (else now:
    a sign-in just made), the ID token's auth_time; `acr`: that sign-in's level (else the level of
    `signin_method`)."""
    req, application = authorization.request, authorization.application
    if not _may_use(user, application):
        raise ServiceError("The user %s/%s cannot sign in to application %s", user.owner, user.name,
                           application.name)
    if authorization.pushed and not pushed.spend(db, authorization.pushed):
        raise ServiceError(pushed.UNUSABLE)
    if authorization.request_object and not authorization.pushed and \
            not request_objects.spend(db, authorization.request_object):
        raise ServiceError("The request object has been used")
    implicit = RESPONSE_TYPES[req.response_type]
    acr, claims = acr or acr_of(signin_method), authorization.claims
    if claims.acr_essential and acr not in claims.acr:
        return Redirect(redirects.with_parameters(req.redirect_uri, {
            "error": "unmet_authentication_requirements", "state": req.state,
            "error_description": "The sign-in did not reach the level the request requires"}, fragment=bool(implicit)))
    auth_time = _epoch(signed_in_at or utcnow())
    if implicit:
        grant = _grant(db, application, authorization.scope, user, nonce=req.nonce, resource=req.resource,
                       signin_method=signin_method, sid=sid, auth_time=auth_time, acr=acr, claims=claims)
        tokens = _issue(db, grant, implicit[-1], refresh=False)
        if "token" not in implicit:
            tokens.pop("access_token")
        answer = {**tokens, "state": req.state}
        return Redirect(redirects.with_parameters(req.redirect_uri, answer, fragment=True), tokens=tokens)
    code = secrets.token_urlsafe(32)
    now = utcnow()
    db.add(Token(owner=b.ADMIN_OWNER, name=str(uuid.uuid4()), created_time=now, application=application.name,
                 organization=user.owner, user=user.name, code=digest(code), code_challenge=req.code_challenge,
                 code_expire_in=_epoch(now) + CODE_SECONDS, scope=authorization.scope, nonce=req.nonce,
                 redirect_uri=req.redirect_uri, resource=req.resource, grant_type="authorization_code",
                 token_type="Bearer", sid=sid, d_po_p_jkt=req.dpop_jkt, auth_time=auth_time, acr=acr,
                 requested_claims=claims.as_json()))
    return Redirect(redirects.with_parameters(req.redirect_uri, {"code": code, "state": req.state}), code=code)


# --- issuing ---

def _grant(db: Session, application: Application, scope: str, user: User | None, *,
           claims: RequestedClaims | None = None, **extra: Any) -> jwt_tokens.Grant:
    if user is not None and not extra.get("sid") and application.backchannel_logout_session_required:
        # an application that requires sid gets it in every ID token: a grant outside any browser
        # session (password, device) is a session of its own, told when the user's sessions all end
        # (oauth/logout.py sessions_of)
        extra["sid"] = secrets.token_hex(16)
    return jwt_tokens.Grant(application=application, token_name=str(uuid.uuid4()), scope=scope, user=user,
                            issued_at=utcnow().replace(microsecond=0),
                            id_token_claims=claims.id_token if claims else (),
                            requested_claims=claims.as_json() if claims else "", **extra)


def _grant_of_row(db: Session, application: Application, scope: str, user: User, row: Token,
                  **extra: Any) -> jwt_tokens.Grant:
    """A grant continuing what a code (or refresh token) row kept of its sign-in."""
    return _grant(db, application, scope, user, nonce=row.nonce, resource=row.resource, sid=row.sid,
                  auth_time=row.auth_time, acr=row.acr, claims=RequestedClaims.of_row(row.requested_claims),
                  **extra)


def _hours(value: int, default: int = jwt_tokens.DEFAULT_EXPIRE_HOURS) -> int:
    return value if value and value > 0 else default


def _issue(db: Session, grant: jwt_tokens.Grant, into: Token | str, *, refresh: bool, family: str = "",
           public_client: bool = False) -> dict[str, Any]:
    """Sign the tokens of a grant and record them: into the code's row (a Token), or
    into a new row of that grant type (a str), written with one INSERT: building an
    ORM object of the table's 30 columns costs more than signing with an EC key.
    `family`: the chain a refresh continues ('' begins one, named after this row)."""
    application = grant.application
    cert = jwt_tokens.signing_cert(db, application)
    algorithm = jwt_tokens.signing_algorithm(cert, application.token_signing_method)
    expire_hours = _hours(application.expire_in_hours)
    access_expires = grant.issued_at + timedelta(hours=expire_hours)
    if grant.not_after is not None:
        access_expires = min(access_expires, grant.not_after)
    subject = jwt_tokens.subject_claims(db, grant)  # built once: the refresh token carries the same
    access = jwt_tokens.sign(jwt_tokens.claims(db, grant, jwt_tokens.ACCESS, access_expires, subject), cert,
                             algorithm, application.organization)
    refresh_token = ""
    if refresh and _allows(application, "refresh_token"):
        refresh_expires = grant.issued_at + timedelta(hours=_hours(application.refresh_expire_in_hours,
                                                                   expire_hours))
        refresh_token = jwt_tokens.sign_refresh(jwt_tokens.claims(db, grant, jwt_tokens.REFRESH, refresh_expires,
                                                                  subject), cert)
    user = grant.user
    token_type = "DPoP" if grant.jkt else "Bearer"
    values = {
        "owner": b.ADMIN_OWNER, "name": grant.token_name, "created_time": grant.issued_at,
        "application": application.name, "organization": user.owner if user else application.organization,
        "user": user.name if user else "", "access_token": fingerprint(access), "access_token_hash": digest(access),
        "refresh_token": fingerprint(refresh_token),
        "refresh_token_hash": digest(refresh_token) if refresh_token else "",
        "expires_in": int((access_expires - grant.issued_at).total_seconds()),
        "scope": grant.scope, "token_type": token_type, "nonce": grant.nonce, "resource": grant.resource,
        "family": family or grant.token_name, "public_client": public_client, "sid": grant.sid,
        "d_po_p_jkt": grant.jkt, "auth_time": grant.auth_time, "acr": grant.acr,
        "requested_claims": grant.requested_claims,
    }
    if isinstance(into, Token):
        for key, value in values.items():
            setattr(into, key, value)
        db.add(into)
    else:
        # Core INSERT with bound parameters: its compiled form is cached across grants
        db.connection().execute(TOKEN_INSERT, {**NEW_TOKEN_DEFAULTS, **values, "grant_type": into})
    answer = {"access_token": access, "id_token": access, "refresh_token": refresh_token,
              "token_type": token_type, "expires_in": values["expires_in"], "scope": grant.scope}
    return {k: v for k, v in answer.items() if v != ""}


TOKEN_INSERT = Token.__table__.insert()
# the columns an INSERT of a new token leaves to their defaults, as the model declares them
NEW_TOKEN_DEFAULTS = {name: field.default for name, field in Token.model_fields.items()
                      if name != "pk" and isinstance(field.default, str | int | bool)}


# --- the token endpoint ---

@dataclass(frozen=True)
class TokenRequest:
    grant_type: str
    credentials: clients.Credentials = field(default_factory=clients.Credentials)
    code: str = ""
    code_verifier: str = ""
    redirect_uri: str = ""
    username: str = ""
    password: str = ""
    scope: str = ""
    refresh_token: str = ""
    device_code: str = ""
    resource: str = ""
    client_ip: str = ""
    dpop_jkt: str = ""  # the thumbprint of the request's verified DPoP proof key (oauth/dpop.py)
    # every parameter of the request, for the grants of other modules (a token exchange's subject_token...)
    parameters: Mapping[str, str] = field(default_factory=dict)

    @property
    def client_id(self) -> str:
        return self.credentials.client_id


# grants served by other modules, which add themselves here when imported (oauth/exchange.py)
MORE_GRANTS: dict[str, Callable[[Session, TokenRequest], dict[str, Any]]] = {}


def token(db: Session, req: TokenRequest) -> dict[str, Any]:
    handlers = {"authorization_code": _code_grant, "password": _password_grant, "token": _password_grant,
                "id_token": _password_grant, "client_credentials": _client_credentials_grant,
                "refresh_token": _refresh_grant, DEVICE_GRANT: _device_grant}
    handler = handlers.get(req.grant_type) or MORE_GRANTS.get(req.grant_type)
    if handler is None:
        raise OAuthError("unsupported_grant_type", f"Unsupported grant type: {req.grant_type[:100]}")
    if not req.credentials.present:
        raise OAuthError("invalid_client", "client_id is required", 401)
    answer = handler(db, req)
    metrics.TOKENS.labels(req.grant_type).inc()  # one of the handlers' grant types: a bounded label
    return answer


def _verifier_matches(verifier: str, challenge: str) -> bool:
    if not PKCE_VALUE.match(verifier):
        return False
    computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return hmac.compare_digest(computed, challenge)


def _claim_code(db: Session, row: Token) -> bool:
    """Mark a code used; False if another request got there first."""
    result = db.exec(update(Token).where(Token.pk == row.pk, Token.code_is_used == False)  # noqa: E712
                     .values(code_is_used=True))
    return result.rowcount == 1


def revoke_row(db: Session, row: Token) -> None:
    db.exec(update(Token).where(Token.pk == row.pk).values(expires_in=0))


def revoke_family(db: Session, row: Token) -> None:
    """The row and every row rotated from the same first one."""
    db.exec(update(Token).where(or_(Token.pk == row.pk, Token.family == (row.family or row.name)))
            .values(expires_in=0))


def _replayed(db: Session, row: Token) -> OAuthError:
    """A refresh token used again after its rotation (or its revocation): another party
    holds it too, so nothing of its family is trusted any more. The error to raise."""
    revoke_family(db, row)
    db.commit()  # the error rolls the request's transaction back: the revocation must outlive it
    return OAuthError("invalid_grant", "The refresh token is invalid, used or revoked")


def _spend(db: Session, row: Token) -> bool:
    """Revoke a refresh token's row at its use; False if it was dead already (used,
    revoked, or used by a concurrent request a moment ago)."""
    result = db.exec(update(Token).where(Token.pk == row.pk, Token.expires_in > 0).values(expires_in=0))
    return result.rowcount == 1


def _usable_user(db: Session, organization: str, name: str) -> User:
    user = lookup.user(db, organization, name)
    if user is None or user.is_deleted or user.is_forbidden:
        raise OAuthError("invalid_grant", "The user is forbidden or does not exist")
    return user


def _code_grant(db: Session, req: TokenRequest) -> dict[str, Any]:
    caller = authenticated_client(db, req.credentials, secret_required=not req.code_verifier)
    application = caller.application
    row = db.exec(select(Token).where(Token.code == digest(req.code),
                                      Token.grant_type == "authorization_code")).first() if req.code else None
    if row is None or row.application != application.name:
        raise OAuthError("invalid_grant", "Invalid authorization code")
    if row.code_is_used:
        revoke_family(db, row)  # a replayed code: the tokens it gave, and their rotations, are not trusted either
        db.commit()
        raise OAuthError("invalid_grant", "The authorization code has been used")
    if row.code_expire_in < _epoch(utcnow()):
        raise OAuthError("invalid_grant", "The authorization code has expired")
    if req.redirect_uri and req.redirect_uri != row.redirect_uri:
        raise OAuthError("invalid_grant", "The redirect_uri does not match the authorization request")
    if row.code_challenge and not _verifier_matches(req.code_verifier, row.code_challenge):
        raise OAuthError("invalid_grant", "The code_verifier is missing or wrong")
    if not row.code_challenge and req.code_verifier:
        raise OAuthError("invalid_grant", "The authorization request had no code_challenge")
    if req.resource and req.resource != row.resource:
        raise OAuthError("invalid_target", "The resource does not match the authorization request")
    if row.d_po_p_jkt and row.d_po_p_jkt != req.dpop_jkt:
        raise OAuthError("invalid_dpop_proof", "The code is bound to another DPoP key (dpop_jkt)")
    user = _usable_user(db, row.organization, row.user)
    if not _claim_code(db, row):
        raise OAuthError("invalid_grant", "The authorization code has been used")
    grant = _grant_of_row(db, application, row.scope, user, row, signin_method="Password", jkt=req.dpop_jkt)
    return _issue(db, grant, row, refresh=True, public_client=not caller.authenticated)


def _password_grant(db: Session, req: TokenRequest) -> dict[str, Any]:
    application = client(db, req.credentials)
    _require_grant(application, req.grant_type)
    scope = check_scope(application, req.scope)
    organization = _organization_of(db, application)
    if not req.username or not req.password:
        raise OAuthError("invalid_request", "username and password are required")
    if len(req.password) > auth.MAX_PASSWORD_LENGTH or len(req.username) > auth.MAX_NAME_LENGTH:
        raise OAuthError("invalid_request", "The username or password is too long")
    try:
        user = auth.authenticate(db, organization, application, req.username, req.password, req.client_ip)
    except ServiceError as exc:
        raise OAuthError("invalid_grant", str(exc)) from None
    if mfa_props.enabled_types(user):
        # the grant has no place for a second factor: it must not become a way around it
        raise OAuthError("invalid_grant", "This account has multi-factor authentication enabled; the password grant "
                                          "cannot carry a second factor: use the authorization code flow")
    user.last_signin_time = utcnow()
    user.last_signin_ip = req.client_ip[:100]
    audit(db, organization=user.owner, user=user.name, action="login", request_uri="/api/login/oauth/access_token",
          client_ip=req.client_ip, obj={"application": application.name, "grantType": req.grant_type})
    grant = _grant(db, application, scope, user, signin_method="Password", auth_time=_epoch(utcnow()),
                   acr=ACR_ONE_FACTOR, jkt=req.dpop_jkt)
    return _issue(db, grant, req.grant_type, refresh=req.grant_type == "password")


def _client_credentials_grant(db: Session, req: TokenRequest) -> dict[str, Any]:
    application = client(db, req.credentials)
    _require_grant(application, "client_credentials")
    grant = _grant(db, application, check_scope(application, req.scope), None, jkt=req.dpop_jkt,
                   resource=_token_resource(db, application, req.resource))
    return _issue(db, grant, "client_credentials", refresh=False)


def _refresh_grant(db: Session, req: TokenRequest) -> dict[str, Any]:
    caller = authenticated_client(db, req.credentials, secret_required=False)
    application = caller.application
    _require_grant(application, "refresh_token")
    try:
        claims = jwt_tokens.verify(db, req.refresh_token, application, refresh=True)
    except jwt_tokens.InvalidToken as exc:
        raise OAuthError("invalid_grant", f"Invalid refresh token: {exc}") from None
    row = db.exec(select(Token).where(Token.refresh_token_hash == digest(req.refresh_token))).first()
    if row is None or claims.get("tokenType") != jwt_tokens.REFRESH:
        raise OAuthError("invalid_grant", "The refresh token is invalid, used or revoked")
    if row.application != application.name:
        raise OAuthError("invalid_grant", "The refresh token belongs to another application")
    if not row.public_client and not caller.authenticated:
        raise OAuthError("invalid_client", "The client must authenticate (client_secret or HTTP Basic) to refresh "
                                           "this token", 401)
    if row.expires_in <= 0:
        raise _replayed(db, row)
    if row.public_client and row.d_po_p_jkt and row.d_po_p_jkt != req.dpop_jkt:
        # RFC 9449 §5: a public client's refresh token is bound to its DPoP key
        raise OAuthError("invalid_dpop_proof", "The refresh token is bound to another DPoP key")
    scope = check_scope(application, req.scope) if req.scope else row.scope
    if not set(scope.split()) <= set(row.scope.split()):
        raise OAuthError("invalid_scope", "The scope exceeds the one originally granted")
    user = _usable_user(db, row.organization, row.user)
    if not _spend(db, row):  # rotation: the old pair dies with its use (a concurrent use lost the race)
        raise _replayed(db, row)
    grant = _grant_of_row(db, application, scope, user, row, jkt=req.dpop_jkt)
    return _issue(db, grant, "refresh_token", refresh=True, family=row.family or row.name,
                  public_client=row.public_client)


# --- the device flow (RFC 8628) ---

def _user_code() -> str:
    letters = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(8))
    return f"{letters[:4]}-{letters[4:]}"


def normalize_user_code(value: str) -> str:
    letters = "".join(c for c in value.upper() if c in USER_CODE_ALPHABET)
    return f"{letters[:4]}-{letters[4:]}" if len(letters) == 8 else ""


def device_authorization(db: Session, credentials: clients.Credentials, scope: str) -> dict[str, Any]:
    application = client(db, credentials, secret_required=False)
    _require_grant(application, DEVICE_GRANT)
    scope = check_scope(application, scope)
    device_code, user_code, now = secrets.token_urlsafe(32), _user_code(), utcnow()
    db.add(Token(owner=b.ADMIN_OWNER, name=str(uuid.uuid4()), created_time=now, application=application.name,
                 organization=application.organization, code=digest(device_code), user_code=user_code,
                 code_expire_in=_epoch(now) + DEVICE_SECONDS, scope=scope, grant_type=DEVICE_GRANT,
                 token_type="Bearer"))
    verification = f"{settings.origin}/login/oauth/device"
    return {"device_code": device_code, "user_code": user_code, "verification_uri": verification,
            "verification_uri_complete": f"{verification}?user_code={user_code}",
            "expires_in": DEVICE_SECONDS, "interval": DEVICE_INTERVAL}


def pending_device(db: Session, user_code: str) -> tuple[Token, Application] | None:
    """The device authorization waiting for this user code, and its application."""
    code = normalize_user_code(user_code)
    if not code:
        return None
    row = db.exec(select(Token).where(Token.user_code == code, Token.grant_type == DEVICE_GRANT)).first()
    if row is None or row.user or row.code_is_used or row.code_expire_in < _epoch(utcnow()):
        return None
    application = lookup.application(db, row.application)
    return (row, application) if application else None


def decide_device(db: Session, user: User, user_code: str, approve: bool) -> Application:
    """The signed-in user approves (or denies) the device that shows this code."""
    found = pending_device(db, user_code)
    if found is None:
        raise ServiceError("The code is invalid or has expired")
    row, application = found
    if approve and not _may_use(user, application):
        raise ServiceError("The user %s/%s cannot sign in to application %s", user.owner, user.name,
                           application.name)
    if approve:
        row.user, row.organization = user.name, user.owner
    else:
        row.code_is_used = True
    db.add(row)
    return application


def _device_grant(db: Session, req: TokenRequest) -> dict[str, Any]:
    caller = authenticated_client(db, req.credentials, secret_required=False)
    application = caller.application
    _require_grant(application, DEVICE_GRANT)
    row = db.exec(select(Token).where(Token.code == digest(req.device_code),
                                      Token.grant_type == DEVICE_GRANT)).first() if req.device_code else None
    if row is None or row.application != application.name:
        raise OAuthError("invalid_grant", "Invalid device_code")
    if row.code_is_used:
        raise OAuthError("access_denied" if not row.user else "invalid_grant",
                         "The authorization was denied" if not row.user else "The device_code has been used")
    if row.code_expire_in < _epoch(utcnow()):
        raise OAuthError("expired_token", "The device_code has expired")
    if not row.user:
        raise OAuthError("authorization_pending", "The user has not yet approved this device")
    user = _usable_user(db, row.organization, row.user)
    if not _claim_code(db, row):
        raise OAuthError("invalid_grant", "The device_code has been used")
    grant = _grant(db, application, row.scope, user, signin_method="Device", jkt=req.dpop_jkt)
    return _issue(db, grant, row, refresh=True, public_client=not caller.authenticated)
