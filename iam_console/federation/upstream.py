"""Sign-in at an upstream OAuth 2.0 / OpenID Connect provider (providers of category OAuth):
GitHub, Google, Microsoft (AzureAD), GitLab, Okta and Custom. docs/security.md, "Upstream
identity providers", states the rules; federation/federation.py decides the account.

The authorization-code flow with state and PKCE (S256), through Authlib's httpx client on the
outbound guard (core/outbound.py: checked destinations, time limits):

- `start` keeps the state server-side (UpstreamState, by the SHA-256 of the state), bound to the
  browser (the SHA-256 of an HttpOnly cookie), the application, the provider, the target (signin,
  signup, link: then the account too) and the authorization request the sign-in answers (checked
  at start and again after), and gives the provider's authorize URL;
- `finish` (the /callback) consumes the state once: an unknown, expired, used, or other browser's
  state is refused before anything is sent. Then the code (with the PKCE verifier) for a token, the
  token for the user's information, and federation.resolve for the account.

A SAML provider's button starts here too: `start` makes its AuthnRequest (saml/saml_sp.py)
and keeps the same state row, named by the request's ID, bound to the browser the same way;
/api/acs consumes it (`consume`) after the Response's own checks.

Every endpoint of a well-known type can be replaced by the provider's own fields (customAuthUrl,
customTokenUrl, customUserInfoUrl; domain for the tenant or the host of AzureAD, GitLab and Okta);
a Custom provider takes them from discovery (issuerUrl/.well-known/openid-configuration) or
from those fields, and maps the user's fields through its userMapping."""

from __future__ import annotations

import hashlib
import secrets
import warnings
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from urllib.parse import urlencode, urlsplit

import sqlalchemy as sa
from authlib.common.security import generate_token
from sqlmodel import Session, delete, select

from iam_console import models as m
from iam_console.core import lookup, navigation, outbound, page_script, throttle
from iam_console.core.errors import ServiceError
from iam_console.federation import federation, id_tokens
from iam_console.models.base import utcnow
from iam_console.settings import settings

with warnings.catch_warnings():  # Authlib 1.9 warns, at import, about httpx2 for its assertion client
    import authlib.deprecate  # noqa: F401  (it sets its warning to "always": ignored after it, here)

    warnings.simplefilter("ignore")
    from authlib.integrations.httpx_client import OAuth2Client

STATE_MINUTES = 10
STARTS_PER_ADDRESS = (60, 600)  # states a client address may open per window
COOKIE = "iam_upstream"  # the browser's binding: a random value, its SHA-256 on each state
CALLBACK_PATH = "/callback"
WELL_KNOWN = ("GitHub", "Google", "AzureAD", "GitLab", "Okta")
CUSTOM = ("Custom", *(f"Custom{n}" for n in range(2, 11)))  # "Custom Flexible" links by name: not here
SUPPORTED = (*WELL_KNOWN, *CUSTOM)
MAX_QUERY = 4000
MAX_CODE = 100  # an invitation code
DISCOVERY = "/.well-known/openid-configuration"


