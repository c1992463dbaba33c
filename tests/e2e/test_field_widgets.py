"""The field widgets no part-1 screen uses yet, on the tests' own pages (tests/e2e/field_pages.py):
a row table edited one row at a time with exactly one key row, pickers on a role's edit page
(one page of names, searched, of the record's organization only), and a code field on a model's
edit page (the console's own, /models) whose long text is saved whole."""

from __future__ import annotations

import json
import uuid

from playwright.sync_api import expect

from tests.e2e.steps import choose, save


def _add(server, *records) -> None:
    from sqlmodel import Session

    from iam_console.db import make_engine

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            for record in records:
                db.add(record)
            db.commit()
    finally:
        engine.dispose()


def _saved(page) -> list[dict]:
    """The table as the state reads it back (each call finds it changed since the last)."""
    before = page.locator("#saved").inner_text()
    page.click("#save")
    expect(page.locator("#saved")).not_to_have_text(before)
    return json.loads(page.locator("#saved").inner_text())


def test_one_row_at_a_time_and_one_key_row(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/_test/rows")
    rows = page.locator("#table-columns-table tbody tr")
    expect(rows).to_have_count(2)
    ident, email = rows.nth(0), rows.nth(1)
    key = lambda row: row.get_by_role("switch")  # noqa: E731
    expect(key(ident)).to_be_checked()
    expect(key(email)).not_to_be_checked()
    expect(ident.get_by_role("button", name="Delete")).to_be_disabled()  # the id row, and the key row
    expect(ident.locator(".table-columns-name input")).to_have_count(0)  # not edited: shown as text

    email.get_by_role("button", name="Edit").click()
    # while one row is edited, the others can be neither edited nor deleted, and nothing is added
    expect(ident.get_by_role("button", name="Edit")).to_be_disabled()
    expect(page.locator("#table-columns-add")).to_be_disabled()
    expect(email.get_by_role("button", name="Delete")).to_be_enabled()
    email.locator(".table-columns-name input").fill("mail")
    key(email).click()  # turning one on turns the other off
    expect(key(ident)).not_to_be_checked()
    expect(key(email)).to_be_disabled()  # and the key row cannot be switched off
    expect(email.get_by_role("button", name="Delete")).to_be_disabled()  # nor deleted
    choose(page, email.locator(".table-columns-type"), "integer")  # no values, no length
    expect(email.locator(".table-columns-values input")).to_be_disabled()
    expect(email.locator(".table-columns-length")).to_have_count(0)
    email.get_by_role("button", name="Cancel").click()  # the row as it was
    expect(email.locator(".table-columns-name")).to_have_text("email")
    expect(key(ident)).to_be_checked()
    expect(email.locator(".table-columns-length")).to_have_text("100")

    page.click("#table-columns-add")  # at the top, being edited
    expect(rows).to_have_count(3)
    expect(rows.nth(0).locator(".table-columns-name input")).to_be_visible()
    expect(rows.nth(1).get_by_role("button", name="Edit")).to_be_disabled()
    rows.nth(0).get_by_role("button", name="Cancel").click()  # a row being added goes
    expect(rows).to_have_count(2)
    expect(rows.nth(0).locator(".table-columns-name")).to_have_text("id")

    page.click("#table-columns-add")
    new = rows.nth(0)
    expect(key(new)).not_to_be_checked()  # there is a key row already
    new.locator(".table-columns-name input").fill("owner")
    new.locator(".table-columns-values input").fill("x, y")
    new.locator(".table-columns-length input").fill("12")
    new.locator(".table-columns-user").click()  # a picker in a cell: users of acme
    page.locator(".pick-search input, input.pick-search").first.fill("ali")
    page.locator(".pick-option", has_text="acme/alice").click()
    expect(new.locator(".table-columns-user")).to_have_text("acme/alice")
    new.get_by_role("button", name="Save").click()
    expect(new.locator(".table-columns-name input")).to_have_count(0)
    new.get_by_role("button", name="Down").click()
    expect(rows.nth(1).locator(".table-columns-name")).to_have_text("owner")

    saved = _saved(page)
    assert [row["name"] for row in saved] == ["id", "owner", "email"]
    assert saved[0]["comment"] == "kept"  # a key no column shows stays
    assert saved[1] == {"name": "owner", "type": "string", "isKey": False, "values": ["x", "y"], "length": 12,
                        "user": "acme/alice"}
    assert [row["isKey"] for row in saved] == [True, False, False]

    rows.nth(2).get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(2)
    assert [row["name"] for row in _saved(page)] == ["id", "owner"]


def test_pickers_offer_one_page_of_the_records_organization(visit, page, api_login, accounts, server):
    from iam_console.models import Role, User

    role, prefix = f"role-{uuid.uuid4().hex[:6]}", f"pick-{uuid.uuid4().hex[:4]}"
    _add(server, Role(owner="acme", name=role, display_name=role),
         *[User(owner="acme", name=f"{prefix}-{i:02d}", uuid=str(uuid.uuid4())) for i in range(22)])
    api_login(accounts.boss)  # an admin of acme
    visit(f"/roles/acme/{role}")  # the roles screen: its users are a picker
    page.click("#field-users")
    options = page.locator(".pick-option")
    expect(options).to_have_count(20)  # one page
    expect(options.filter(has_text="built-in/")).to_have_count(0)  # never another organization's
    search = page.locator("input.pick-search, .pick-search input").first
    search.fill(prefix)
    expect(options).to_have_count(20)
    expect(options.first).to_have_text(f"acme/{prefix}-00")
    page.locator(".pick-next").click()
    expect(options).to_have_count(2)
    expect(options.first).to_have_text(f"acme/{prefix}-20")
    expect(page.locator(".pick-next")).to_be_disabled()
    options.first.click()
    page.click("#field-users")
    search = page.locator("input.pick-search, .pick-search input").first
    search.fill("alice")
    expect(options).to_have_count(1)
    options.first.click()
    chosen = page.locator(".pick-chosen")
    expect(chosen).to_have_count(2)
    save(page)
    stored = page.request.get(f"/api/get-role?id=acme/{role}").json()["data"]
    assert stored["users"] == [f"acme/{prefix}-20", "acme/alice"]

    page.get_by_role("button", name=f"Remove acme/{prefix}-20").click()
    expect(chosen).to_have_count(1)
    save(page)
    assert page.request.get(f"/api/get-role?id=acme/{role}").json()["data"]["users"] == ["acme/alice"]


def test_a_code_field_saves_a_long_text_whole(visit, page, api_login, accounts, server):
    from iam_console.core.seed import USER_MODEL_TEXT
    from iam_console.models import CasbinModel

    name = f"model-{uuid.uuid4().hex[:6]}"
    # a model (Casbin checks every saved text), then a long comment
    text = USER_MODEL_TEXT.rstrip("\n") + "\n" + "".join(
        f"# line {i:05d} of a long model text, longer than any input field\n" for i in range(400))
    assert len(text) > 20_000
    _add(server, CasbinModel(owner="acme", name=name, display_name=name, model_text=text))
    api_login(accounts.admin)
    visit(f"/models/acme/{name}")
    editor = page.locator("#field-modelText .cm-content")
    expect(editor).to_be_visible()
    expect(page.get_by_role("textbox", name="Model text", exact=True)).to_have_count(1)
    assert round(page.locator("#field-modelText").bounding_box()["height"]) == 500
    editor.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("# edited\n")
    save(page)
    stored = page.request.get(f"/api/get-model?id=acme/{name}").json()["data"]["modelText"]
    assert stored == "# edited\n" + text  # never cut at 20,000 characters


def test_an_organizations_default_application_is_picked_from_its_own(visit, page, api_login, accounts, server):
    from iam_console.models import Application, Organization

    org, suffix = f"org-pick-{uuid.uuid4().hex[:6]}", uuid.uuid4().hex[:6]
    _add(server, Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                              password_obfuscator_type="Plain", nav_items=["all"]),
         Application(owner="admin", name=f"app-mine-{suffix}", organization=org, client_id=f"mine-{suffix}"),
         Application(owner="admin", name=f"app-theirs-{suffix}", organization="acme", client_id=f"theirs-{suffix}"))
    api_login(accounts.admin)
    visit(f"/organizations/{org}")
    page.click("#field-defaultApplication")
    options = page.locator(".pick-option")
    expect(options).to_have_count(1)  # the organization's applications only
    expect(options.first).to_have_text(f"app-mine-{suffix}")
    options.first.click()
    expect(page.locator("#field-defaultApplication")).to_have_text(f"app-mine-{suffix}")
    save(page)
    stored = page.request.get(f"/api/get-organization?id=admin/{org}").json()["data"]
    assert stored["defaultApplication"] == f"app-mine-{suffix}"
