"""Multi-factor authentication in the browser: a user
enables TOTP with a code computed (pyotp) from the secret the page shows, signs out, signs
in needing the code (a wrong one refused), and a recovery code works once; the OAuth
authorize page asks for the code too; an organization that requires MFA sends its users
to the setup page, one that prompts offers 'Later' and 'Go to enable'; an admin enables
email for another user but cannot set anything up for them."""

from __future__ import annotations

import re
import secrets
import time
import uuid

import pyotp
import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import Account
from tests.e2e.steps import server_db

PASSWORD = "Mfa-e2e-pass-1"
CALLBACK = "http://127.0.0.1:9/mfa-callback"


def _new_user(server, organization: str = "acme", **fields) -> Account:
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    name = f"mfa{uuid.uuid4().hex[:8]}"
    with server_db(server) as db:
        db.add(User(owner=organization, name=name, uuid=str(uuid.uuid4()), type="normal-user", display_name=name,
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id",
                    signup_application="app-built-in", **fields))
    return Account(organization, name, PASSWORD, name)


def _new_org(server, rule: str, method: str = "App") -> str:
    from iam_console.models import Organization

    name = f"mfaorg{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            languages=["en"], nav_items=["all"], mfa_items=[{"name": method, "rule": rule}]))
    return name


def _sign_in_form(visit, page, account: Account):
    visit(f"/login/{account.organization}")
    page.fill("#login-username", account.username)
    page.fill("#login-password", account.password)
    page.click("#login-submit")


def _sign_out(page):
    page.click("#user-menu")
    page.click("#logout")
    expect(page.locator("#login-username")).to_be_visible()


def _later_code(secret: str) -> str:
    """The next time step's code: the current one may have been spent already."""
    return pyotp.TOTP(secret).at(time.time() + 30)


def test_enable_totp_sign_in_with_the_code_and_a_recovery_code_once(server, visit, page):
    account = _new_user(server)
    _sign_in_form(visit, page, account)
    expect(page.locator("#account-name")).to_be_visible()

    visit("/mfa/setup?mfaType=app")
    expect(page.locator("#mfa-qr")).to_be_visible()
    secret = page.locator("#mfa-secret").inner_text().strip()
    assert re.fullmatch(r"[A-Z2-7]{32}", secret), secret
    page.fill("#mfa-passcode", "000000")
    page.click("#mfa-verify")
    expect(page.get_by_text("The passcode is incorrect")).to_be_visible()
    page.fill("#mfa-passcode", pyotp.TOTP(secret).now())
    page.click("#mfa-verify")
    recovery = page.locator("#mfa-recovery-code").inner_text().strip()
    assert re.fullmatch(r"[0-9a-f-]{36}", recovery), recovery
    page.click("#mfa-enable")  # 'Enabled successfully', and a full load of /account
    expect(page).to_have_url(re.compile(r"/account/?$"))
    expect(page.locator("#mfa-enabled-app")).to_be_visible()
    expect(page.locator("#mfa-preferred-app")).to_be_visible()

    # sign out, sign in: the password is not enough
    _sign_out(page)
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-passcode")).to_be_visible()
    expect(page.locator("#account-name")).to_have_count(0)
    page.fill("#login-passcode", "000000")
    page.click("#login-mfa-submit")
    expect(page.locator("#login-mfa-error")).to_contain_text("password or code is incorrect")
    page.fill("#login-passcode", _later_code(secret))
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)

    # a recovery code signs in once
    _sign_out(page)
    _sign_in_form(visit, page, account)
    page.click("#login-mfa-recovery")
    page.fill("#login-passcode", recovery)
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)
    _sign_out(page)
    _sign_in_form(visit, page, account)
    page.click("#login-mfa-recovery")
    page.fill("#login-passcode", recovery)
    page.click("#login-mfa-submit")
    expect(page.locator("#login-mfa-error")).to_be_visible()
    expect(page.locator("#account-name")).to_have_count(0)


def _client_app(server, organization: str = "acme") -> str:
    """An application of the organization with a registered callback: its client id."""
    from iam_console.models import Application

    client_id = secrets.token_hex(10)
    with server_db(server) as db:
        db.add(Application(owner="admin", name=f"app-mfa-{uuid.uuid4().hex[:6]}", display_name="MFA client",
                           organization=organization, cert="cert-built-in", client_id=client_id,
                           client_secret=secrets.token_hex(20), redirect_uris=[CALLBACK],
                           grant_types=["authorization_code"], enable_password=True))
    return client_id


def _authorize_url(client_id: str) -> str:
    return (f"/login/oauth/authorize?client_id={client_id}&response_type=code&redirect_uri={CALLBACK}"
            "&scope=openid&state=st-mfa")


@pytest.fixture
def mfa_client(server):
    return _client_app(server)


def test_the_authorize_page_asks_for_the_code(server, visit, page, context, mfa_client):
    secret = pyotp.random_base32()
    account = _new_user(server, totp_secret=secret, preferred_mfa_type="app")
    seen: list[str] = []
    context.route(re.compile(r"^http://127\.0\.0\.1:9/"), lambda route: (
        seen.append(route.request.url), route.fulfill(status=200, content_type="text/html", body="<p>client</p>")))
    visit(_authorize_url(mfa_client))
    page.fill("#authorize-username", account.username)
    page.fill("#authorize-password", account.password)
    page.click("#authorize-submit")
    expect(page.locator("#authorize-passcode")).to_be_visible()
    assert not seen
    page.fill("#authorize-passcode", "123456" if pyotp.TOTP(secret).now() != "123456" else "654321")
    page.click("#authorize-mfa-submit")
    expect(page.locator("#authorize-mfa-error")).to_be_visible()
    page.fill("#authorize-passcode", pyotp.TOTP(secret).now())
    page.click("#authorize-mfa-submit")
    expect(page).to_have_url(re.compile(r"^http://127\.0\.0\.1:9/mfa-callback\?code=[^&]+&state=st-mfa$"))


