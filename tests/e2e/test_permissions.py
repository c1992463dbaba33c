"""The permissions screen: a permission added from the list by an organization admin (Pending,
theirs, the state not theirs to change), the resource type emptying the resources, the model
picker disabling the roles with a hint while the model has no role definition, the save
messages, the global admin approving (the approver and time set, and enforce answering from the
saved permission) and putting it back to Pending, a normal user's own requests, the .xlsx
upload, and axe on its pages."""

from __future__ import annotations

import io
import json
import re
import uuid

from openpyxl import Workbook
from playwright.sync_api import expect

from iam_console.core.seed import USER_MODEL_TEXT
from tests.conftest import ACL_MODEL
from tests.e2e.axe import serious
from tests.e2e.steps import as_page, choose, pick, save, server_db

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
RBAC = USER_MODEL_TEXT  # the seeded RBAC model


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def _seed(server) -> str:
    """Models with and without a role definition, and a role holding alice, in acme."""
    from iam_console.models import CasbinModel, Role

    suffix = uuid.uuid4().hex[:6]
    with server_db(server) as db:
        db.add(CasbinModel(owner="acme", name=f"flat-{suffix}", display_name="Flat", model_text=ACL_MODEL))
        db.add(CasbinModel(owner="acme", name=f"rbac-{suffix}", display_name="RBAC", model_text=RBAC))
        db.add(Role(owner="acme", name=f"reader-{suffix}", users=["acme/alice"], is_enabled=True))
    return suffix


def _enforce(page, permission: str, request: list) -> list:
    answer = page.request.post(f"/api/enforce?permissionId={permission}", data=json.dumps(request),
                               headers=as_page(page, {"Content-Type": "application/json"})).json()
    assert answer["status"] == "ok", answer
    return answer["data"]


def test_a_permission_from_add_to_approval(visit, page, api_login, accounts, server):
    suffix = _seed(server)
    api_login(accounts.boss)  # an admin of acme
    visit("/permissions")
    expect(page.locator("#list-table")).to_be_visible()
    assert serious(page) == []
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/permissions/acme/permission_\w+\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile(r"^permission_"))
    name = page.locator("#field-name").input_value()
    # theirs, Pending, and the state is not theirs to change
    expect(page.locator("#field-submitter")).to_have_value("boss")
    expect(page.locator("#field-submitter")).to_be_disabled()
    expect(page.locator("#field-state")).to_be_disabled()
    expect(page.locator("#field-state")).to_have_text("Pending")
    expect(page.locator(".pick-chosen").filter(has_text="acme/boss")).to_have_count(1)
    expect(page.locator("#field-resources")).to_have_value("app-built-in")
    expect(page.locator("#field-actions")).to_have_value("Read")
    assert serious(page) == []

    # a new resource type empties the resources
    choose(page, page.locator("#field-resourceType"), "Custom")
    expect(page.locator("#field-resources")).to_have_value("")
    page.fill("#field-resources", "doc")
    page.fill("#field-actions", "read")

    # no model is the default one, which has roles; a model without a role definition disables them
    expect(page.locator("#field-roles")).to_be_enabled()
    expect(page.locator("#roles-hint")).to_have_count(0)
    pick(page, "model", f"flat-{suffix}", typed=suffix)
    expect(page.locator("#field-model")).to_have_text(f"flat-{suffix}")
    expect(page.locator("#field-roles")).to_be_disabled()
    expect(page.locator("#roles-hint")).to_have_text("The model has no role definition, so roles cannot be chosen")
    assert serious(page) == []
    pick(page, "model", f"rbac-{suffix}", typed=suffix)
    expect(page.locator("#field-roles")).to_be_enabled()
    expect(page.locator("#roles-hint")).to_have_count(0)
    pick(page, "roles", f"acme/reader-{suffix}", typed=suffix)
    save(page)

    stored = page.request.get(f"/api/get-permission?id=acme/{name}").json()["data"]
    assert stored["resourceType"] == "Custom" and stored["resources"] == ["doc"] and stored["actions"] == ["read"]
    assert stored["model"] == f"rbac-{suffix}" and stored["roles"] == [f"acme/reader-{suffix}"]
    assert (stored["state"], stored["submitter"], stored["approver"]) == ("Pending", "boss", "")
    # the model is read again with the record
    page.reload()
    expect(page.locator("#field-model")).to_have_text(f"rbac-{suffix}")
    expect(page.locator("#field-roles")).to_be_enabled()

    # the save messages; the name goes back after a failed save
    page.fill("#field-actions", "")
    page.fill("#field-name", f"{name}-renamed")
    page.click("#edit-save")
    expect(_toast(page, "Failed to save: The actions cannot be empty")).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(name)
    page.fill("#field-actions", "read")
    page.fill("#field-resources", "")
    page.click("#edit-save")
    expect(_toast(page, "Failed to save: The resources cannot be empty")).to_be_visible()
    page.fill("#field-resources", "doc")
    page.locator(".pick-chosen").filter(has_text="acme/boss").get_by_role("button").click()
    page.locator(".pick-chosen").filter(has_text=f"acme/reader-{suffix}").get_by_role("button").click()
    page.click("#edit-save")
    expect(_toast(page, "Failed to save: The users and roles cannot be empty at the same time")).to_be_visible()
    pick(page, "roles", f"acme/reader-{suffix}", typed=suffix)
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    # Pending: not in force
    assert _enforce(page, f"acme/{name}", ["acme/alice", "doc", "read"]) == [False]

    # the global admin approves: the approver and the time are set, and enforce answers from it
    api_login(accounts.admin)
    visit(f"/permissions/acme/{name}")
    expect(page.locator("#field-state")).to_be_enabled()
    expect(page.locator("#field-approver")).to_be_disabled()
    choose(page, page.locator("#field-state"), "Approved")
    # the form shows at once what the save sets
    expect(page.locator("#field-approver")).to_have_value("admin")
    expect(page.locator("#field-approveTime")).not_to_have_value("")
    save(page)
    expect(page.locator("#field-approver")).to_have_value("admin")
    expect(page.locator("#field-approveTime")).not_to_have_value("")
    stored = page.request.get(f"/api/get-permission?id=acme/{name}").json()["data"]
    assert (stored["state"], stored["approver"]) == ("Approved", "admin") and stored["approveTime"]
    assert _enforce(page, f"acme/{name}", ["acme/alice", "doc", "read"]) == [True]
    assert _enforce(page, f"acme/{name}", ["acme/alice", "doc", "write"]) == [False]
    # Pending clears both
    choose(page, page.locator("#field-state"), "Pending")
    expect(page.locator("#field-approver")).to_have_value("")
    save(page)
    expect(page.locator("#field-approver")).to_have_value("")
    expect(page.locator("#field-approveTime")).to_have_value("")
    assert _enforce(page, f"acme/{name}", ["acme/alice", "doc", "read"]) == [False]