def _hash(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def redirect_uri() -> str:
    return f"{settings.origin}{CALLBACK_PATH}"


@dataclass(frozen=True)
class Endpoints:
    authorize: str
    token: str
    userinfo: str
    scope: str
    emails: str = ""  # GitHub: the user's emails, when the profile's is private
    # where the issuer's ID token keys are, and its names (an id_token is verified against these;
    # none known: a Custom provider with hand-given endpoints, GitHub)
    jwks: str = ""
    issuers: tuple[str, ...] = ()


GOOGLE_ISSUERS = ("https://accounts.google.com", "accounts.google.com")
MICROSOFT = "https://login.microsoftonline.com"
AZURE_ANY_TENANT = ("common", "organizations", "consumers")


def _url(value: str, label: str, provider: m.Provider) -> str:
    parts = urlsplit(value)
    if parts.scheme not in ("https", "http") or not parts.netloc:
        raise ServiceError("The provider %s has no valid %s: %s", provider.name, label, value[:200])
    return value


def _base(provider: m.Provider, default: str, label: str) -> str:
    domain = (provider.domain or default).strip().rstrip("/")
    if not domain:
        raise ServiceError("The provider %s needs its %s in Domain", provider.name, label)
    if "://" not in domain:
        domain = f"https://{domain}"
    return _url(domain, "domain", provider)


def _discover(provider: m.Provider) -> dict[str, Any]:
    """The issuer's OpenID configuration, whose issuer must be the one configured."""
    issuer = _url(provider.issuer_url.strip().rstrip("/"), "issuer URL", provider)
    with outbound.on_behalf_of(provider.owner), outbound.http_client(headers={"Accept": "application/json"}) as client:
        answer = client.get(issuer + DISCOVERY)
    if answer.status_code != 200:
        raise ServiceError("The discovery of %s answered HTTP %d", issuer, answer.status_code)
    try:
        document = answer.json()
    except ValueError:
        raise ServiceError("The discovery of %s did not answer JSON", issuer) from None
    if not isinstance(document, dict) or str(document.get("issuer", "")).rstrip("/") != issuer:
        raise ServiceError("The discovery of %s names another issuer", issuer)
    return document


def endpoints(provider: m.Provider) -> Endpoints:
    """The provider's endpoints: its type's, each replaced by the provider's own field when set."""
    kind = provider.type
    if kind not in SUPPORTED:
        raise ServiceError("The provider type: %s is not supported", kind[:100])
    scope = provider.scopes.strip()
    if kind == "GitHub":
        found = Endpoints("https://github.com/login/oauth/authorize", "https://github.com/login/oauth/access_token",
                          "https://api.github.com/user", scope or "read:user user:email")
    elif kind == "Google":
        found = Endpoints("https://accounts.google.com/o/oauth2/v2/auth", "https://oauth2.googleapis.com/token",
                          "https://openidconnect.googleapis.com/v1/userinfo", scope or "openid email profile",
                          jwks=settings.google_jwks, issuers=GOOGLE_ISSUERS)
    elif kind == "AzureAD":
        tenant = (provider.domain or "common").strip().strip("/")
        base = tenant if "://" in tenant else f"{MICROSOFT}/{tenant}"
        # a multi-tenant sign-in's tokens name the user's own tenant in their issuer
        issuer = f"{MICROSOFT}/{id_tokens.TENANT}/v2.0" if tenant.lower() in AZURE_ANY_TENANT else f"{base}/v2.0"
        found = Endpoints(f"{base}/oauth2/v2.0/authorize", f"{base}/oauth2/v2.0/token",
                          "https://graph.microsoft.com/oidc/userinfo", scope or "openid email profile",
                          jwks=f"{base}/discovery/v2.0/keys", issuers=(issuer,))
    elif kind == "GitLab":
        base = _base(provider, "https://gitlab.com", "GitLab host")
        found = Endpoints(f"{base}/oauth/authorize", f"{base}/oauth/token", f"{base}/api/v4/user",
                          scope or "read_user", jwks=f"{base}/oauth/discovery/keys", issuers=(base,))
    elif kind == "Okta":
        base = _base(provider, "", "Okta authorization server")
        found = Endpoints(f"{base}/v1/authorize", f"{base}/v1/token", f"{base}/v1/userinfo",
                          scope or "openid email profile", jwks=f"{base}/v1/keys", issuers=(base,))
    elif provider.issuer_url.strip():
        document = _discover(provider)
        found = Endpoints(str(document.get("authorization_endpoint") or ""), str(document.get("token_endpoint") or ""),
                          str(document.get("userinfo_endpoint") or ""), scope or "openid email profile",
                          jwks=str(document.get("jwks_uri") or ""), issuers=(str(document["issuer"]),))
    else:
        found = Endpoints("", "", "", scope or "openid email profile")
    authorize = provider.custom_auth_url.strip() or found.authorize
    token = provider.custom_token_url.strip() or found.token
    userinfo = provider.custom_user_info_url.strip() or found.userinfo
    if not (authorize and token and userinfo):
        raise ServiceError("The provider %s needs an issuer URL, or its auth, token and user info URLs", provider.name)
    emails = f"{userinfo.rstrip('/')}/emails" if kind == "GitHub" else ""
    jwks = _url(found.jwks, "key set URL", provider) if found.jwks else ""
    return Endpoints(_url(authorize, "auth URL", provider), _url(token, "token URL", provider),
                     _url(userinfo, "user info URL", provider), found.scope, emails, jwks, found.issuers)


def _client(provider: m.Provider, scope: str) -> OAuth2Client:
    if not provider.client_id.strip():
        raise ServiceError("The provider %s has no client ID", provider.name)
    if not provider.client_secret.strip() or provider.client_secret == "***":
        raise ServiceError("The provider %s has no client secret", provider.name)
    return outbound.guarded_client(
        OAuth2Client, client_id=provider.client_id, client_secret=provider.client_secret, scope=scope,
        redirect_uri=redirect_uri(), code_challenge_method="S256", token_endpoint_auth_method="client_secret_post",
        headers={"Accept": "application/json"})


# --- start ---

@dataclass(frozen=True)
class Started:
    url: str  # the provider's authorize URL (a SAML IdP's single sign-on URL)
    browser_token: str  # the cookie's value (the browser's own, or a new one)
    page: str = ""  # a SAML POST binding: the page that posts the AuthnRequest (to `url`)


def _checked_start(db: Session, *, application_name: str, provider_name: str, method: str, authorize_query: str,
                   user: m.User | None, client_ip: str) -> tuple[m.Application, m.Provider, federation.ProviderRow]:
    """The application and provider a new state is for, once the start is allowed. Each client
    address opens at most 60 states per 10 minutes."""
    throttle.hit(db, f"upstream-start:{client_ip}", *STARTS_PER_ADDRESS, throttle.TOO_MANY_REQUESTS)
    if method not in federation.METHODS:
        raise ServiceError("Unknown method: %s", str(method)[:100])
    application = lookup.application(db, str(application_name or "")[:100])
    if application is None:
        raise ServiceError("The application: %s does not exist", str(application_name)[:100])
    provider, row = federation.provider_of(db, application, provider_name, ("OAuth", "SAML"))
    saml = provider.category == "SAML"
    if not saml and provider.type not in SUPPORTED:
        raise ServiceError("The provider type: %s is not supported", provider.type[:100])
    if method == federation.LINK:
        if saml:
            raise ServiceError("Unknown method: %s", method)
        if user is None:
            raise ServiceError("Please sign in first")
    elif method == federation.SIGN_IN and not row.can_sign_in:
        raise ServiceError(federation.NO_SIGN_IN, provider.name, application.name)
    elif method == federation.SIGN_UP and not row.can_sign_up:
        raise ServiceError(federation.NOT_ENABLED, provider.name)
    if len(authorize_query) > MAX_QUERY:
        raise ServiceError("The authorization request is too long")
    if authorize_query:
        from iam_console.oauth import oauth  # the authorization request is checked now, and again after the sign-in

        checked = oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(_query(authorize_query)))
        if checked.application.name != application.name:
            raise ServiceError("The authorization request is for another application")
    return application, provider, row


