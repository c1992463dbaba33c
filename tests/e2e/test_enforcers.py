"""The enforcer page: a new enforcer given a model and an adapter with the pickers, then its
policy table: columns named by the model's policy definition, Add at the top with Ptype p, one
row edited at a time, Cancel restoring a row or dropping the one being added, a duplicate
refused, Delete, 100 rules a page, a load failure's message; and /api/enforce answering by the
rules as edited."""

from __future__ import annotations

import json
import re
import uuid

from playwright.sync_api import expect

from iam_console.core.seed import USER_MODEL_TEXT
from tests.e2e.axe import serious
from tests.e2e.steps import as_page, pick, server_db

RBAC = USER_MODEL_TEXT  # the seeded RBAC model


def _fill(row, values: tuple[str, str, str]) -> None:
    for index, value in enumerate(values):
        row.locator(f".policies-v{index} input").fill(value)


def _shows(row, values: tuple[str, str, str]) -> None:
    """The row shown as text (not being edited), holding these values."""
    expect(row.locator(".policies-v0 input")).to_have_count(0)
    for index, value in enumerate(values):
        expect(row.locator(f".policies-v{index}")).to_have_text(value)


def _enforce(page, enforcer: str, request: list[str]) -> bool:
    answer = page.request.post(f"/api/enforce?enforcerId={enforcer}", data=json.dumps(request),
                               headers=as_page(page, {"Content-Type": "application/json"})).json()
    assert answer["status"] == "ok", answer
    return answer["data"][0]


def test_an_enforcer_and_its_policies(visit, page, api_login, accounts, server):
    from sqlmodel import select

    from iam_console.authorization import policy_store
    from iam_console.models import Adapter, CasbinModel

    suffix = uuid.uuid4().hex[:6]
    api_login(accounts.admin)
    visit("/enforcers")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/enforcers/.*\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile("^enforcer_"))
    name = page.locator("#field-name").input_value()
    owner = page.locator("#field-owner").evaluate("e => e.tagName === 'INPUT' ? e.value : e.textContent.trim()")
    model, adapter, broken = f"model-{suffix}", f"adapter-{suffix}", f"broken-{suffix}"
    with server_db(server) as db:
        db.add(CasbinModel(owner=owner, name=model, model_text=RBAC))
        db.add(Adapter(owner=owner, name=adapter, use_same_db=True, table=f"rules_{suffix}"))
        # an external database that answers nothing
        db.add(Adapter(owner=owner, name=broken, use_same_db=False, type="Database", database_type="postgres",
                       host="127.0.0.1", port=1, user="nobody", database="nothing", table="casbin_rule"))
    expect(page.locator("#enforcer-policies-none")).to_be_visible()  # no model nor adapter yet

    pick(page, "model", f"{owner}/{model}")
    pick(page, "adapter", f"{owner}/{adapter}")
    page.click("#edit-save")
    page.mouse.move(0, 0)  # a toast under the pointer stays (Sonner pauses it), and it comes where Save is
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    page.get_by_text("Successfully saved").wait_for(state="hidden")
    enforcer = f"{owner}/{name}"
    stored = page.request.get(f"/api/get-enforcer?id={enforcer}").json()["data"]
    assert (stored["model"], stored["adapter"]) == (f"{owner}/{model}", f"{owner}/{adapter}")

    # the columns follow the model's policy definition: Ptype, sub, obj, act
    table = page.locator("#policies-table")
    expect(table.locator("thead th")).to_have_text(["Rule type", "sub", "obj", "act", "Action"])
    rows = table.locator("tbody tr")
    expect(rows).to_have_count(0)

    # Add: at the top, being edited, Ptype p
    page.click("#policies-add")
    expect(rows).to_have_count(1)
    first = rows.nth(0)
    expect(first.locator(".policies-ptype")).to_have_text("p")
    _fill(first, ("alice", "data1", "read"))
    first.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Successfully added")).to_be_visible()
    _shows(first, ("alice", "data1", "read"))
    page.click("#policies-add")
    _fill(rows.nth(0), ("bob", "data2", "write"))
    rows.nth(0).get_by_role("button", name="Save").click()
    expect(rows).to_have_count(2)
    expect(rows.nth(0).get_by_role("button", name="Edit")).to_be_enabled()

    # a duplicate is refused, and stays edited until Cancel drops it
    page.click("#policies-add")
    added = rows.nth(0)
    _fill(added, ("alice", "data1", "read"))
    added.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Failed to add: Duplicated policy rules")).to_be_visible()
    expect(added.locator(".policies-v0 input")).to_be_visible()
    added.get_by_role("button", name="Cancel").click()
    expect(rows).to_have_count(2)

    # one row at a time; Cancel restores the row
    bob, alice = rows.nth(0), rows.nth(1)  # each added at the top (a row being edited holds inputs, not text)
    _shows(alice, ("alice", "data1", "read"))
    _shows(bob, ("bob", "data2", "write"))
    alice.get_by_role("button", name="Edit").click()
    expect(bob.get_by_role("button", name="Edit")).to_be_disabled()
    expect(bob.get_by_role("button", name="Delete")).to_be_disabled()
    expect(page.locator("#policies-add")).to_be_disabled()
    alice.locator(".policies-v2 input").fill("write")
    alice.get_by_role("button", name="Cancel").click()
    _shows(alice, ("alice", "data1", "read"))
    expect(bob.get_by_role("button", name="Edit")).to_be_enabled()
    assert serious(page) == []  # the edit page with its policy table
    alice.get_by_role("button", name="Edit").click()
    alice.locator(".policies-v2 input").fill("write")
    alice.get_by_role("button", name="Save").click()
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    _shows(alice, ("alice", "data1", "write"))
    bob.get_by_role("button", name="Delete").click()
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(rows).to_have_count(1)
    _shows(rows.nth(0), ("alice", "data1", "write"))

    # the enforcer answers by the rules as edited
    assert _enforce(page, enforcer, ["alice", "data1", "write"]) is True
    assert _enforce(page, enforcer, ["alice", "data1", "read"]) is False
    assert _enforce(page, enforcer, ["bob", "data2", "write"]) is False

    # 100 rules a page
    with server_db(server) as db:
        stored_adapter = db.exec(select(Adapter).where(Adapter.owner == owner, Adapter.name == adapter)).one()
        policy_store.add(db, stored_adapter, [["p", f"user{i:03d}", "data", "read"] for i in range(150)])
    page.reload()
    expect(page.locator("#policy-list-total")).to_have_text("Total 151")
    expect(rows).to_have_count(100)
    expect(rows.nth(0)).to_contain_text("alice")
    page.click("#policy-page-next")
    expect(rows).to_have_count(51)
    expect(rows.nth(50)).to_contain_text("user149")
    page.click("#policy-page-prev")
    expect(rows).to_have_count(100)

    # policies that cannot be read: the message, and no table
    pick(page, "adapter", f"{owner}/{broken}")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile(r"^Failed to sync policies: .+"))).to_be_visible()
    expect(page.locator("#policies-table")).to_have_count(0)

