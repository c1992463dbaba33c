"""axe-core over the console's pages beside the generated screen walk (which checks
every screen's list and its edit page in add mode, test_resource_screens.py): the
dashboard, apps, the account, edit pages of records with everything filled (the
built-in organization and its admin, an LDAP server), the group tree, MFA setup, System Info,
sign-in and the error pages. None may have a critical or serious WCAG 2 A/AA violation.
The MFA steps and the second step of sign-in are checked in test_forms.py; toasts and a menu's
trigger while they are shown here."""

from __future__ import annotations

import json
import os
import re

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious, shown_toasts

# a page is measured once it shows this element
SIGNED_IN_PAGES = {
    "/": "#dashboard-chart",
    "/organizations/built-in": "#field-displayName",
    "/users/built-in/admin": "#field-displayName",
    "/ldap/acme/a11y-ldap": "#field-serverName",
    "/apps": "#shell-header",
    "/account": "#field-displayName",
    "/shortcuts": "#shell-header",
    "/trees/built-in": "#shell-header",
    "/organizations/built-in/users": "#list-table",
    "/mfa/setup?mfaType=app": "#shell-header",
    "/sysinfo": "#sysinfo-latency",
}
SIGNED_OUT_PAGES = {
    "/login": "#login-username",
    "/login/built-in": "#login-username",
    "/login/oauth/device": "body",
    "/404": "body",
    "/403": "body",
}


def report(path: str, found: list[str]) -> None:
    """With A11Y_REPORT=<file>: one JSON line per measured page (the counts in docs and reports)."""
    target = os.environ.get("A11Y_REPORT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"page": path, "violations": len(found), "found": found}) + "\n")


@pytest.fixture(scope="module")
def ldap_server(server):
    """An LDAP server of acme to open (never connected to: its page is only looked at)."""
    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import Ldap

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            if db.exec(select(Ldap).where(Ldap.owner == "acme", Ldap.name == "a11y-ldap")).first() is None:
                db.add(Ldap(owner="acme", name="a11y-ldap", server_name="Directory", host="127.0.0.1",
                            base_dn="dc=example,dc=org", username="cn=admin,dc=example,dc=org"))
                db.commit()
    finally:
        engine.dispose()


@pytest.mark.parametrize("path", list(SIGNED_IN_PAGES))
def test_signed_in_pages_have_no_serious_violations(path, visit, page, api_login, accounts, ldap_server):
    api_login(accounts.admin)
    visit(path)
    expect(page.locator(SIGNED_IN_PAGES[path]).first).to_be_visible()
    page.wait_for_timeout(300)  # the page's own load events settle
    found = serious(page)
    report(path, found)
    assert found == []


@pytest.mark.parametrize("path", list(SIGNED_OUT_PAGES))
def test_signed_out_pages_have_no_serious_violations(path, visit, page):
    visit(path)
    expect(page.locator(SIGNED_OUT_PAGES[path]).first).to_be_visible()
    page.wait_for_timeout(300)
    found = serious(page)
    report(path, found)
    assert found == []


@pytest.mark.parametrize("path", ["/", "/organizations", "/organizations/built-in", "/users/built-in/admin"])
def test_the_dark_theme_has_no_serious_violations(path, visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit(path)
    page.click("#theme-menu")
    page.click("#theme-dark")
    expect(page.locator("html.dark")).to_have_count(1)
    page.wait_for_timeout(300)
    found = serious(page)
    report(f"{path} (dark)", found)
    assert found == []


def test_toasts_and_a_menu_trigger_while_shown(visit, page, api_login, accounts):
    """A success and an error toast are checked while on screen, and a menu's trigger hovered and
    focused (their colours once read 4.25:1)."""
    api_login(accounts.admin)
    visit("/roles")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/roles/built-in/role_\w+\?mode=add"))
    expect(page.locator("[data-sonner-toast]").filter(has_text="Successfully added")).to_be_visible()
    assert shown_toasts(page) == []
    page.locator("[data-sonner-toast]").first.wait_for(state="detached", timeout=15_000)
    page.fill("#field-name", "")
    page.click("#edit-save")
    expect(page.locator("[data-sonner-toast]").filter(has_text="Failed to save")).to_be_visible()
    assert shown_toasts(page) == []
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/roles$"))
    # the menu's trigger once the menu closed: focused, the pointer still on it (an open menu hides
    # the rest of the page from assistive technology: axe reads the page without it)
    page.click("#user-menu")
    expect(page.get_by_role("menu")).to_be_visible()
    page.keyboard.press("Escape")
    expect(page.locator("#user-menu")).to_be_focused()
    assert serious(page) == []