def _browser_token(browser_token: str) -> str:
    return browser_token if browser_token and len(browser_token) <= 100 else secrets.token_urlsafe(32)


def _keep_state(db: Session, *, state: str, browser_token: str, application: m.Application, provider: m.Provider,
                method: str, user: m.User | None, verifier: str, nonce: str, authorize_query: str,
                return_to: str, invitation_code: str = "") -> None:
    db.execute(delete(m.UpstreamState).where(m.UpstreamState.expires_at < utcnow()))
    db.add(m.UpstreamState(
        state_hash=_hash(state), browser_hash=_hash(browser_token), application=application.name,
        provider=provider.name, method=method, user=f"{user.owner}/{user.name}" if user is not None else "",
        code_verifier=verifier, nonce=nonce, authorize_query=authorize_query,
        return_to=navigation.safe_return_path(return_to)[:500], invitation_code=invitation_code,
        expires_at=utcnow() + timedelta(minutes=STATE_MINUTES)))


def start(db: Session, *, application_name: str, provider_name: str, method: str, browser_token: str,
          authorize_query: str = "", return_to: str = "/", user: m.User | None = None,
          client_ip: str = "", invitation_code: str = "") -> Started:
    """A new state for the browser, and the provider's authorize URL (a SAML provider: its IdP's,
    with a new AuthnRequest, whose ID names the state); nothing is written when the provider or the
    request is refused. `invitation_code` (the sign-up page's) is kept on the state for the sign-up
    the callback (or /api/acs) may make, and checked there (federation.resolve)."""
    application, provider, _row = _checked_start(
        db, application_name=application_name, provider_name=provider_name, method=method,
        authorize_query=authorize_query, user=user, client_ip=client_ip)
    invitation_code = str(invitation_code or "").strip()
    if len(invitation_code) > MAX_CODE:
        raise ServiceError("Invitation code is invalid")
    if method == federation.LINK:
        invitation_code = ""  # a link signs nobody up
    browser_token = _browser_token(browser_token)
    verifier = nonce = page = ""  # a SAML request's state has neither verifier nor nonce (`kind_of`)
    if provider.category == "SAML":
        from iam_console.saml import saml_sp

        login = saml_sp.login(db, f"{provider.owner}/{provider.name}", application, return_to=return_to)
        state, url, page = login.request_id, login.url, login.page
    else:
        found = endpoints(provider)
        federation.link_key(provider.type)
        state, verifier, nonce = secrets.token_urlsafe(32), generate_token(64), secrets.token_urlsafe(16)
        with _client(provider, found.scope) as client:
            extra = {"nonce": nonce} if "openid" in found.scope.split() else {}
            url, _ = client.create_authorization_url(found.authorize, state=state, code_verifier=verifier, **extra)
    _keep_state(db, state=state, browser_token=browser_token, application=application, provider=provider,
                method=method, user=user, verifier=verifier, nonce=nonce, authorize_query=authorize_query,
                return_to=return_to, invitation_code=invitation_code)
    return Started(url, browser_token, page)


