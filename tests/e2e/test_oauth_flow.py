"""OAuth 2.0 / OpenID Connect through the real server and its sign-in pages.

A standard client library (Authlib) does discovery and the code flow with
PKCE; the browser signs in on /login/oauth/authorize; the id_token is checked
against the JWKS (joserfc, Authlib's JOSE library), then userinfo and refresh.
Also: a refused sign-in, an unregistered redirect URI, single sign-on with a
live session, and the device flow approved and denied on /login/oauth/device.

Nothing listens at the client's redirect URI: the browser's navigation there
is answered by Playwright, and the test reads the code from its URL."""

from __future__ import annotations

import base64
import contextlib
import json
import re
import secrets
import socket
import uuid
from dataclasses import dataclass
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
import requests
from authlib.common.security import generate_token
from authlib.integrations.requests_client import OAuth2Session
from joserfc import jwt
from joserfc.errors import BadSignatureError
from joserfc.jwk import KeySet
from playwright.sync_api import expect

PASSWORD = "E2e-oauth-pass-1"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


def _unused_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


CALLBACK_PORT = _unused_port()  # nothing listens there: Playwright answers the navigation
CALLBACK = f"http://127.0.0.1:{CALLBACK_PORT}/callback"
SCOPE = "openid profile email"


@dataclass(frozen=True)
class Client:
    organization: str
    username: str  # the organization's user
    password: str
    display_name: str  # the user's
    app_name: str
    app_display_name: str
    client_id: str
    client_secret: str


