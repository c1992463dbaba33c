"""Models in the browser: the list's 100-character preview of the model text, the model text
edited in the 500 px code editor and saved, a text that is no Casbin model refused with Casbin's
error and nothing written, the built-in models read-only and not deletable, and the screens of
Casbin objects (models, adapters, enforcers) shown to the global admin alone: an organization
admin has no menu entry and gets the 403 page."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from iam_console.core.seed import USER_MODEL_TEXT
from tests.e2e.axe import serious
from tests.e2e.steps import as_page, save

RBAC = USER_MODEL_TEXT  # the seeded RBAC model


def _add(page, owner: str, text: str = RBAC) -> str:
    name = f"model-{uuid.uuid4().hex[:8]}"
    answer = page.request.post("/api/add-model", data={"owner": owner, "name": name, "displayName": name,
                                                       "modelText": text}, headers=as_page(page)).json()
    assert answer["status"] == "ok", answer
    return name


def _stored(page, owner: str, name: str) -> str:
    return page.request.get("/api/get-model", params={"id": f"{owner}/{name}"}).json()["data"]["modelText"]


def _editor(page):
    return page.locator("#field-modelText .cm-content")


def test_the_list_preview_and_the_model_editor(visit, page, api_login, accounts):
    api_login(accounts.admin)
    name = _add(page, "built-in")
    visit("/models")
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", name)
    row = page.locator("#list-table tbody tr").filter(has_text=name)
    expect(row).to_have_count(1)
    assert len(RBAC) > 100
    cell = row.locator("td").nth(4)  # the model text, cut to 100 characters
    expect(cell).to_have_text(re.compile("…$"))
    assert cell.text_content() == RBAC[:100] + "…"
    assert serious(page) == []

    row.get_by_role("link", name=name).click()
    page.wait_for_url(re.compile(f"/models/built-in/{name}$"))
    editor = _editor(page)
    expect(editor).to_be_visible()
    expect(editor).to_contain_text("[request_definition]")
    assert round(page.locator("#field-modelText").bounding_box()["height"]) == 500
    assert serious(page) == []

    # edited in the editor and saved
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# edited in the browser\n")
    save(page)
    assert _stored(page, "built-in", name) == RBAC + "# edited in the browser\n"

    # a text that is no model: Casbin's own error, nothing written, the text kept in the editor
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.type("[request_definition]\nr = sub, obj, act\n")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile(r"Failed to save: The model is not valid: .*missing required sections"))) \
        .to_be_visible()
    assert _stored(page, "built-in", name) == RBAC + "# edited in the browser\n"
    expect(editor).to_contain_text("r = sub, obj, act")
    expect(editor).not_to_contain_text("[matchers]")


def test_a_built_in_model_is_read_only_and_cannot_be_deleted(visit, page, api_login, accounts):
    api_login(accounts.admin)
    before = _stored(page, "built-in", "user-model-built-in")
    visit("/models/built-in/user-model-built-in")
    editor = _editor(page)
    expect(editor).to_be_visible()
    expect(editor).to_have_attribute("aria-readonly", "true")
    for field in ("#field-name", "#field-displayName", "#field-description", "#field-owner"):
        expect(page.locator(field)).to_be_disabled()
    editor.click()
    page.keyboard.type("typed")
    expect(editor).not_to_contain_text("typed")
    assert _stored(page, "built-in", "user-model-built-in") == before

    visit("/models")
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", "user-model-built-in")
    row = page.locator("#list-table tbody tr").filter(has_text="user-model-built-in")
    expect(row).to_have_count(1)
    expect(row.get_by_role("button", name="Delete")).to_be_disabled()


def test_casbin_screens_are_the_global_admins_alone(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/models")
    # the menu comes with the account's state, which a loaded machine may be slow to send
    expect(page.locator("#menu-group-auth")).to_be_visible(timeout=45_000)
    page.click("#menu-group-auth")
    for item in ("models", "adapters", "enforcers"):
        expect(page.locator(f"#menu-item-{item}")).to_be_visible()

    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/")
    # the header names the new account once the shell has its state (menu included)
    expect(page.locator("#account-name")).to_have_text(accounts.boss.display_name, timeout=45_000)
    expect(page.locator("#menu-group-home")).to_be_visible()
    group = page.locator("#menu-group-auth")
    if group.count():  # the group shows when it holds another screen (roles, permissions)
        group.click()
    for item in ("models", "adapters", "enforcers"):
        expect(page.locator(f"#menu-item-{item}")).to_have_count(0)
    # and the routes refuse them: the list says so, the edit page is the 403 page
    for route in ("/models", "/adapters", "/enforcers"):
        visit(route)
        expect(page.locator("#list-forbidden")).to_be_visible()
        expect(page.locator("#list-table")).to_have_count(0)
    visit("/models/built-in/user-model-built-in")
    page.wait_for_url(re.compile(r"/403$"))
    visit("/adapters/built-in/user-adapter-built-in")
    page.wait_for_url(re.compile(r"/403$"))
    visit("/enforcers/built-in/user-enforcer-built-in")
    page.wait_for_url(re.compile(r"/403$"))