# --- Google One Tap: Google's script in the browser hands over an ID token (the credential) ---

ONE_TAP_RULES = ("OneTap", "One Tap")  # Casdoor's value, and the console's former one
NOT_ONE_TAP = "The provider: %s does not offer Google One Tap to the application"


def is_one_tap(provider: m.Provider, row: federation.ProviderRow) -> bool:
    return provider.type == "Google" and row.rule in ONE_TAP_RULES


@dataclass(frozen=True)
class OneTapStarted:
    state: str
    nonce: str  # Google puts it into the credential it issues
    client_id: str
    browser_token: str


def start_one_tap(db: Session, *, application_name: str, provider_name: str, browser_token: str,
                  authorize_query: str = "", return_to: str = "/", client_ip: str = "") -> OneTapStarted:
    """A state (sign-in, no PKCE verifier: only the One Tap route takes it) for Google's prompt
    in this browser, and the nonce the credential must carry."""
    application, provider, row = _checked_start(
        db, application_name=application_name, provider_name=provider_name, method=federation.SIGN_IN,
        authorize_query=authorize_query, user=None, client_ip=client_ip)
    if not is_one_tap(provider, row):
        raise ServiceError(NOT_ONE_TAP, provider.name)
    if not provider.client_id.strip():
        raise ServiceError("The provider %s has no client ID", provider.name)
    state, nonce, browser_token = secrets.token_urlsafe(32), secrets.token_urlsafe(16), _browser_token(browser_token)
    _keep_state(db, state=state, browser_token=browser_token, application=application, provider=provider,
                method=federation.SIGN_IN, user=None, verifier="", nonce=nonce, authorize_query=authorize_query,
                return_to=return_to)
    return OneTapStarted(state, nonce, provider.client_id, browser_token)