@pytest.fixture
def client_app(engine) -> Client:
    """An organization with a user and an application for the code, refresh and device grants."""
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    suffix = uuid.uuid4().hex[:8]
    made = Client(organization=f"org-{suffix}", username="carol", password=PASSWORD, display_name="Carol Client",
                  app_name=f"app-{suffix}", app_display_name=f"Photo Prints {suffix}",
                  client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20))
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=made.organization, display_name="Client Org",
                            password_type="argon2id", languages=["en", "zh"], password_options=["AtLeast6"]))
        db.add(User(owner=made.organization, name=made.username, uuid=str(uuid.uuid4()), type="normal-user",
                    display_name=made.display_name, email="carol@example.com",
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
        db.add(Application(owner="admin", name=made.app_name, display_name=made.app_display_name,
                           organization=made.organization, cert="cert-built-in", client_id=made.client_id,
                           client_secret=made.client_secret, redirect_uris=[CALLBACK],
                           grant_types=["authorization_code", "refresh_token", DEVICE_GRANT],
                           enable_password=True, token_format="JWT", expire_in_hours=1,
                           refresh_expire_in_hours=2))
    return made


@pytest.fixture
def callbacks(context) -> list[str]:
    """The URLs the browser was sent to at the client's redirect URI (answered here)."""
    seen: list[str] = []

    def answer(route) -> None:
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p id='callback'>the client</p>")

    context.route(re.compile(rf"^http://127\.0\.0\.1:{CALLBACK_PORT}/"), answer)
    return seen


@pytest.fixture
def discovery(server) -> dict:
    response = requests.get(server.url("/.well-known/openid-configuration"), timeout=10)
    assert response.status_code == 200
    return response.json()


def _oauth_session(app: Client) -> OAuth2Session:
    return OAuth2Session(app.client_id, app.client_secret, scope=SCOPE, redirect_uri=CALLBACK,
                         code_challenge_method="S256")


def _authorize_url(server, app: Client, **extra: str) -> str:
    params = {"client_id": app.client_id, "response_type": "code", "redirect_uri": CALLBACK, "scope": SCOPE,
              "state": generate_token(16), **extra}
    return server.url("/login/oauth/authorize?" + urlencode(params))


def _same_page(a: str, b: str) -> bool:
    """The same URL, but for the trailing slash the production server adds to a page's path."""
    first, second = urlsplit(a), urlsplit(b)
    return first._replace(path=first.path.rstrip("/")) == second._replace(path=second.path.rstrip("/"))


def _sign_in(page, app: Client, password: str | None = None) -> None:
    expect(page.locator("#authorize-app")).to_have_text(app.app_display_name)
    page.fill("#authorize-username", app.username)
    page.fill("#authorize-password", password or app.password)
    page.click("#authorize-submit")


def _returned(page, seen: list[str]) -> dict[str, str]:
    """The query of the browser's arrival at the redirect URI (after a chain of pages: the
    prompt, the authorize page's single sign-on; slower on a loaded machine)."""
    expect(page).to_have_url(re.compile(rf"^{re.escape(CALLBACK)}\?"), timeout=15_000)
    assert seen and seen[-1] == page.url
    return {key: values[0] for key, values in parse_qs(urlsplit(page.url).query).items()}


def test_oidc_client_code_flow_with_pkce_signs_in_on_the_authorize_page(
        server, visit, page, callbacks, discovery, client_app):
    assert discovery["issuer"] == server.base_url
    assert discovery["authorization_endpoint"] == server.url("/login/oauth/authorize")
    assert "S256" in discovery["code_challenge_methods_supported"]
    oauth = _oauth_session(client_app)
    verifier, nonce = generate_token(64), generate_token(20)
    url, state = oauth.create_authorization_url(discovery["authorization_endpoint"], code_verifier=verifier,
                                                nonce=nonce)
    assert "code_challenge=" in url and "code_challenge_method=S256" in url

    visit(url)
    expect(page.get_by_text(f"Sign in to continue to {client_app.app_display_name}")).to_be_visible()
    _sign_in(page, client_app)
    returned = _returned(page, callbacks)
    assert returned["state"] == state and returned["code"]

    token = oauth.fetch_token(discovery["token_endpoint"], authorization_response=page.url,
                              code_verifier=verifier)
    assert token["token_type"] == "Bearer" and token["refresh_token"]

    # the id_token's signature, from the published key set, and its claims
    jwks = requests.get(discovery["jwks_uri"], timeout=10).json()
    decoded = jwt.decode(token["id_token"], KeySet.import_key_set(jwks),
                         algorithms=discovery["id_token_signing_alg_values_supported"])
    jwt.JWTClaimsRegistry(
        iss={"essential": True, "value": server.base_url},
        aud={"essential": True, "value": client_app.client_id},
        nonce={"essential": True, "value": nonce},
        sub={"essential": True},
        exp={"essential": True},
    ).validate(decoded.claims)
    header, _payload, signature = token["id_token"].split(".")
    forged = dict(decoded.claims, sub="someone-else")
    forged_payload = base64.urlsafe_b64encode(json.dumps(forged).encode()).rstrip(b"=").decode()
    with pytest.raises(BadSignatureError):  # the signature covers the claims
        jwt.decode(f"{header}.{forged_payload}.{signature}", KeySet.import_key_set(jwks),
                   algorithms=discovery["id_token_signing_alg_values_supported"])

    info = oauth.get(discovery["userinfo_endpoint"], timeout=10)
    assert info.status_code == 200
    assert info.json()["sub"] == decoded.claims["sub"]
    assert info.json()["preferred_username"] == client_app.username
    assert info.json()["email"] == "carol@example.com"

    refreshed = oauth.refresh_token(discovery["token_endpoint"])
    assert refreshed["access_token"] != token["access_token"]
    assert refreshed["refresh_token"] != token["refresh_token"]
    assert oauth.get(discovery["userinfo_endpoint"], timeout=10).json()["sub"] == decoded.claims["sub"]
    # the code works once
    again = requests.post(discovery["token_endpoint"], timeout=10, auth=(client_app.client_id,
                                                                        client_app.client_secret),
                          data={"grant_type": "authorization_code", "code": returned["code"],
                                "code_verifier": verifier, "redirect_uri": CALLBACK})
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"


def test_wrong_password_shows_the_error_and_does_not_redirect(server, visit, page, context, callbacks,
                                                              client_app):
    url = _authorize_url(server, client_app)
    visit(url)
    _sign_in(page, client_app, password="not-the-password")

    expect(page.locator("#authorize-error")).to_contain_text("remaining chances")
    expect(page.locator("#authorize-submit")).to_be_enabled()
    assert _same_page(page.url, url)
    assert callbacks == []
    assert not [c for c in context.cookies() if c["name"] == "iam_session"]

    # the same page then signs in
    page.fill("#authorize-password", client_app.password)
    page.click("#authorize-submit")
    assert _returned(page, callbacks)["code"]


def test_unregistered_redirect_uri_shows_the_error_and_no_form(server, visit, page, callbacks, client_app):
    visit(server.url("/login/oauth/authorize?" + urlencode({
        "client_id": client_app.client_id, "response_type": "code", "redirect_uri": "https://evil.example/cb",
        "scope": SCOPE, "state": "s"})))

    expect(page.locator("#authorize-error")).to_contain_text(
        "Redirect URI: https://evil.example/cb doesn't exist in the allowed Redirect URI list")
    expect(page.locator("#authorize-username")).to_have_count(0)
    expect(page.locator("#authorize-password")).to_have_count(0)
    expect(page.locator("#authorize-submit")).to_have_count(0)
    assert urlsplit(page.url).path.rstrip("/") == "/login/oauth/authorize"
    assert callbacks == []


def test_unknown_client_shows_the_error(server, visit, page):
    visit("/login/oauth/authorize?client_id=nobody&response_type=code&redirect_uri=" + CALLBACK)
    expect(page.locator("#authorize-error")).to_have_text("Invalid client_id")
    expect(page.locator("#authorize-username")).to_have_count(0)


def test_second_authorize_with_a_session_redirects_straight_back(server, visit, page, callbacks, client_app):
    visit(_authorize_url(server, client_app))
    _sign_in(page, client_app)
    first = _returned(page, callbacks)

    url = _authorize_url(server, client_app, state="second")
    page.goto(url)  # the session cookie is there: no form, straight back with a new code
    second = _returned(page, callbacks)
    assert second["state"] == "second"
    assert second["code"] and second["code"] != first["code"]
    assert len(callbacks) == 2, "\n".join(callbacks)

    # prompt=login asks for the password again
    visit(_authorize_url(server, client_app, prompt="login"))
    expect(page.locator("#authorize-username")).to_be_visible()
    assert len(callbacks) == 2


def _device_start(server, app: Client) -> dict:
    response = requests.post(server.url("/api/device-auth"), data={"client_id": app.client_id, "scope": SCOPE},
                             timeout=10)
    assert response.status_code == 200, response.text
    started = response.json()
    assert started["verification_uri"] == server.url("/login/oauth/device")
    assert started["verification_uri_complete"] == server.url(f"/login/oauth/device?user_code={started['user_code']}")
    return started


def _device_poll(server, app: Client, device_code: str) -> tuple[int, dict]:
    response = requests.post(server.url("/api/login/oauth/access_token"), timeout=10, data={
        "grant_type": DEVICE_GRANT, "client_id": app.client_id, "device_code": device_code})
    return response.status_code, response.json()


@dataclass(frozen=True)
class _Login:
    organization: str
    username: str
    password: str


def test_device_flow_approved_in_a_signed_in_browser(server, visit, page, api_login, client_app):
    started = _device_start(server, client_app)
    assert _device_poll(server, client_app, started["device_code"])[1]["error"] == "authorization_pending"

    api_login(_Login(client_app.organization, client_app.username, client_app.password))
    visit(started["verification_uri_complete"])
    expect(page.locator("#device-code")).to_have_value(started["user_code"])
    page.click("#device-continue")
    expect(page.locator("#device-app")).to_contain_text(client_app.app_display_name)
    expect(page.locator("#device-scope")).to_have_text(SCOPE)
    page.click("#device-approve")
    expect(page.locator("#device-result")).to_have_text("Device approved, you may return to your device")

    status, tokens = _device_poll(server, client_app, started["device_code"])
    assert status == 200, tokens
    assert tokens["access_token"] and tokens["refresh_token"] and tokens["token_type"] == "Bearer"
    info = requests.get(server.url("/api/userinfo"), timeout=10,
                        headers={"Authorization": f"Bearer {tokens['access_token']}"}).json()
    assert info["preferred_username"] == client_app.username
    # the code cannot be used again, from the page or the device
    assert _device_poll(server, client_app, started["device_code"])[1]["error"] == "invalid_grant"
    page.click("#device-again")
    page.fill("#device-code", started["user_code"])
    page.click("#device-continue")
    expect(page.locator("#device-error")).to_have_text("The code is invalid or has expired")


def test_device_flow_denied(server, visit, page, api_login, client_app):
    started = _device_start(server, client_app)
    api_login(_Login(client_app.organization, client_app.username, client_app.password))
    visit("/login/oauth/device")
    expect(page.locator("#device-code")).to_have_value("")
    page.fill("#device-code", started["user_code"].lower().replace("-", ""))  # typed loosely
    page.click("#device-continue")
    expect(page.locator("#device-app")).to_contain_text(client_app.app_display_name)
    page.click("#device-deny")
    expect(page.locator("#device-result")).to_have_text("Device denied")

    status, answer = _device_poll(server, client_app, started["device_code"])
    assert status == 400 and answer["error"] == "access_denied"


def test_device_page_keeps_the_code_through_sign_in(server, visit, page, client_app):
    """An anonymous visitor signs in first, on the sign-in page of the application's
    organization, and comes back with ?user_code= kept."""
    started = _device_start(server, client_app)
    visit(started["verification_uri_complete"])
    expect(page).to_have_url(re.compile(rf"/login/{client_app.organization}/?\?from="))
    page.fill("#login-username", client_app.username)
    page.fill("#login-password", client_app.password)
    page.click("#login-submit")

    expect(page).to_have_url(re.compile(r"/login/oauth/device/?\?user_code=" + started["user_code"] + "$"))
    expect(page.locator("#device-code")).to_have_value(started["user_code"])
    page.click("#device-continue")
    page.click("#device-approve")
    expect(page.locator("#device-result")).to_have_text("Device approved, you may return to your device")
    assert _device_poll(server, client_app, started["device_code"])[0] == 200


def test_approving_a_device_of_another_organization_is_refused(server, visit, page, api_login, accounts,
                                                               client_app):
    started = _device_start(server, client_app)
    api_login(accounts.admin)
    visit(started["verification_uri_complete"])
    page.click("#device-continue")
    page.click("#device-approve")
    expect(page.locator("#device-error")).to_contain_text(
        f"cannot sign in to application {client_app.app_name}")
    expect(page.locator("#device-result")).to_have_count(0)
    assert _device_poll(server, client_app, started["device_code"])[1]["error"] == "authorization_pending"


def test_prompt_none_without_a_session_answers_login_required(server, visit, page, callbacks, client_app):
    page.goto(_authorize_url(server, client_app, prompt="none", state="quiet"))
    returned = _returned(page, callbacks)
    assert returned == {"error": "login_required", "state": "quiet"}


def test_prompted_items_are_asked_before_the_code(server, visit, page, callbacks, client_app, engine):
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Application, User
    from tests.e2e.axe import serious

    with session_scope(engine) as db:
        app = db.exec(select(Application).where(Application.name == client_app.app_name)).one()
        app.signup_items = [{"name": "Phone", "visible": True, "required": True, "prompted": True, "rule": "None"},
                            {"name": "Department", "visible": True, "required": True, "prompted": True,
                             "type": "Input", "label": "Department", "regex": "[A-Z][a-z]+"},
                            {"name": "Display name", "visible": True, "prompted": True}]  # answered already
        db.add(app)
    visit(_authorize_url(server, client_app))
    _sign_in(page, client_app)
    page.wait_for_url(re.compile(rf"/prompt/{client_app.app_name}/?\?"))
    expect(page.locator("#prompt-phone")).to_be_visible()
    expect(page).to_have_title("Complete your profile")
    expect(page.locator("#prompt-display-name")).to_have_count(0)
    assert serious(page) == []
    page.fill("#prompt-phone", "+1 415 555 0142")
    page.fill("#prompt-department", "sales")
    page.click("#prompt-submit")
    expect(page.locator("#prompt-error")).to_contain_text("doesn't match the signup item regex")
    page.fill("#prompt-department", "Sales")
    page.click("#prompt-submit")
    assert _returned(page, callbacks)["code"]
    with session_scope(engine) as db:
        carol = db.exec(select(User).where(User.owner == client_app.organization,
                                           User.name == client_app.username)).one()
        assert (carol.phone, carol.country_code, carol.properties) == ("4155550142", "US", {"Department": "Sales"})
