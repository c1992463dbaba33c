"""Dynamic client registration (RFC 7591) and its management protocol (RFC 7592), at Casdoor's
/api/oauth/register[?organization=] and /api/oauth/register/<client_id>. docs/api.md, "Standards";
docs/security.md, "Dynamic client registration".

An organization's dcrPolicy decides: `disabled` (the default, as any other value), `initial
access token` (the request carries, as a Bearer token, a live client_credentials token of an
application of the organization the client joins: an admin's own application vouches for it) or
`open` (anyone may register; a token, if sent, is checked all the same). The organization is the
`organization` parameter, else the initial access token's, else the built-in one.

A registered client is an application of the organization holding the SHA-256 of its
registration access token, which reads, replaces and deletes it; only such a client has one, and
it never has admin rights (core/access.py). Registrations are limited per client address
(REGISTRATIONS_PER_ADDRESS) and per organization (QUOTA: registered clients at once), and the
metadata is checked before anything is written: redirect URIs plain (no fragment, no pattern),
https, or http on a loopback host, or a native app's private-use scheme (RFC 8252 §7)."""

from __future__ import annotations

import hmac
import json
import secrets
import time
from typing import Any
from urllib.parse import quote, urlsplit

from sqlmodel import Session, func, select

from iam_console import models as m
from iam_console.applications import redirects
from iam_console.applications.kinds import application as application_rules
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import lookup, rules, throttle, wire
from iam_console.core.access import ANONYMOUS
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity.kinds.organization import DCR_DISABLED as DISABLED
from iam_console.identity.kinds.organization import DCR_INITIAL_ACCESS_TOKEN as INITIAL_ACCESS_TOKEN
from iam_console.identity.kinds.organization import DCR_OPEN as OPEN
from iam_console.oauth import tokens
from iam_console.oauth.oauth import DEVICE_GRANT, SCOPE_TOKEN, digest
from iam_console.settings import settings

PATH = "/api/oauth/register"
GRANTS = ("authorization_code", "refresh_token", "client_credentials", DEVICE_GRANT)
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "client_secret_jwt", "private_key_jwt", "none")
# the methods an application is then held to (the others keep what an application with no method
# of its own accepts: docs/api.md "Client authentication")
HELD_METHODS = ("client_secret_jwt", "private_key_jwt")
MAX_JWKS = 16_384  # characters of a registered JWK Set
REGISTRATIONS_PER_ADDRESS = (20, 3600)  # registrations from one client address an hour
QUOTA = 200  # dynamically registered clients an organization holds at once
LOOPBACK_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
URL_FIELDS = ("client_uri", "logo_uri", "policy_uri", "tos_uri")
TEXT_FIELDS = ("client_name", "software_id", "software_version")
MAX_REDIRECT_URIS, MAX_CONTACTS, MAX_TEXT, MAX_URL = 10, 5, 100, 255