def one_tap_identity(provider: m.Provider, row: federation.ProviderRow, state: m.UpstreamState,
                     credential: str) -> federation.UpstreamIdentity:
    """Who the credential names, once verified here against Google's keys (IAM_GOOGLE_JWKS) with
    the state's nonce: the browser's word (the script's decoding of it) is not taken."""
    if not is_one_tap(provider, row):
        raise ServiceError(NOT_ONE_TAP, provider.name)
    with outbound.on_behalf_of(provider.owner):  # Google's keys, when they are not cached
        claims = id_tokens.verify(credential, id_tokens.Expected(settings.google_jwks, GOOGLE_ISSUERS,
                                                                 provider.client_id, state.nonce))
    return identity_of(provider, claims)


def _query(text: str) -> dict[str, str]:
    from urllib.parse import parse_qsl

    return dict(parse_qsl(text.lstrip("?"), keep_blank_values=True))


def authorize_params(row: m.UpstreamState) -> dict[str, str]:
    return _query(row.authorize_query) if row.authorize_query else {}


# --- the callback ---

REPLAYED = "The state has already been used, please sign in again"
UNKNOWN_STATE = "The state is unknown or has expired, please sign in again"
OTHER_BROWSER = "The state was issued to another browser, please sign in again"


CALLBACK, ONE_TAP, SAML = "callback", "one tap", "saml"  # what takes a state back


def kind_of(row: m.UpstreamState) -> str:
    """Which route a state belongs to: the callback's has a PKCE verifier, One Tap's a nonce
    only, a SAML request's (/api/acs) neither."""
    if row.code_verifier:
        return CALLBACK
    return ONE_TAP if row.nonce else SAML


def consume(db: Session, state: str, browser_token: str, *, kind: str = CALLBACK) -> m.UpstreamState:
    """The state's row, marked used (committed at once: a second callback is refused even if this
    one fails later). Each route takes its own kind of state only (`kind_of`)."""
    if not state or len(state) > 200:
        raise ServiceError(UNKNOWN_STATE)
    row = db.exec(select(m.UpstreamState).where(m.UpstreamState.state_hash == _hash(state))).first()
    if row is None or row.expires_at <= utcnow() or row.error_id or kind_of(row) != kind:
        raise ServiceError(UNKNOWN_STATE)
    if row.used:
        raise ServiceError(REPLAYED)
    if not browser_token or not secrets.compare_digest(row.browser_hash, _hash(browser_token)):
        raise ServiceError(OTHER_BROWSER)
    row.used = True
    db.add(row)
    db.commit()
    return row


def peek(db: Session, state: str) -> m.UpstreamState | None:
    """The state's row whatever became of it (where a refused callback goes back to)."""
    if not state or len(state) > 200:
        return None
    return db.exec(select(m.UpstreamState).where(m.UpstreamState.state_hash == _hash(state))).first()


def saml_start(db: Session, request_id: str) -> m.UpstreamState | None:
    """The state of a provider button's SAML request (bound to the browser that started it), or
    None for a request started otherwise (/api/get-saml-login). A Response to a button's request
    is completed only by that browser, at /api/acs or /api/login alike (`consume`, kind SAML)."""
    row = peek(db, request_id)
    return row if row is not None and kind_of(row) == SAML else None


def _claim(document: dict, path: str) -> Any:
    value: Any = document
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _text(value: Any) -> str:
    return "" if value is None or isinstance(value, dict | list) else str(value)


