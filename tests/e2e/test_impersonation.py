"""A global admin acts as a user from the user's page, sees plainly whose console this is,
and comes back to their own."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.steps import as_page


def test_the_admin_impersonates_alice_and_comes_back(visit, page, api_login, accounts):
    alice = accounts.alice
    api_login(accounts.admin)
    visit(f"/users/{alice.organization}/{alice.username}")
    page.click("#impersonate")
    banner = page.locator("#impersonation")
    expect(banner).to_contain_text(f"{alice.organization}/{alice.username}")
    expect(banner).to_contain_text("built-in/admin")
    expect(page.locator("#account-name")).to_have_text(alice.display_name)

    # alice's console: no admin pages
    visit("/organizations")
    expect(page.locator("#impersonation")).to_be_visible()
    expect(page.locator("#account-name")).to_have_text(alice.display_name)

    page.click("#exit-impersonation")
    expect(page.locator("#impersonation")).to_have_count(0)
    expect(page.locator("#account-name")).to_have_text("Admin")


def test_an_organization_admin_is_offered_no_impersonation(visit, page, api_login, accounts):
    api_login(accounts.boss)
    visit(f"/users/{accounts.alice.organization}/{accounts.alice.username}")
    expect(page.locator("#edit-save")).to_be_visible()
    expect(page.locator("#impersonate")).to_have_count(0)


def test_impersonate_follows_the_servers_rule(visit, page, api_login, accounts):
    """Offered for a member of the built-in organization who is no admin, never for a global admin
    (the service's `impersonation.impersonable` decides both)."""
    api_login(accounts.admin)
    created = page.request.post("/api/add-user", data={"owner": "built-in", "name": "plain-member",
                                                       "displayName": "Plain member"}, headers=as_page(page)).json()
    assert created["status"] == "ok", created
    visit("/users/built-in/plain-member")
    expect(page.locator("#impersonate")).to_be_visible()
    visit("/users/built-in/admin")
    expect(page.locator("#edit-save")).to_be_visible()
    expect(page.locator("#impersonate")).to_have_count(0)