class RegistrationError(Exception):
    """An RFC 7591 error answer: `error`, `error_description` and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status


def endpoint(db: Session, application: m.Application | None = None) -> str:
    """The registration endpoint a discovery document advertises: the global one when some
    organization allows registration, an application's own (its organization named) when its
    organization does; '' otherwise."""
    allowing = select(m.Organization.name).where(m.Organization.dcr_policy.in_((INITIAL_ACCESS_TOKEN, OPEN)))
    if application is not None:
        found = db.exec(allowing.where(m.Organization.name == application.organization)).first()
        return f"{settings.origin}{PATH}?organization={quote(found, safe='')}" if found else ""
    return f"{settings.origin}{PATH}" if db.exec(allowing.limit(1)).first() else ""


# --- the metadata ---

def _url(value: Any, name: str) -> str:
    parts = urlsplit(value) if isinstance(value, str) and len(value) <= MAX_URL else None
    if parts is None or parts.scheme not in ("https", "http") or not parts.hostname or "#" in value:
        raise RegistrationError("invalid_client_metadata", f"{name} must be an http(s) URL without a fragment")
    return value


def _redirect_uri(value: Any) -> str:
    if not isinstance(value, str) or not redirects.is_plain(value) or redirects.is_pattern(value):
        raise RegistrationError("invalid_redirect_uri", "Each redirect URI must be a plain URI without a fragment")
    parts = urlsplit(value)
    if parts.scheme == "http" and parts.hostname not in LOOPBACK_HOSTS:
        raise RegistrationError("invalid_redirect_uri", "An http redirect URI must be on a loopback host")
    if parts.scheme not in ("http", "https") and "." not in parts.scheme:
        raise RegistrationError("invalid_redirect_uri", "A native app's redirect URI must use a private-use "
                                                        "scheme in reverse domain notation")
    return value


def _strings(body: dict[str, Any], name: str, default: list[str], limit: int) -> list[str]:
    value = body.get(name, default)
    if not isinstance(value, list) or len(value) > limit or not all(isinstance(v, str) for v in value):
        raise RegistrationError("invalid_client_metadata", f"{name} must be a list of at most {limit} strings")
    return list(dict.fromkeys(value))


def metadata(body: Any) -> dict[str, Any]:
    """The client metadata the server registers from a request's body (RFC 7591 §2), checked;
    members it does not know are ignored, as RFC 7591 asks."""
    if not isinstance(body, dict):
        raise RegistrationError("invalid_client_metadata", "The body must be a JSON object")
    grants = _strings(body, "grant_types", ["authorization_code"], len(GRANTS))
    if any(g not in GRANTS for g in grants) or not grants:
        raise RegistrationError("invalid_client_metadata", f"grant_types may name only {', '.join(GRANTS)}")
    response_types = _strings(body, "response_types", ["code"] if "authorization_code" in grants else [], 1)
    if any(r != "code" for r in response_types) or (("code" in response_types) != ("authorization_code" in grants)):
        raise RegistrationError("invalid_client_metadata", "response_types is ['code'] exactly when grant_types "
                                                           "has authorization_code")
    uris = _strings(body, "redirect_uris", [], MAX_REDIRECT_URIS)
    if "authorization_code" in grants and not uris:
        raise RegistrationError("invalid_redirect_uri", "redirect_uris is required for the authorization_code grant")
    found: dict[str, Any] = {"redirect_uris": [_redirect_uri(u) for u in uris], "grant_types": grants,
                             "response_types": response_types}
    method = body.get("token_endpoint_auth_method", "client_secret_basic")
    if method not in AUTH_METHODS:
        raise RegistrationError("invalid_client_metadata",
                                f"token_endpoint_auth_method must be one of {', '.join(AUTH_METHODS)}")
    found["token_endpoint_auth_method"] = method
    if "jwks" in body:  # the keys of private_key_jwt and of request objects, inline or by URL
        if not isinstance(body["jwks"], dict) or len(json.dumps(body["jwks"])) > MAX_JWKS:
            raise RegistrationError("invalid_client_metadata",
                                    f"jwks must be a JWK Set of at most {MAX_JWKS} characters")
        found["jwks"] = body["jwks"]
    if body.get("jwks_uri"):
        found["jwks_uri"] = _url(body["jwks_uri"], "jwks_uri")
    application_type = body.get("application_type", "web")
    if application_type not in ("web", "native"):
        raise RegistrationError("invalid_client_metadata", "application_type must be web or native")
    found["application_type"] = application_type
    for name in TEXT_FIELDS:
        if name in body:
            if not isinstance(body[name], str) or len(body[name]) > MAX_TEXT:
                raise RegistrationError("invalid_client_metadata", f"{name} must be at most {MAX_TEXT} characters")
            found[name] = body[name]
    for name in URL_FIELDS:
        if body.get(name):
            found[name] = _url(body[name], name)
    if "contacts" in body:
        found["contacts"] = _strings(body, "contacts", [], MAX_CONTACTS)
        if any(len(c) > MAX_TEXT for c in found["contacts"]):
            raise RegistrationError("invalid_client_metadata", f"a contact is at most {MAX_TEXT} characters")
    if "scope" in body:
        scope = body["scope"]
        if not isinstance(scope, str) or len(scope) > 255 or any(not SCOPE_TOKEN.match(t) for t in scope.split()):
            raise RegistrationError("invalid_client_metadata", "scope must be space-separated scope tokens")
        found["scope"] = " ".join(dict.fromkeys(scope.split()))
    return found


def _apply(row: m.Application, found: dict[str, Any]) -> None:
    """The application's own fields that the metadata sets."""
    row.display_name = found.get("client_name") or row.name
    row.redirect_uris = found["redirect_uris"]
    row.grant_types = found["grant_types"]
    row.logo = found.get("logo_uri", "")
    row.homepage_url = found.get("client_uri", "")
    row.terms_of_use = found.get("tos_uri", "")
    row.token_endpoint_auth_method = found["token_endpoint_auth_method"] if (
        found["token_endpoint_auth_method"] in HELD_METHODS) else ""
    row.jwks, row.jwks_uri = found.get("jwks") or {}, found.get("jwks_uri", "")
    row.client_metadata = found


def _checked(db: Session, row: m.Application, kind, *, new: bool) -> None:
    """The application rules every save passes (the keys of private_key_jwt among them), as
    RFC 7591 errors."""
    try:
        if new:
            rules.before_save(db, ANONYMOUS, kind, None, row, set())
        rules.validate(db, ANONYMOUS, kind, row)
    except ServiceError as exc:
        raise RegistrationError("invalid_client_metadata", str(exc)) from None


def answer(row: m.Application, registration_token: str = "") -> dict[str, Any]:
    """The client information response (RFC 7591 §3.2.1, RFC 7592 §3)."""
    found = dict(row.client_metadata)
    secret = {} if found.get("token_endpoint_auth_method") == "none" else {
        "client_secret": row.client_secret, "client_secret_expires_at": 0}
    token = {"registration_access_token": registration_token} if registration_token else {}
    return {**found, "client_id": row.client_id, **secret,
            "client_id_issued_at": int(row.created_time.timestamp()) if row.created_time else int(time.time()),
            "registration_client_uri": f"{settings.origin}{PATH}/{quote(row.client_id, safe='')}", **token}