def identity_of(provider: m.Provider, info: dict[str, Any], emails: list | None = None) -> federation.UpstreamIdentity:
    """The user's information in the provider type's words, as an UpstreamIdentity."""
    kind = provider.type
    verified = info.get("email_verified") in (True, "true")
    if kind == "GitHub":
        email, verified = _text(info.get("email")), bool(info.get("email"))
        if not email and emails:
            primary = next((e for e in emails if isinstance(e, dict) and e.get("primary") and e.get("verified")),
                           None) or next((e for e in emails if isinstance(e, dict) and e.get("verified")), None)
            if primary:
                email, verified = _text(primary.get("email")), True
        fields = {"id": _text(info.get("id")), "username": _text(info.get("login")),
                  "display_name": _text(info.get("name")), "email": email, "avatar": _text(info.get("avatar_url"))}
    elif kind == "GitLab":
        verified = bool(info.get("confirmed_at")) or verified
        fields = {"id": _text(info.get("id")), "username": _text(info.get("username")),
                  "display_name": _text(info.get("name")), "email": _text(info.get("email")),
                  "avatar": _text(info.get("avatar_url"))}
    elif kind in CUSTOM:
        mapping = {k: str(v) for k, v in (provider.user_mapping or {}).items() if v}
        mapping = {"id": "sub", "username": "preferred_username", "displayName": "name", "email": "email",
                   "avatarUrl": "picture", **mapping}
        fields = {"id": _text(_claim(info, mapping["id"])), "username": _text(_claim(info, mapping["username"])),
                  "display_name": _text(_claim(info, mapping["displayName"])),
                  "email": _text(_claim(info, mapping["email"])), "avatar": _text(_claim(info, mapping["avatarUrl"]))}
    else:  # OpenID Connect's standard claims: Google, AzureAD, Okta
        email = _text(info.get("email"))
        fields = {"id": _text(info.get("sub")), "username": _text(info.get("preferred_username")) or email,
                  "display_name": _text(info.get("name")), "email": email, "avatar": _text(info.get("picture"))}
    extra = {k: v for k, v in info.items() if isinstance(v, str | int | float | bool)}
    return federation.UpstreamIdentity(provider_type=kind, email_verified=verified, extra=extra,
                                       phone=_text(info.get("phone_number")), **fields)


def expected_id_token(provider: m.Provider, found: Endpoints, nonce: str) -> id_tokens.Expected:
    return id_tokens.Expected(found.jwks, found.issuers, provider.client_id, nonce)


def verified_claims(provider: m.Provider, found: Endpoints, token: dict, nonce: str) -> dict[str, Any] | None:
    """The id_token's claims, verified (id_tokens.verify); None when the provider sent none, or
    when no key set is known for it (a Custom provider with hand-given endpoints): then the user
    information alone speaks, as for GitHub."""
    id_token = token.get("id_token")
    if not id_token or not found.jwks:
        return None
    return id_tokens.verify(id_token, expected_id_token(provider, found, nonce))


def with_claims(info: dict[str, Any], claims: dict[str, Any] | None) -> dict[str, Any]:
    """The user information with the verified claims in place of its own `sub`, `email` and
    `email_verified`; a user information naming another subject than the ID token is refused."""
    if claims is None:
        return info
    if "sub" in info and _text(info.get("sub")) != claims["sub"]:
        raise ServiceError("Failed to login in: %s", "the user info and the ID token name different subjects")
    return {**info, **{k: claims[k] for k in ("sub", "email", "email_verified") if k in claims}}


def fetch_identity(provider: m.Provider, code: str, verifier: str, nonce: str = "") -> federation.UpstreamIdentity:
    """The code (and the PKCE verifier) for a token at the token endpoint, its id_token verified
    when there is one, then the user's information with the access token as a bearer token; the
    tokens themselves are not kept."""
    if not code or len(code) > 2000:
        raise ServiceError("Failed to login in: %s", "the provider sent no code")
    with outbound.on_behalf_of(provider.owner):  # the whole exchange is one call of the provider's organization
        return _exchange(provider, code, verifier, nonce)