def test_a_normal_users_own_requests(visit, page, api_login, accounts, server):
    from iam_console.models import Permission

    theirs = f"boss-perm-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Permission(owner="acme", name=theirs, users=["acme/boss"], resource_type="Custom", resources=["x"],
                          actions=["read"], effect="Allow", is_enabled=True, submitter="boss", state="Pending"))
    api_login(accounts.alice)
    visit("/")
    expect(page.locator("#welcome")).to_be_visible()
    page.click("#menu-group-auth")
    expect(page.locator("#menu-item-permissions")).to_have_attribute("href", "/permissions")
    page.keyboard.press("Escape")
    visit("/permissions")
    expect(page.locator("#list-table")).to_be_visible()
    expect(page.locator("#list-upload")).to_have_count(0)  # uploads are for admins
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/permissions/acme/permission_\w+\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile(r"^permission_"))
    name = page.locator("#field-name").input_value()
    expect(page.locator("#field-submitter")).to_have_value("alice")
    expect(page.locator("#field-state")).to_be_disabled()
    expect(page.locator("#field-state")).to_have_text("Pending")
    expect(page.locator("#field-owner")).to_be_disabled()
    assert serious(page) == []
    page.fill("#field-description", "may I read?")
    page.click("#edit-save-exit")
    expect(page).to_have_url(re.compile(r"/permissions$"))
    rows = page.locator("#list-table tbody tr")
    expect(rows.filter(has_text=name)).to_have_count(1)
    # only what they submitted
    expect(rows.filter(has_text=theirs)).to_have_count(0)
    expect(page.locator("#list-table tbody tr td").filter(has_text=re.compile("^boss$"))).to_have_count(0)
    stored = page.request.get(f"/api/get-permission?id=acme/{name}").json()["data"]
    assert (stored["state"], stored["submitter"], stored["description"]) == ("Pending", "alice", "may I read?")
    # another's permission is not theirs to open
    visit(f"/permissions/acme/{theirs}")
    expect(page).to_have_url(re.compile(r"/(404|403)$"))


def test_upload_permissions_from_an_xlsx_file(visit, page, api_login, accounts):
    suffix = uuid.uuid4().hex[:6]
    api_login(accounts.boss)
    visit("/permissions")
    expect(page.locator("#list-table")).to_be_visible()
    chooser = page.locator("#list-upload input[type=file]")

    def book(*rows: list) -> bytes:
        workbook = Workbook(write_only=True)
        sheet = workbook.create_sheet("Sheet1")
        for row in rows:
            sheet.append(row)
        out = io.BytesIO()
        workbook.save(out)
        return out.getvalue()

    header = ["name", "users", "resourceType", "resources", "actions", "effect"]
    good = book(header, [f"up-{suffix}", "acme/alice", "Custom", "doc", "read", "Allow"])
    chooser.set_input_files(files=[{"name": "permissions.xlsx", "mimeType": XLSX, "buffer": good}])
    expect(_toast(page, "Users uploaded successfully, refreshing the page")).to_be_visible()
    page.fill("#search-value", f"up-{suffix}")
    expect(page.locator("#list-table tbody tr").filter(has_text=f"up-{suffix}")).to_have_count(1)
    stored = page.request.get(f"/api/get-permission?id=acme/up-{suffix}").json()["data"]
    assert stored["users"] == ["acme/alice"] and stored["state"] == "Pending"

    bad = book(header, [f"up-{suffix}-b", "acme/alice", "Custom", "", "read", "Allow"])
    chooser.set_input_files(files=[{"name": "bad.xlsx", "mimeType": XLSX, "buffer": bad}])
    expect(_toast(page, re.compile(r"^Failed to sync: .*The resources cannot be empty"))).to_be_visible()
    chooser.set_input_files(files=[{"name": "p.csv", "mimeType": "text/csv", "buffer": b"name\nx\n"}])
    expect(_toast(page, "File failed to upload")).to_be_visible()
