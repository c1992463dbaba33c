"""The roles screen: a role added from the list, its users, groups and sub-roles chosen with
pickers of its organization (the sub-roles never offer the role itself), free domains,
is-enabled, the .xlsx upload (a bad row refused whole, .xlsx only), and axe on its pages."""

from __future__ import annotations

import io
import re
import uuid

from openpyxl import Workbook
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import pick, save, server_db

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def _workbook(*rows: list) -> bytes:
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Sheet1")
    for row in rows:
        sheet.append(row)
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def test_add_a_role_with_pickers(visit, page, api_login, accounts, server):
    from iam_console.models import Group, Role

    suffix = uuid.uuid4().hex[:6]
    group, other = f"team-{suffix}", f"base-{suffix}"
    with server_db(server) as db:
        db.add(Group(owner="acme", name=group, display_name=group, type="Virtual", is_top_group=True,
                     parent_id="acme"))
        db.add(Role(owner="acme", name=other, display_name=other, is_enabled=True))
    api_login(accounts.boss)  # an admin of acme
    visit("/roles")
    expect(page.locator("#list-table")).to_be_visible()
    assert serious(page) == []
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/roles/acme/role_\w+\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile(r"^role_"))
    name = page.locator("#field-name").input_value()
    expect(page.locator("#field-displayName")).to_have_value(re.compile(r"^New Role - "))
    expect(page.locator("#field-isEnabled")).to_have_attribute("data-state", "checked")
    assert serious(page) == []

    pick(page, "users", "acme/alice", typed="alice")
    pick(page, "groups", f"acme/{group}", typed=suffix)
    # the sub-roles never offer the role itself
    page.click("#field-roles")
    page.locator("input.pick-search, .pick-search input").first.fill(name)
    expect(page.get_by_text("No data")).to_be_visible()
    expect(page.locator(".pick-option")).to_have_count(0)
    page.keyboard.press("Escape")
    pick(page, "roles", f"acme/{other}", typed=suffix)
    page.fill("#field-domains", "d1, d2")
    page.click("#field-isEnabled")
    save(page)

    stored = page.request.get(f"/api/get-role?id=acme/{name}").json()["data"]
    assert stored["users"] == ["acme/alice"] and stored["groups"] == [f"acme/{group}"]
    assert stored["roles"] == [f"acme/{other}"] and stored["domains"] == ["d1", "d2"]
    assert stored["isEnabled"] is False
    # the list links the members
    visit("/roles")
    page.fill("#search-value", name)
    row = page.locator("#list-table tbody tr").filter(has_text=name)
    expect(row).to_have_count(1)
    expect(row.get_by_role("link", name=f"acme/{other}")).to_have_attribute("href", f"/roles/acme/{other}")


def test_upload_roles_from_an_xlsx_file(visit, page, api_login, accounts):
    suffix = uuid.uuid4().hex[:6]
    api_login(accounts.boss)
    visit("/roles")
    expect(page.locator("#list-table")).to_be_visible()
    chooser = page.locator("#list-upload input[type=file]")
    good = _workbook(["name", "displayName", "users", "isEnabled"],
                     [f"up-{suffix}-a", "Uploaded A", "acme/alice", "true"],
                     [f"up-{suffix}-b", "Uploaded B", "", "false"])
    chooser.set_input_files(files=[{"name": "roles.xlsx", "mimeType": XLSX, "buffer": good}])
    expect(_toast(page, "Users uploaded successfully, refreshing the page")).to_be_visible()
    page.fill("#search-value", f"up-{suffix}")
    expect(page.locator("#list-table tbody tr")).to_have_count(2)
    stored = page.request.get(f"/api/get-role?id=acme/up-{suffix}-a").json()["data"]
    assert stored["users"] == ["acme/alice"] and stored["isEnabled"] is True

    # a row naming a user that does not exist refuses the whole file
    bad = _workbook(["name", "users"], [f"up-{suffix}-c", ""], [f"up-{suffix}-d", "acme/nobody-here"])
    chooser.set_input_files(files=[{"name": "bad.xlsx", "mimeType": XLSX, "buffer": bad}])
    expect(_toast(page, re.compile(r"^Failed to sync: "))).to_be_visible()
    assert page.request.get(f"/api/get-role?id=acme/up-{suffix}-c").json()["data"] is None

    # .xlsx only
    chooser.set_input_files(files=[{"name": "roles.csv", "mimeType": "text/csv", "buffer": b"name\nx\n"}])
    expect(_toast(page, "File failed to upload")).to_be_visible()


def test_a_failed_save_keeps_the_chosen_organization(visit, page, api_login, accounts, server):
    """A global admin's new role moved to acme, with an acme member: a save refused for its name
    puts the name back and nothing else, so the next save stores the role in acme with its member."""
    from iam_console.models import Role

    suffix = uuid.uuid4().hex[:6]
    taken = f"taken-{suffix}"
    with server_db(server) as db:
        db.add(Role(owner="acme", name=taken, display_name=taken, is_enabled=True))
    api_login(accounts.admin)
    visit("/roles")
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/roles/built-in/role_\w+\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile(r"^role_"))
    name = page.locator("#field-name").input_value()
    pick(page, "owner", "acme")
    pick(page, "users", "acme/alice", typed="alice")
    page.fill("#field-displayName", f"Moved {suffix}")
    page.fill("#field-name", taken)  # taken in acme: refused
    page.click("#edit-save")
    expect(_toast(page, re.compile("Failed to save: .*already exists"))).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(name)  # the name reverts
    expect(page.locator("#field-owner")).to_contain_text("acme")  # the organization does not
    expect(page.locator("#field-displayName")).to_have_value(f"Moved {suffix}")
    page.mouse.move(0, 700)  # off the toasts: a toast under the pointer stays
    _toast(page, re.compile("Failed to save")).wait_for(state="detached", timeout=15_000)
    save(page)
    expect(page).to_have_url(re.compile(f"/roles/acme/{name}"))
    stored = page.request.get(f"/api/get-role?id=acme/{name}").json()["data"]
    assert stored["users"] == ["acme/alice"] and stored["displayName"] == f"Moved {suffix}"