def _exchange(provider: m.Provider, code: str, verifier: str, nonce: str) -> federation.UpstreamIdentity:
    found = endpoints(provider)
    with _client(provider, found.scope) as client:
        try:
            token = client.fetch_token(found.token, code=code, code_verifier=verifier)
        except outbound.OutboundError:
            raise
        except Exception as exc:  # Authlib's OAuthError, or an answer that is not a token
            raise ServiceError("Failed to login in: %s", str(exc)[:300] or type(exc).__name__) from None
        if not token or not token.get("access_token"):
            raise ServiceError("Invalid token")
        claims = verified_claims(provider, found, token, nonce if "openid" in found.scope.split() else "")
        answer = client.get(found.userinfo)
        if answer.status_code != 200:
            raise ServiceError("Failed to login in: %s", f"the user info endpoint answered HTTP {answer.status_code}")
        try:
            info = answer.json()
        except ValueError:
            raise ServiceError("Failed to login in: %s", "the user info is not JSON") from None
        if not isinstance(info, dict):
            raise ServiceError("Failed to login in: %s", "the user info is not a JSON object")
        info = with_claims(info, claims)
        emails = None
        if found.emails and not info.get("email"):
            listed = client.get(found.emails)
            if listed.status_code == 200:
                try:
                    emails = listed.json()
                except ValueError:
                    emails = None
    return identity_of(provider, info, emails if isinstance(emails, list) else None)


def note_error(db: Session, message: str, application: str = "") -> str:
    """Keep a refused callback's message for the sign-in page to show once; its id."""
    error_id = secrets.token_urlsafe(16)
    db.add(m.UpstreamState(state_hash=_hash(secrets.token_urlsafe(32)), browser_hash="", application=application[:100],
                           used=True, error_id=error_id, error=message[:500],
                           expires_at=utcnow() + timedelta(minutes=STATE_MINUTES)))
    return error_id


def take_error(db: Session, error_id: str) -> str:
    """A noted error's message, once."""
    if not error_id or len(error_id) > 64:
        return ""
    row = db.exec(select(m.UpstreamState).where(m.UpstreamState.error_id == error_id)).first()
    if row is None or row.expires_at <= utcnow():
        return ""
    message = row.error
    db.delete(row)
    return message


# --- the pages' provider buttons ---

ICONS = {"GitHub": "github", "Google": "google", "AzureAD": "microsoft", "GitLab": "gitlab", "Okta": "okta"}
LABELS = {"AzureAD": "Microsoft"}
START_PATH = "/api/federation/start"


def _providers_item(items: list, default_shown: bool) -> tuple[bool, str]:
    """Whether the page's "Providers" item shows the buttons, and its rule (big or small)."""
    listed = [i for i in items or [] if isinstance(i, dict) and i.get("name") == "Providers"]
    if not listed:
        return default_shown, "big"
    item = listed[0]
    return item.get("visible", True) is not False, "small" if str(item.get("rule") or "").lower() == "small" else "big"


def _oauth_provider(db: Session, application: m.Application, name: str,
                    categories: tuple[str, ...] = ("OAuth",)) -> m.Provider | None:
    """The application's provider of that name (its organization's, else a shared one) when a
    button can start it: an OAuth provider of a supported type, or (when asked) a SAML one."""
    own_first = sa.case((m.Provider.owner == application.organization, 0), else_=1)
    provider = db.exec(select(m.Provider).where(
        m.Provider.name == name, m.Provider.category.in_(categories),
        m.Provider.owner.in_((application.organization, "admin"))).order_by(own_first)).first()
    if provider is None:
        return None
    return provider if provider.category == "SAML" or provider.type in SUPPORTED else None


def _label(provider: m.Provider) -> str:
    return LABELS.get(provider.type, provider.type) if provider.category == "OAuth" and \
        provider.type in WELL_KNOWN else (provider.display_name or provider.name)


def _icon(provider: m.Provider) -> str:
    fallback = "saml" if provider.category == "SAML" else ICONS.get(provider.type, "openid")
    return provider.custom_logo or f"/providers/{fallback}.svg"


