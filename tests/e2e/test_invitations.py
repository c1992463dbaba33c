"""Invitations in the browser: add, edit, rename, a failed save reverting the name,
delete with its confirmation; the code copied into the default code as it is
typed; 'Copy signup page URL' (read back from the clipboard); the organization
field for an organization admin, a global admin and an invitation made for a plan."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.e2e.steps import as_page, pick


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _choose(page, field: str, option: str) -> None:
    page.click(f"#field-{field}")
    page.get_by_role("option", name=option, exact=True).click()


def _add(page, owner: str, name: str, **fields) -> None:
    body = {"owner": owner, "name": name, "displayName": name, "code": f"code{name[-6:]}", "quota": 1,
            "application": "All", "state": "Active", **fields}
    answer = page.request.post("/api/add-invitation", data=body, headers=as_page(page)).json()
    assert answer["status"] == "ok", answer


def test_add_edit_rename_fail_copy_and_delete_an_invitation(visit, page, context, api_login, accounts, server):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    api_login(accounts.admin)
    visit("/invitations")
    expect(page.locator("#list-table")).to_be_visible()

    page.click("#list-add")
    page.wait_for_url(re.compile(r"/invitations/built-in/invitation_\w+\?mode=add"))
    name = page.url.split("/invitations/built-in/")[1].split("?")[0]
    expect(page.locator("#field-displayName")).to_have_value(re.compile(r"New Invitation - "))
    expect(page.locator("#field-quota")).to_have_value("1")
    expect(page.locator("#field-usedCount")).to_have_value("0")
    expect(page.locator("#field-application")).to_have_text("All")
    expect(page.locator("#field-signupGroup")).to_have_text("Default")
    expect(page.locator("#field-state")).to_have_text("Active")
    expect(page.locator("#field-code")).to_have_value(re.compile(r"^[A-Za-z0-9]{10}$"))

    # letters and digits: the default code follows; anything else leaves it
    page.fill("#field-code", "Welcome2026")
    expect(page.locator("#field-defaultCode")).to_have_value("Welcome2026")
    page.fill("#field-code", "Welcome-.*")
    expect(page.locator("#field-defaultCode")).to_have_value("Welcome2026")
    page.fill("#field-code", "Welcome2026")

    # the signup link of the built-in organization goes through app-built-in
    page.click("#invitation-copy-url")
    expect(page.get_by_text("Copied to clipboard successfully")).to_be_visible()
    copied = page.evaluate("navigator.clipboard.readText()")
    assert copied == f"{server.base_url}/signup/app-built-in?invitationCode=Welcome2026"

    pick(page, "application", "app-built-in")
    _choose(page, "state", "Suspended")
    page.fill("#field-quota", "5")
    page.fill("#field-usedCount", "2")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-cancel")).to_have_count(0)

    renamed = f"inv-{uuid.uuid4().hex[:6]}"
    page.fill("#field-name", renamed)
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/invitations/built-in/{renamed}$"))
    expect(page.locator("#field-application")).to_have_text("app-built-in")
    expect(page.locator("#field-state")).to_have_text("Suspended")
    expect(page.get_by_text("Successfully saved")).to_have_count(0, timeout=15_000)  # the saves have settled

    # a failed save puts the saved name back: used count above the quota
    page.fill("#field-name", f"{renamed}-x")
    page.fill("#field-usedCount", "9")
    page.click("#edit-save")
    expect(page.get_by_text("Failed to save: The used count must be between 0 and 5")).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(renamed)

    page.fill("#field-usedCount", "2")
    page.click("#edit-save-exit")
    page.wait_for_url(re.compile(r"/invitations$"))
    page.fill("#search-value", renamed)
    row = _row(page, renamed)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Welcome2026")
    expect(row).to_contain_text("Suspended")
    row.get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {renamed} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, renamed)).to_have_count(0)
    assert name  # the generated name was replaced by the rename


def test_the_organization_field_and_the_missing_default_application(visit, page, api_login, accounts):
    api_login(accounts.boss)
    name = f"acme-inv-{uuid.uuid4().hex[:6]}"
    _add(page, "acme", name)
    visit("/invitations")
    expect(_row(page, name)).to_have_count(1)
    expect(_row(page, name)).to_contain_text("Active")
    visit(f"/invitations/acme/{name}")
    expect(page.locator("#field-owner")).to_be_disabled()  # an organization admin never moves it
    expect(page.locator("#field-name")).to_be_enabled()
    # acme names no default application, and the invitation is for all of them
    page.click("#invitation-copy-url")
    expect(page.get_by_text("You need to specify a default application for acme")).to_be_visible()

    page.context.clear_cookies()
    api_login(accounts.admin)
    visit(f"/invitations/acme/{name}")
    expect(page.locator("#field-owner")).to_be_enabled()
    planned = f"plan-inv-{uuid.uuid4().hex[:6]}"
    _add(page, "acme", planned, tag="auto_created_invitation_for_plan")
    visit(f"/invitations/acme/{planned}")
    # made for a plan: organization and name stay, even for a global admin
    expect(page.locator("#field-owner")).to_be_disabled()
    expect(page.locator("#field-name")).to_be_disabled()
    expect(page.locator("#field-displayName")).to_be_enabled()


def test_a_missing_invitation_is_a_404(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/invitations/built-in/no-such-invitation")
    page.wait_for_url(re.compile(r"/404$"))
