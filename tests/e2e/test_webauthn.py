"""WebAuthn in the browser, with Chromium's virtual authenticator (CDP WebAuthn domain:
CTAP2, internal transport, resident keys, user verification that succeeds): register on
/account, see it listed, sign out, sign in with it on the login page and on the OAuth
authorize page, delete it; an admin sees another user's list read-only; an application
that does not allow WebAuthn shows no button."""

from __future__ import annotations

import re
import secrets
import uuid
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Account
from tests.e2e.steps import as_page

PASSWORD = "E2e-webauthn-pass-1"
CALLBACK = "http://127.0.0.1:9/callback"  # nothing listens: Playwright answers the navigation
WEBAUTHN = {"name": "WebAuthn", "displayName": "WebAuthn", "rule": "None"}
PASSWORD_ONLY = [{"name": "Password", "displayName": "Password", "rule": "All"}]
NO_PASSKEY = "No passkey of this account was found on this device, or the sign-in was cancelled"


@pytest.fixture
def world(engine):
    """A fresh organization with an ordinary user dora and an OAuth application allowing WebAuthn."""
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    org, app = f"wa-{uuid.uuid4().hex[:8]}", f"wa-app-{uuid.uuid4().hex[:8]}"
    client_id = secrets.token_hex(10)
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=org, display_name="WebAuthn Org", password_type="argon2id",
                            languages=["en", "zh"], password_options=["AtLeast6"]))
        db.add(User(owner=org, name="dora", uuid=str(uuid.uuid4()), type="normal-user", display_name="Dora",
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id",
                    signup_application="app-built-in"))
        db.add(Application(owner="admin", name=app, display_name="Key Prints", organization=org,
                           cert="cert-built-in", client_id=client_id, client_secret=secrets.token_hex(20),
                           redirect_uris=[CALLBACK], grant_types=["authorization_code"], enable_password=True,
                           signin_methods=[*PASSWORD_ONLY, WEBAUTHN], token_format="JWT", expire_in_hours=1))
    return {"org": org, "app": app, "client_id": client_id, "dora": Account(org, "dora", PASSWORD, "Dora")}


@pytest.fixture
def authenticator(context, page):
    """A platform authenticator in this page's browser; returns the CDP session and its id."""
    cdp = context.new_cdp_session(page)
    cdp.send("WebAuthn.enable")
    added = cdp.send("WebAuthn.addVirtualAuthenticator", {"options": {
        "protocol": "ctap2", "transport": "internal", "hasResidentKey": True, "hasUserVerification": True,
        "isUserVerified": True, "automaticPresenceSimulation": True}})
    return cdp, added["authenticatorId"]


def _register(visit, page, name: str) -> None:
    visit("/account")
    expect(page.locator("#webauthn-section")).to_be_visible()
    page.fill("#webauthn-new-name", name)
    page.click("#webauthn-add")
    expect(page.get_by_text("Successfully added webauthn credentials")).to_be_visible()
    expect(page.locator(".webauthn-row .webauthn-name", has_text=name)).to_be_visible()


def _sign_out(page, context) -> None:
    assert page.request.post("/api/logout", headers=as_page(page)).json()["status"] == "ok"
    context.clear_cookies()


def _set_methods(engine, org: str, methods: list[dict]) -> None:
    """The organization's default application: a new one with these signin methods."""
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Application, Organization

    name = f"wa-default-{uuid.uuid4().hex[:8]}"
    with session_scope(engine) as db:
        db.add(Application(owner="admin", name=name, organization=org, cert="cert-built-in", enable_password=True,
                           signin_methods=methods, client_id=secrets.token_hex(10)))
        row = db.exec(select(Organization).where(Organization.name == org)).one()
        row.default_application = name
        db.add(row)


