"""Adapters in the browser: the useSameDb switch clears and hides the connection fields, or fills
them (mysql, localhost, 3306, root, dbName); the database types offered; the port range refused
with its message; Test DB connection against a SQLite file ('Connect successfully') and a file that
cannot be opened ('Failed to connect: ...'), enabled only while the form's organization is the one
in the address; the password masked; the built-in adapters read-only."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import as_page, save, server_db

CONNECTION = ("type", "databaseType", "host", "port", "user", "password", "database")


def _add(page, owner: str = "built-in", **fields) -> str:
    name = f"adapter-{uuid.uuid4().hex[:8]}"
    answer = page.request.post("/api/add-adapter", data={"owner": owner, "name": name, "table": "rules",
                                                         "useSameDb": True, **fields}, headers=as_page(page)).json()
    assert answer["status"] == "ok", answer
    return name


def _stored(server, owner: str, name: str):
    """The adapter as stored (its password too, which every answer masks)."""
    from sqlmodel import select

    from iam_console.models import Adapter

    with server_db(server) as db:
        row = db.exec(select(Adapter).where(Adapter.owner == owner, Adapter.name == name)).one()
        db.expunge(row)
    return row


def test_the_use_same_db_switch_and_the_connection_fields(visit, page, api_login, accounts, server):
    api_login(accounts.admin)
    name = _add(page)
    visit(f"/adapters/built-in/{name}")
    switch = page.locator("#field-useSameDb")
    expect(switch).to_be_checked()
    for key in CONNECTION:
        expect(page.locator(f"#field-{key}")).to_have_count(0)
    assert serious(page) == []

    # off: a MySQL server's usual fields to start from
    switch.click()
    expect(page.locator("#field-type")).to_have_text("Database")
    expect(page.locator("#field-databaseType")).to_have_text("mysql")
    expect(page.locator("#field-host")).to_have_value("localhost")
    expect(page.locator("#field-port")).to_have_value("3306")
    expect(page.locator("#field-user")).to_have_value("root")
    expect(page.locator("#field-database")).to_have_value("dbName")
    assert serious(page) == []
    page.click("#field-databaseType")
    assert page.get_by_role("option").all_inner_texts() == ["mysql", "postgres", "mssql", "oracle", "sqlite3"]
    page.keyboard.press("Escape")

    # the port is 0 to 65535: the form refuses a save outside it with the browser's message (the
    # server refuses it too: tests/api/test_adapters.py), nothing written
    port = page.locator("#field-port")
    for wrong, bound in (("70000", "less than or equal to 65535"), ("-1", "greater than or equal to 0")):
        page.fill("#field-port", wrong)
        page.click("#edit-save")
        assert port.evaluate("e => e.validity.valid") is False
        assert bound in port.evaluate("e => e.validationMessage")
    expect(page.get_by_text("Successfully saved")).to_have_count(0)
    assert _stored(server, "built-in", name).use_same_db is True

    page.fill("#field-port", "3307")
    page.fill("#field-password", "Adapter-pass-1")
    save(page)
    stored = _stored(server, "built-in", name)
    assert (stored.use_same_db, stored.type, stored.database_type, stored.host, stored.port, stored.user,
            stored.password, stored.database) == (False, "Database", "mysql", "localhost", 3307, "root",
                                                   "Adapter-pass-1", "dbName")
    # the password comes back masked, and the mask saved back keeps it
    expect(page.locator("#field-password")).to_have_value("***")
    page.fill("#field-host", "127.0.0.2")
    save(page)
    assert (_stored(server, "built-in", name).host, _stored(server, "built-in", name).password) == (
        "127.0.0.2", "Adapter-pass-1")

    # on: the connection fields are cleared and hidden
    page.locator("#field-useSameDb").click()
    for key in CONNECTION:
        expect(page.locator(f"#field-{key}")).to_have_count(0)
    save(page)
    stored = _stored(server, "built-in", name)
    assert (stored.use_same_db, stored.type, stored.database_type, stored.host, stored.port, stored.user,
            stored.password, stored.database) == (True, "", "", "", 0, "", "", "")


def test_test_db_connection(visit, page, api_login, accounts, tmp_path):
    api_login(accounts.admin)
    good = _add(page, useSameDb=False, type="Database", databaseType="sqlite3", database=str(tmp_path / "p.db"))
    visit(f"/adapters/built-in/{good}")
    button = page.locator("#adapter-test")
    expect(button).to_be_enabled()
    button.click()
    expect(page.get_by_text("Connect successfully")).to_be_visible()
    assert (tmp_path / "p.db").exists()

    # the button tests the adapter of the page's organization: moving it elsewhere disables it
    page.click("#field-owner")
    page.fill(".pick-search input", "acme")
    page.locator(".pick-option").filter(has_text=re.compile("^acme$")).click()
    expect(page.locator("#field-owner")).to_have_text("acme")
    expect(button).to_be_disabled()

    bad = _add(page, useSameDb=False, type="Database", databaseType="sqlite3",
               database=str(tmp_path / "missing" / "p.db"))
    visit(f"/adapters/built-in/{bad}")
    page.locator("#adapter-test").click()
    expect(page.get_by_text("Failed to connect: unable to open database file")).to_be_visible()


def test_a_built_in_adapter_is_read_only_and_cannot_be_deleted(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/adapters/built-in/user-adapter-built-in")
    expect(page.locator("#field-table")).to_have_value("casbin_user_rule")
    for field in ("#field-name", "#field-table", "#field-useSameDb", "#field-owner"):
        expect(page.locator(field)).to_be_disabled()
    page.locator("#adapter-test").click()  # its table is on the server's own database
    expect(page.get_by_text("Connect successfully")).to_be_visible()

    visit("/adapters")
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", "user-adapter-built-in")
    row = page.locator("#list-table tbody tr").filter(has_text="user-adapter-built-in")
    expect(row).to_have_count(1)
    expect(row.get_by_role("button", name="Delete")).to_be_disabled()
    assert serious(page) == []
