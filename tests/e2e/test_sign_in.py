"""Sign-in, the route guard, the session cookie and sign-out."""

from __future__ import annotations

import json
import re
import urllib.request
from urllib.parse import parse_qs, urlsplit

from playwright.sync_api import expect

SESSION_COOKIE = "iam_session"
LOGIN_WITH_FROM = re.compile(r"/login/?\?from=")


def _fill_login(page, account) -> None:
    page.fill("#login-username", account.username)
    page.fill("#login-password", account.password)


def _session_cookie(context) -> dict | None:
    return next((c for c in context.cookies() if c["name"] == SESSION_COOKIE), None)


def _from_parameter(url: str) -> list[str]:
    return parse_qs(urlsplit(url).query).get("from", [])


def test_anonymous_visitor_is_sent_to_login_remembering_the_path(visit, page):
    visit("/?tab=x")

    expect(page).to_have_url(LOGIN_WITH_FROM)
    assert _from_parameter(page.url) == ["/?tab=x"]
    expect(page.locator("#login-username")).to_be_visible()
    expect(page.locator("#shell-header")).to_have_count(0)


def test_sign_in_returns_to_the_remembered_path(visit, page, server, accounts):
    visit("/?tab=x")
    expect(page).to_have_url(LOGIN_WITH_FROM)
    assert _from_parameter(page.url) == ["/?tab=x"]

    _fill_login(page, accounts.admin)
    page.click("#login-submit")

    expect(page.locator("#welcome")).to_be_visible()
    expect(page).to_have_url(server.url("/?tab=x"))


def test_signed_in_visitor_of_the_login_page_goes_on(visit, page, server, api_login, accounts):
    api_login(accounts.admin)
    visit("/login?from=%2F%3Ftab%3Dy")

    expect(page).to_have_url(server.url("/?tab=y"))
    expect(page.locator("#welcome")).to_contain_text("Admin")


def test_admin_signs_in_and_sees_the_shell(visit, page, server, accounts):
    visit("/login")
    _fill_login(page, accounts.admin)
    page.click("#login-submit")

    expect(page.locator("#shell-header")).to_be_visible()
    expect(page).to_have_url(server.url("/"))
    expect(page.locator("#welcome")).to_contain_text("Welcome, Admin")
    expect(page.locator("#role-badge")).to_have_text("Global administrator")
    expect(page.locator("#organization-selector")).to_be_visible()
    expect(page.locator("#menu-group-home")).to_be_visible()
    expect(page.locator("#account-name")).to_have_text("Admin")


def test_wrong_password_shows_the_error_and_sets_no_cookie(visit, page, context, accounts):
    visit("/login")
    page.fill("#login-username", accounts.admin.username)
    page.fill("#login-password", "not-the-password")
    page.click("#login-submit")

    expect(page.locator("#login-error")).to_contain_text("remaining chances")
    assert urlsplit(page.url).path.rstrip("/") == "/login"
    expect(page.locator("#login-username")).to_be_visible()
    assert _session_cookie(context) is None
    # the failure cleared the busy state: the button can be used again
    expect(page.locator("#login-submit")).to_be_enabled()
    expect(page.locator("#login-submit")).to_have_text("Sign in")


def test_session_cookie_is_http_only(visit, page, context, accounts):
    visit("/login")
    _fill_login(page, accounts.admin)
    page.click("#login-submit")
    expect(page.locator("#welcome")).to_be_visible()

    cookie = _session_cookie(context)
    assert cookie is not None, context.cookies()
    assert cookie["httpOnly"] is True
    assert cookie["sameSite"] == "Lax"
    assert cookie["path"] == "/"
    assert SESSION_COOKIE not in page.evaluate("document.cookie")


def test_sign_in_with_the_enter_key(visit, page, server, accounts):
    visit("/login")
    _fill_login(page, accounts.admin)
    page.press("#login-password", "Enter")

    expect(page.locator("#welcome")).to_contain_text("Admin")
    expect(page).to_have_url(server.url("/"))


def _account_behind(server, token: str) -> dict:
    request = urllib.request.Request(server.url("/api/get-account"), headers={"Cookie": f"{SESSION_COOKIE}={token}"})
    with urllib.request.urlopen(request, timeout=10) as response:
        return json.load(response)


def test_admin_signs_out(visit, page, context, server, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    expect(page.locator("#welcome")).to_be_visible()
    token = _session_cookie(context)["value"]
    assert _account_behind(server, token)["status"] == "ok"

    page.click("#user-menu")
    page.click("#logout")

    expect(page.get_by_text("Logged out successfully")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login(\?|$)"))
    expect(page.locator("#login-username")).to_be_visible()
    expect(page.locator("#shell-header")).to_have_count(0)
    assert _session_cookie(context) is None
    # the server ended the session: the old token no longer opens it
    assert _account_behind(server, token)["status"] == "error"

    visit("/")
    expect(page).to_have_url(LOGIN_WITH_FROM)
    expect(page.locator("#login-username")).to_be_visible()
    expect(page.locator("#welcome")).to_have_count(0)


def test_organization_admin_signs_in_at_the_organization_login(visit, page, server, accounts):
    visit("/login/acme")
    expect(page.locator("#login-organization")).to_contain_text("acme")
    _fill_login(page, accounts.boss)
    page.click("#login-submit")

    expect(page.locator("#welcome")).to_contain_text("Acme Boss")
    expect(page).to_have_url(server.url("/"))
    expect(page.locator("#role-badge")).to_have_text("Organization administrator")
    expect(page.locator("#menu-group-home")).to_be_visible()
    expect(page.locator("#organization-selector")).to_have_count(0)

    page.click("#menu-group-home")
    expect(page.locator("#menu-item-")).to_have_text("Dashboard")


def test_ordinary_user_sees_only_permissions_and_signs_out_to_the_organization_login(visit, page, api_login,
                                                                                    accounts):
    api_login(accounts.alice)
    visit("/")

    expect(page.locator("#welcome")).to_contain_text("Alice Liddell")
    expect(page.locator("#role-badge")).to_have_text("User")
    expect(page.locator("#user-menu")).to_be_visible()
    expect(page.locator("#menu-group-home")).to_have_count(0)
    # their permission requests are the one built-in entry they get; an installed extension may open
    # entries of its own to everyone (the tickets extension's Tickets, in the Admin group)
    from iam_console.core.navigation import menu

    open_to_everyone = [group for group in menu() if any(item.seen_by == "everyone" for item in group.items)]
    expect(page.locator("[id^='menu-group']")).to_have_count(len(open_to_everyone))
    page.click("#menu-group-auth")
    expect(page.locator("[id^='menu-item']")).to_have_count(1)
    expect(page.locator("#menu-item-permissions")).to_have_text("Permissions")
    page.keyboard.press("Escape")
    expect(page.locator("#organization-selector")).to_have_count(0)

    page.click("#user-menu")
    page.click("#logout")

    expect(page.get_by_text("Logged out successfully")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login/acme$"))
    expect(page.locator("#login-organization")).to_contain_text("acme")
    expect(page.locator("#login-username")).to_be_visible()
