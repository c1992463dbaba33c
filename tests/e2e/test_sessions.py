"""The sessions list: one row per user and application with its sign-ins' ids; Delete ends
those sign-ins at once: the cookies that carried them stop working."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from tests.e2e.conftest import TRACK_SOCKET, Visitor


def test_deleting_a_session_ends_its_sign_ins(browser, server, visit, page, api_login, accounts):
    # alice signs in in a browser of her own
    hers = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800})
    hers.set_default_timeout(15_000)
    hers.add_init_script(TRACK_SOCKET)
    try:
        alice = hers.new_page()
        signed = alice.request.post("/api/login", data={
            "application": "", "organization": "acme", "username": "alice", "password": accounts.alice.password,
            "autoSignin": True, "type": "login", "signinMethod": "Password"}).json()
        assert signed["status"] == "ok", signed
        Visitor(alice)("/account")
        expect(alice.locator("#field-name")).to_have_value("alice")
        assert alice.request.get("/api/get-account").json()["status"] == "ok"

        api_login(accounts.admin)
        visit("/sessions")
        page.click("#search-field")
        page.get_by_role("option", name="Name", exact=True).click()
        page.fill("#search-value", "alice")
        row = page.locator("#list-table tbody tr").filter(has=page.get_by_role("link", name="alice", exact=True))
        expect(row.first).to_be_visible()
        expect(row.first.get_by_role("link", name="acme", exact=True)).to_have_attribute("href", "/organizations/acme")
        expect(row.first.locator("td").nth(4)).to_have_text(re.compile(r"[0-9a-f]{32}"))
        count = row.count()
        for _ in range(count):  # every application she signed in to
            row.first.get_by_role("button", name="Delete").click()
            expect(page.locator("#delete-question")).to_have_text("Sure to delete: alice ?")
            page.click("#delete-confirm")
            expect(page.get_by_text("Successfully deleted").first).to_be_visible()
        expect(row).to_have_count(0)

        # her cookie works no more: the API asks her to sign in, and so does the console
        assert alice.request.get("/api/get-account").json()["msg"] == "Please login first"
        alice.goto("/account")
        alice.wait_for_url(re.compile(r"/login"))
    finally:
        hers.close()
    # the admin's own session is untouched
    assert page.request.get("/api/get-account").json()["status"] == "ok"