# --- registering ---

def _vouching_application(db: Session, bearer: str) -> m.Application | None:
    """The application an initial access token was issued to (a live client_credentials token of
    an application that did not register itself); None without a token."""
    if not bearer:
        return None
    found = tokens.live_claims(db, bearer)
    if found is None or found[0].user or found[0].grant_type != "client_credentials" \
            or found[1].registration_access_token:
        raise RegistrationError("invalid_token", "The initial access token is invalid", 401)
    return found[1]


def _organization(db: Session, name: str, vouching: m.Application | None) -> m.Organization:
    wanted = name or (vouching.organization if vouching else b.BUILT_IN_ORG)
    organization = lookup.organization(db, wanted)
    policy = organization.dcr_policy if organization is not None else DISABLED
    if policy not in (INITIAL_ACCESS_TOKEN, OPEN):
        raise RegistrationError("access_denied", "Dynamic client registration is disabled for this organization",
                                403)
    if vouching is None and policy == INITIAL_ACCESS_TOKEN:
        raise RegistrationError("invalid_token", "This organization registers clients with an initial access "
                                                 "token only", 401)
    if vouching is not None and vouching.organization not in (wanted, b.BUILT_IN_ORG):
        raise RegistrationError("access_denied", "The initial access token is of another organization", 403)
    return organization


def register(db: Session, body: Any, bearer: str, organization_name: str, client_ip: str) -> dict[str, Any]:
    """A new client of the organization; its client information, with its registration access token."""
    try:
        throttle.hit(db, f"client-registration:{client_ip or '-'}", *REGISTRATIONS_PER_ADDRESS,
                     throttle.TOO_MANY_REQUESTS)
    except ServiceError as exc:
        raise RegistrationError("too_many_requests", str(exc), 429) from None
    vouching = _vouching_application(db, bearer)
    organization = _organization(db, organization_name[:100], vouching)
    found = metadata(body)
    held = db.exec(select(func.count()).select_from(m.Application).where(
        m.Application.organization == organization.name, m.Application.registration_access_token != "")).one()
    if held >= QUOTA:
        raise RegistrationError("access_denied", f"The organization holds its {QUOTA} registered clients already",
                                403)
    kind = REGISTRY["application"]
    row = m.Application()
    wire.apply(row, application_rules.new(db, ANONYMOUS, organization.name, ""))
    row.owner, row.name, row.organization = b.ADMIN_OWNER, f"dcr_{secrets.token_hex(8)}", organization.name
    row.category, row.type, row.enable_sign_up, row.tags = "Agent", "MCP", False, ["dcr"]
    _apply(row, found)
    registration_token = secrets.token_urlsafe(32)
    row.registration_access_token = digest(registration_token)
    _checked(db, row, kind, new=True)
    lookup.forget()
    db.add(row)
    db.flush()
    audit(db, organization=organization.name, user=f"app/{vouching.name}" if vouching else "anonymous",
          action="register-client", request_uri=PATH, client_ip=client_ip,
          obj={"application": row.name, **found}, status_code=201)
    return answer(row, registration_token)


# --- managing a registered client (RFC 7592) ---

def registered(db: Session, client_id: str, registration_token: str) -> m.Application:
    """The client whose registration access token this is (invalid_token, whatever is wrong:
    nothing tells whether the client exists)."""
    row = lookup.application_by_client_id(db, client_id)
    if row is None or not row.registration_access_token or not registration_token or not hmac.compare_digest(
            row.registration_access_token, digest(registration_token)):
        raise RegistrationError("invalid_token", "The registration access token is invalid", 401)
    return row


def update(db: Session, row: m.Application, body: Any) -> dict[str, Any]:
    """RFC 7592 §2.2: the metadata is replaced by the body's (the client id, and the secret if
    given, must be the client's)."""
    if not isinstance(body, dict) or body.get("client_id") != row.client_id:
        raise RegistrationError("invalid_client_metadata", "The body must name the client's client_id")
    if "client_secret" in body and body["client_secret"] != row.client_secret:
        raise RegistrationError("invalid_client_metadata", "The client_secret is not the client's")
    _apply(row, metadata(body))
    _checked(db, row, REGISTRY["application"], new=False)
    lookup.forget()
    db.add(row)
    return answer(row)


def delete(db: Session, row: m.Application, client_ip: str) -> None:
    """RFC 7592 §2.3: the client and what it was issued go."""
    rules.take_along(db, REGISTRY["application"], row)
    lookup.forget()
    db.delete(row)
    audit(db, organization=row.organization, user=f"app/{row.name}", action="delete-client",
          request_uri=f"{PATH}/{row.client_id}", client_ip=client_ip, obj={"application": row.name},
          status_code=204)