def test_register_sign_in_with_it_and_delete_it(visit, page, context, server, world, authenticator, api_login):
    cdp, authenticator_id = authenticator
    api_login(world["dora"])
    _register(visit, page, "Laptop key")
    [credential] = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})["credentials"]
    assert credential["rpId"] == "localhost" and credential["isResidentCredential"]

    _sign_out(page, context)
    visit(f"/login/{world['org']}")
    page.fill("#login-username", "dora")
    page.click("#login-webauthn")
    expect(page.locator("#shell-header")).to_be_visible()
    expect(page.locator("#account-name")).to_have_text("Dora")
    assert any(c["name"] == "iam_session" for c in context.cookies())
    signed = cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator_id})["credentials"][0]
    assert signed["signCount"] > credential["signCount"]

    visit("/account")
    expect(page.locator(".webauthn-row")).to_have_count(1)
    page.click(".webauthn-delete")
    expect(page.locator("#webauthn-delete-question")).to_contain_text("Laptop key")
    page.click("#webauthn-delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(page.locator(".webauthn-row")).to_have_count(0)

    # the deleted credential signs nobody in any more
    _sign_out(page, context)
    visit(f"/login/{world['org']}")
    page.fill("#login-username", "dora")
    page.click("#login-webauthn")
    expect(page.locator("#login-error")).to_have_text(NO_PASSKEY)


def test_sign_in_with_webauthn_on_the_authorize_page(visit, page, context, world, authenticator, api_login):
    def arrived(route) -> None:
        route.fulfill(status=200, content_type="text/html", body="<p id='callback'>the client</p>")

    context.route(re.compile(r"^http://127\.0\.0\.1:9/"), arrived)
    api_login(world["dora"])
    _register(visit, page, "Phone")
    _sign_out(page, context)
    state = secrets.token_urlsafe(8)
    visit("/login/oauth/authorize?" + urlencode({"client_id": world["client_id"], "response_type": "code",
                                                 "redirect_uri": CALLBACK, "scope": "openid", "state": state}))
    expect(page.locator("#authorize-app")).to_have_text("Key Prints")
    page.fill("#authorize-username", "dora")
    page.click("#authorize-webauthn")
    expect(page.locator("#callback")).to_be_visible()
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == [state] and query["code"][0]


def test_unknown_user_and_no_authenticator_are_refused(visit, page, world, authenticator, api_login, context):
    visit(f"/login/{world['org']}")
    page.fill("#login-username", "nobody")
    page.click("#login-webauthn")
    # answered as an account without a credential on this device (no answer tells them apart)
    expect(page.locator("#login-error")).to_have_text(NO_PASSKEY)
    # a credential the server knows, on an authenticator this browser no longer has
    cdp, authenticator_id = authenticator
    api_login(world["dora"])
    _register(visit, page, "Lost key")
    _sign_out(page, context)
    cdp.send("WebAuthn.clearCredentials", {"authenticatorId": authenticator_id})
    visit(f"/login/{world['org']}")
    page.fill("#login-username", "dora")
    page.click("#login-webauthn")
    expect(page.locator("#login-error")).to_be_visible()
    expect(page.locator("#shell-header")).to_have_count(0)


def test_no_button_where_the_application_does_not_allow_webauthn(visit, page, engine, world):
    visit(f"/login/{world['org']}")
    expect(page.locator("#login-webauthn")).to_be_visible()  # app-built-in lists WebAuthn
    _set_methods(engine, world["org"], PASSWORD_ONLY)
    visit(f"/login/{world['org']}")
    expect(page.locator("#login-submit")).to_be_visible()
    expect(page.locator("#login-webauthn")).to_have_count(0)


def test_an_admin_sees_another_users_credentials_read_only(visit, page, engine, world, api_login, accounts):
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import User

    with session_scope(engine) as db:
        dora = db.exec(select(User).where(User.owner == world["org"], User.name == "dora")).one()
        dora.webauthn_credentials = [{"ID": "a2V5LW9mLWRvcmE=", "PublicKey": "", "Name": "Dora's key",
                                      "CreatedTime": "2026-11-22T08:00:00+00:00"}]
        db.add(dora)
    api_login(accounts.admin)
    visit(f"/users/{world['org']}/dora")
    expect(page.locator(".webauthn-row .webauthn-name")).to_have_text("Dora's key")
    expect(page.locator(".webauthn-row")).to_contain_text("2026-11-22 08:00:00")
    expect(page.locator("#webauthn-add")).to_have_count(0)
    expect(page.locator(".webauthn-delete")).to_have_count(0)
    # and on their own account the admin may add
    visit("/account")
    expect(page.locator("#webauthn-add")).to_be_visible()
