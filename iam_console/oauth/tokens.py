"""Using the tokens oauth/oauth.py issues: liveness (Bearer API calls),
introspection (RFC 7662), revocation (RFC 7009), userinfo, logout (RP-initiated
and sso-logout) and the discovery document."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import quote

from sqlmodel import Session, select

from iam_console.applications import redirects
from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.models import Application, AuthSession, Token, User
from iam_console.models.base import format_time, utcnow
from iam_console.oauth import dpop, jwt_tokens, request_objects
from iam_console.oauth.oauth import (
    DEVICE_GRANT,
    EXCHANGE_GRANT,
    RESPONSE_TYPES,
    STANDARD_SCOPES,
    OAuthError,
    digest,
    revoke_row,
)
from iam_console.settings import settings
from iam_console.signin import auth

# --- using tokens ---

def live_token(db: Session, token_text: str, dpop_jkt: str = "") -> Token | None:
    """The row of a live access token (not expired, not revoked, signed with its application's cert).
    `dpop_jkt`: the key of the request's verified DPoP proof; a DPoP-bound token is live only with
    a proof of its own key, and a Bearer token only without one (RFC 9449 section 7)."""
    found = live_claims(db, token_text, dpop_jkt)
    return found[0] if found else None


def live_claims(db: Session, token_text: str, dpop_jkt: str = "") -> tuple[Token, Application, dict[str, Any]] | None:
    """A live access token's row, application and claims (live_token's checks)."""
    if not token_text or len(token_text) > 20_000:
        return None
    row = db.exec(select(Token).where(Token.access_token_hash == digest(token_text))).first()
    if row is None or not _alive(row) or row.d_po_p_jkt != dpop_jkt:
        return None
    try:
        return row, *verified(db, row, token_text)
    except jwt_tokens.InvalidToken:
        return None


def verified(db: Session, row: Token, token_text: str, *, refresh: bool = False,
             check_expiry: bool = True) -> tuple[Application, dict[str, Any]]:
    """The application of a token's row, and the token's claims: only that application's cert
    verifies it. (A row re-pointed at another application, or an application given another
    cert, leaves the token signed with a cert that is not its application's: refused.)"""
    application = lookup.application(db, row.application)
    if application is None:
        raise jwt_tokens.InvalidToken("The token's application does not exist")
    return application, jwt_tokens.verify(db, token_text, application, refresh=refresh, check_expiry=check_expiry)


def _alive(row: Token) -> bool:
    """Not revoked, and (for an access token) not expired by its row's clock."""
    return row.expires_in > 0 and row.created_time + timedelta(seconds=row.expires_in) > utcnow()


def _find_any(db: Session, token_text: str, hint: str) -> tuple[Token | None, str]:
    """(row, 'access_token' | 'refresh_token') for a token of either kind."""
    if not token_text or len(token_text) > 20_000:
        return None, ""
    hashed = digest(token_text)
    order = ("refresh_token", "access_token") if hint == "refresh_token" else ("access_token", "refresh_token")
    for kind in order:
        column = Token.access_token_hash if kind == "access_token" else Token.refresh_token_hash
        row = db.exec(select(Token).where(column == hashed)).first()
        if row is not None:
            return row, kind
    return None, ""


def introspect(db: Session, application: Application, token_text: str, hint: str = "") -> dict[str, Any]:
    """RFC 7662 for a token of the caller's organization (a global app sees all)."""
    row, kind = _find_any(db, token_text, hint)
    if row is None or row.expires_in <= 0 or (kind == "access_token" and not _alive(row)):
        return {"active": False}
    if application.organization not in (row.organization, b.BUILT_IN_ORG):
        return {"active": False}
    try:
        owner_app, claims = verified(db, row, token_text, refresh=kind == "refresh_token")
    except jwt_tokens.InvalidToken:
        return {"active": False}
    if row.user:
        user = lookup.user(db, row.organization, row.user)
        if user is None or user.is_deleted or user.is_forbidden:
            return {"active": False}
    answer = {"active": True, "scope": row.scope, "client_id": owner_app.client_id,
              "username": row.user or row.application, "token_type": kind,
              "exp": claims.get("exp"), "iat": claims.get("iat"), "nbf": claims.get("nbf"), "sub": claims.get("sub"),
              "aud": claims.get("aud"), "iss": claims.get("iss"), "jti": claims.get("jti"),
              **({"act": claims["act"]} if "act" in claims else {})}
    if kind == "access_token":
        answer["token_type"] = "DPoP" if row.d_po_p_jkt else "Bearer"
    if row.d_po_p_jkt and (kind == "access_token" or row.public_client):
        answer["cnf"] = {"jkt": row.d_po_p_jkt}  # RFC 9449 §6.2: the key a resource must see a proof of
    return answer


def revoke(db: Session, application: Application, token_text: str, hint: str = "") -> None:
    """RFC 7009: a client revokes its own token (access or refresh: the pair dies); others' are ignored."""
    row, _ = _find_any(db, token_text, hint)
    if row is not None and row.application == application.name:
        revoke_row(db, row)


def userinfo(db: Session, token_text: str, dpop_jkt: str = "") -> dict[str, Any]:
    row = live_token(db, token_text, dpop_jkt)
    if row is None or not row.user:
        raise OAuthError("invalid_token", "The access token is invalid, expired or not a user's", 401)
    user = lookup.user(db, row.organization, row.user)
    application = lookup.application(db, row.application)
    if user is None or user.is_deleted or user.is_forbidden or application is None:
        raise OAuthError("invalid_token", "The access token's user is not active", 401)
    scopes = set(row.scope.split())
    info: dict[str, Any] = {"sub": user.uuid, "iss": settings.origin, "aud": application.client_id}
    if "profile" in scopes:
        info.update(preferred_username=user.name, name=user.display_name, picture=user.avatar,
                    groups=user.groups, roles=[r.name for r in jwt_tokens.roles_of(db, user)])
    if "email" in scopes:
        info.update(email=user.email, email_verified=user.email_verified)
    if "address" in scopes:
        info["address"] = {"formatted": " ".join(user.address)} if user.address else {}
    if "phone" in scopes and user.phone:
        info["phone"] = jwt_tokens.e164(user.phone, user.country_code)
    return info


def laravel_user(db: Session, token_text: str) -> dict[str, Any]:
    """/api/user: the token's user in the shape Laravel's OAuth clients read (Casdoor's
    second userinfo). The email only with the email scope, as /api/userinfo gives it."""
    row = live_token(db, token_text)
    user = lookup.user(db, row.organization, row.user) if row is not None and row.user else None
    if user is None or user.is_deleted or user.is_forbidden:
        raise OAuthError("invalid_token", "The access token is invalid, expired or not a user's", 401)
    email = user.email if "email" in row.scope.split() else ""
    return {"id": user.uuid, "name": user.name, "email": email,
            "email_verified_at": format_time(user.created_time) if email and user.email_verified else "",
            "created_at": format_time(user.created_time), "updated_at": format_time(user.updated_time)}


def webfinger(resource: str, rels: list[str], application: Application | None = None) -> dict[str, Any]:
    """OpenID issuer discovery (OpenID Connect Discovery 1.0, section 2) for `acct:` resources.
    Every account has the same issuer, so the answer is the same whether or not an account
    answers to the address: nothing tells who has an account here."""
    scheme, _, value = resource.partition(":")
    if scheme != "acct" or not value:
        raise OAuthError("invalid_request", "The resource must be acct:user@host", 400)
    issuer = discovery(application)["issuer"]
    return {"subject": resource, "links": [{"rel": ISSUER_REL, "href": issuer} for rel in rels if rel == ISSUER_REL]}


# --- logout ---

@dataclass(frozen=True)
class LoggedOut:
    redirect: str  # where the browser goes next ('' = answer in the envelope)
    user_id: str
    sid: str  # the browser session the hinted token was given in ('' = none)


def end_session(db: Session, id_token_hint: str, post_logout_redirect_uri: str, state: str) -> LoggedOut:
    """RP-initiated logout: the hinted token is revoked; the browser is sent on only to a URI
    registered for the token's application, equal to it (never a regular expression's match:
    OpenID RP-Initiated Logout's exact comparison)."""
    row = db.exec(select(Token).where(Token.access_token_hash == digest(id_token_hint))).first()
    if row is None:
        raise ServiceError("The id_token_hint is not a token of this server")
    try:
        application, claims = verified(db, row, id_token_hint, check_expiry=False)
    except jwt_tokens.InvalidToken as exc:
        raise ServiceError("The id_token_hint is invalid: %s", str(exc)) from None
    revoke_row(db, row)
    redirect = ""
    if (post_logout_redirect_uri and redirects.is_plain(post_logout_redirect_uri)
            and post_logout_redirect_uri in application.redirect_uris):
        redirect = redirects.with_parameters(post_logout_redirect_uri, {"state": state})
    return LoggedOut(redirect, f"{row.organization}/{row.user}" if row.user else str(claims.get("sub", "")),
                     row.sid)


def end_current(db: Session, user: User, row: Token | None, session: AuthSession | None) -> None:
    """sso-logout?logoutAll=false: only the caller's access token (if it is the user's) and
    console session end; the user's other tokens and sessions live on."""
    if row is not None and (row.organization, row.user) == (user.owner, user.name):
        revoke_row(db, row)
    if session is not None:
        auth.close_session(db, session)


# --- discovery ---

ISSUER_REL = "http://openid.net/specs/connect/1.0/issuer"

def discovery(application: Application | None = None, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The OpenID Provider metadata. An application's own document (served, as Casdoor does, at
    /.well-known/<application>/openid-configuration) differs in two members: `jwks_uri` is the
    application's key set, which holds its cert's key alone, and `scopes_supported` adds its
    custom scopes. The issuer is the same: it is the `iss` of every token.
    `extra`: the members of what organizations opt into (oauth/api.py `_opted_in`): where clients
    register themselves, whether client ids may be metadata documents' URLs."""
    origin = settings.origin
    scopes = sorted(STANDARD_SCOPES)
    jwks_uri = f"{origin}/.well-known/jwks"
    if application is not None:
        jwks_uri = f"{origin}/.well-known/{quote(application.name, safe='')}/jwks"
        custom = (s.get("scope") for s in application.custom_scopes if isinstance(s, dict))
        scopes += [s for s in dict.fromkeys(custom) if isinstance(s, str) and s and s not in STANDARD_SCOPES]
    return {
        "issuer": origin,
        "authorization_endpoint": f"{origin}/login/oauth/authorize",
        "token_endpoint": f"{origin}/api/login/oauth/access_token",
        "userinfo_endpoint": f"{origin}/api/userinfo",
        "jwks_uri": jwks_uri,
        "introspection_endpoint": f"{origin}/api/login/oauth/introspect",
        "revocation_endpoint": f"{origin}/api/login/oauth/revoke",
        "end_session_endpoint": f"{origin}/api/logout",
        # OpenID Back-Channel and Front-Channel Logout 1.0 (oauth/logout.py): `sid` always comes along
        "backchannel_logout_supported": True,
        "backchannel_logout_session_supported": True,
        "frontchannel_logout_supported": True,
        "frontchannel_logout_session_supported": True,
        "device_authorization_endpoint": f"{origin}/api/device-auth",
        "response_types_supported": list(RESPONSE_TYPES),
        "response_modes_supported": ["query", "fragment"],
        "grant_types_supported": ["authorization_code", "password", "client_credentials", "refresh_token",
                                  "token", "id_token", DEVICE_GRANT, EXCHANGE_GRANT],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": list(jwt_tokens.ALGORITHMS),
        "scopes_supported": scopes,
        "claims_supported": ["iss", "sub", "aud", "exp", "iat", "nbf", "jti", "nonce", "azp", "sid", "name",
                             "preferred_username", "picture", "email", "email_verified", "phone_number",
                             "address", "gender", "groups", "roles"],
        "token_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_post", "client_secret_basic"],
        "code_challenge_methods_supported": ["S256"],
        # RFC 9126: request_uri values come from the PAR endpoint alone; none is fetched from a
        # client's URL, which request_uri_parameter_supported is about (RFC 9126 §5)
        "pushed_authorization_request_endpoint": f"{origin}/api/login/oauth/par",
        "require_pushed_authorization_requests": False,  # an application may require them (its own option)
        "request_parameter_supported": True,
        "request_uri_parameter_supported": False,
        "request_object_signing_alg_values_supported": list(request_objects.ALGORITHMS),
        "dpop_signing_alg_values_supported": list(dpop.ALGORITHMS),
        "claims_parameter_supported": False,
        **(extra or {}),
    }