def _links(db: Session, application: m.Application, user: m.User, return_to: str,
           prompted_only: bool = False) -> list[dict[str, str]]:
    linked, props, out = user.third_party_ids or {}, user.properties or {}, []
    for item in application.providers or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        row = federation.ProviderRow.of(item)
        if prompted_only and not row.prompted:
            continue
        provider = _oauth_provider(db, application, row.name)
        if provider is None:
            continue
        value = str(linked.get(federation.link_key(provider.type)) or "")
        upstream_name = props.get(f"oauth_{provider.type}_username") or props.get(f"oauth_{provider.type}_displayName")
        query = {"application": application.name, "provider": provider.name, "method": federation.LINK,
                 "from": return_to}
        out.append({"name": provider.name, "type": provider.type, "label": _label(provider), "icon": _icon(provider),
                    "linked": "1" if value else "", "username": str(upstream_name or value),
                    "canUnlink": "1" if row.can_unlink else "", "href": f"{START_PATH}?{urlencode(query)}"})
    return out


def account_links(db: Session, user: m.User) -> list[dict[str, str]]:
    """The account page's list: each OAuth provider of the application governing the user's links
    (federation.application_of_user), whether the account is linked to it (and as whom upstream),
    whether it may be unlinked (canUnlink), and where Link starts."""
    application = federation.application_of_user(db, user)
    return _links(db, application, user, "/account") if application is not None else []


def prompted_links(db: Session, application: m.Application, user: m.User, return_to: str = "/") -> list[dict[str, str]]:
    """The prompt page's list (Casdoor's prompted provider rows): the application's OAuth provider
    rows with `prompted` on, in the same shape as account_links, Link returning to `return_to`.
    Only OAuth rows: a SAML or Web3 identity cannot be linked to an existing account here."""
    return _links(db, application, user, navigation.safe_return_path(return_to), prompted_only=True)


def buttons(db: Session, application: m.Application | None, method: str, *, authorize_query: str = "",
            return_to: str = "", invitation_code: str = "") -> list[dict[str, str]]:
    """The application's OAuth and SAML providers a page offers (sign-in: rows with canSignIn;
    sign-up: rows with canSignUp), in the application's order, as the "Providers" item of its signin (or signup)
    items shows them: name, label, icon (the provider's custom logo, else the type's), size (big
    or small) and href (the start of the flow, carrying the page's invitation code)."""
    if application is None:
        return []
    if method == federation.SIGN_UP:
        shown, size = _providers_item(application.signup_items, False)
    else:
        shown, size = _providers_item(application.signin_items, True)
    if not shown:
        return []
    out = []
    for item in application.providers or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        row = federation.ProviderRow.of(item)
        if not (row.can_sign_up if method == federation.SIGN_UP else row.can_sign_in):
            continue
        provider = _oauth_provider(db, application, row.name, ("OAuth", "SAML"))
        if provider is None:
            continue
        query: dict[str, str] = {"application": application.name, "provider": provider.name, "method": method}
        if authorize_query:
            query["authorize"] = authorize_query[:MAX_QUERY]
        if return_to:
            query["from"] = navigation.safe_return_path(return_to)
        if invitation_code:
            query["invitationCode"] = invitation_code[:MAX_CODE]
        out.append({"name": provider.name, "label": _label(provider), "type": provider.type, "size": size,
                    "icon": _icon(provider), "href": f"{START_PATH}?{urlencode(query)}"})
    return out


def one_tap_script(db: Session, application: m.Application | None, *, authorize_query: str = "",
                   return_to: str = "") -> str:
    """The page's call of window.iamGoogleOneTap (assets/iam.js) when the application has a Google
    provider row with the One Tap rule that may sign in ("" when none): Google's script
    (IAM_GOOGLE_GSI_SCRIPT) is loaded by the browser, the credential posted to the One Tap route.
    Run from on_load, which may come before the page's scripts have loaded: it waits for them."""
    if application is None:
        return ""
    for item in application.providers or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        row = federation.ProviderRow.of(item)
        provider = _oauth_provider(db, application, row.name) if row.can_sign_in else None
        if provider is None or not is_one_tap(provider, row):
            continue
        options = {"application": application.name, "provider": provider.name, "script": settings.google_gsi_script,
                   "authorize": authorize_query[:MAX_QUERY], "from": navigation.safe_return_path(return_to or "/")}
        return page_script.call("iamGoogleOneTap", options)
    return ""