def test_required_mfa_sends_the_user_to_the_setup_page(server, visit, page, api_login):
    account = _new_user(server, _new_org(server, "Required"))
    api_login(account)
    visit("/apps")
    expect(page).to_have_url(re.compile(r"/mfa/setup\?mfaType=app$"))
    expect(page.locator("#mfa-required")).to_be_visible()
    expect(page.locator("#mfa-secret")).to_have_text(re.compile(r"^[A-Z2-7]{32}$"))
    first = page.locator("#mfa-secret").inner_text()
    page.click("#user-menu")
    expect(page.locator("#logout")).to_be_visible()
    expect(page.locator("#my-account")).to_have_count(0)  # hidden while setup is required
    page.keyboard.press("Escape")
    visit("/account")
    expect(page).to_have_url(re.compile(r"/mfa/setup\?mfaType=app$"))
    expect(page.locator("#mfa-secret")).not_to_have_text(first)  # each visit starts a new setup
    # once a method is enabled, the console opens up
    secret = page.locator("#mfa-secret").inner_text().strip()
    page.fill("#mfa-passcode", pyotp.TOTP(secret).now())
    page.click("#mfa-verify")
    page.click("#mfa-enable")
    expect(page).to_have_url(re.compile(r"/account/?$"))
    expect(page.locator("#mfa-required")).to_have_count(0)


def test_prompted_mfa_offers_later_or_go_to_enable(server, visit, page, api_login):
    account = _new_user(server, _new_org(server, "Prompt"))
    api_login(account)
    visit("/apps")
    expect(page.locator("#mfa-prompt")).to_be_visible()
    page.click("#mfa-go")
    expect(page).to_have_url(re.compile(r"/mfa/setup\?mfaType=app$"))
    expect(page.locator("#mfa-secret")).to_be_visible()
    expect(page.locator("#mfa-prompt")).to_have_count(0)
    visit("/apps")
    expect(page.locator("#mfa-prompt")).to_be_visible()
    page.click("#mfa-later")
    expect(page.locator("#mfa-prompt")).to_have_count(0)
    visit("/apps")  # 'Later' holds for this tab
    expect(page.locator("#welcome")).to_be_visible()
    expect(page.locator("#mfa-prompt")).to_have_count(0)


def test_an_admin_enables_email_for_another_user_but_sets_nothing_up(server, visit, page, api_login, accounts):
    bare = _new_user(server)
    account = _new_user(server, email=f"{uuid.uuid4().hex[:8]}@acme.test")
    api_login(accounts.boss)
    visit(f"/users/acme/{bare.username}")
    expect(page.locator("#mfa-methods")).to_be_visible()
    expect(page.locator("#mfa-setup-app")).to_have_count(0)
    expect(page.locator("#mfa-enable-app")).to_have_count(0)
    page.click("#mfa-enable-email")
    expect(page.get_by_text("Failed to enable: Please input your Email!")).to_be_visible()

    visit(f"/users/acme/{account.username}")
    page.click("#mfa-enable-email")
    expect(page.get_by_text("Enabled successfully")).to_be_visible()
    expect(page.locator("#mfa-enabled-email")).to_be_visible()
    expect(page.locator("#mfa-preferred-email")).to_be_visible()
    page.click("#mfa-disable")
    page.click("#mfa-disable-confirm")
    expect(page.locator("#mfa-enabled-email")).to_have_count(0)
    expect(page.locator("#mfa-enable-email")).to_be_visible()


def test_an_ordinary_user_sets_up_only_their_own(server, visit, page, api_login):
    account = _new_user(server)
    api_login(account)
    visit("/account")
    expect(page.locator("#mfa-setup-app")).to_be_visible()
    expect(page.locator("#mfa-enable-email")).to_have_count(0)
    expect(page.locator("#mfa-disable")).to_have_count(0)
    page.click("#mfa-setup-sms")
    expect(page).to_have_url(re.compile(r"/mfa/setup\?mfaType=sms$"))
    expect(page.locator("#mfa-error")).to_contain_text("Failed to initiate MFA: Please input your phone number!")


def test_required_mfa_holds_back_an_application_until_it_is_set_up(server, visit, page, context):
    organization = _new_org(server, "Required")
    account, client_id = _new_user(server, organization), _client_app(server, organization)
    context.route(re.compile(r"^http://127\.0\.0\.1:9/"), lambda route: route.fulfill(
        status=200, content_type="text/html", body="<p>client</p>"))
    visit(_authorize_url(client_id))
    page.fill("#authorize-username", account.username)
    page.fill("#authorize-password", account.password)
    page.click("#authorize-submit")
    expect(page).to_have_url(re.compile(r"/mfa/setup/?\?mfaType=app&from="))
    expect(page.locator("#mfa-secret")).to_have_text(re.compile(r"^[A-Z2-7]{32}$"))
    secret = page.locator("#mfa-secret").inner_text().strip()
    page.fill("#mfa-passcode", pyotp.TOTP(secret).now())
    page.click("#mfa-verify")
    page.click("#mfa-enable")
    # back on the authorize page, signed in: the code goes to the application
    expect(page).to_have_url(re.compile(r"^http://127\.0\.0\.1:9/mfa-callback\?code=[^&]+&state=st-mfa$"))
