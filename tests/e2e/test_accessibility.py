"""axe-core over the console's pages that are not a screen's list or edit page
(those are checked by the generated screen walk, test_resource_screens.py):
no critical or serious WCAG 2 A/AA violation on any of them."""

from __future__ import annotations

import json
import os

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious

# a page is measured once it shows this element
SIGNED_IN_PAGES = {
    "/": "#dashboard-chart",
    "/organizations": "#list-table",
    "/organizations/built-in": "#field-displayName",
    "/users": "#list-table",
    "/users/built-in/admin": "#field-displayName",
    "/groups": "#list-table",
    "/invitations": "#list-table",
    "/apps": "#shell-header",
    "/account": "#field-displayName",
    "/shortcuts": "#shell-header",
    "/trees/built-in": "#shell-header",
    "/organizations/built-in/users": "#list-table",
    "/mfa/setup?mfaType=app": "#shell-header",
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


@pytest.mark.parametrize("path", list(SIGNED_IN_PAGES))
def test_signed_in_pages_have_no_serious_violations(path, visit, page, api_login, accounts):
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
