"""The syncers screens: a Database syncer added and its column table (one key row), the Keycloak
preset, postgres's SSL mode, the SSH options for mysql, mssql and postgres alone, the list's type
filter, and the list's Sync action with its two messages, against a SQLite file of the server's
disk; axe on the list and the edit page."""

from __future__ import annotations

import re
import uuid

import pytest
import sqlalchemy as sa
from playwright.sync_api import expect
from sqlmodel import select

from tests.e2e.axe import serious
from tests.e2e.steps import choose, save, server_db


def _field(page, key: str):
    return page.locator(f"#field-{key}")


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _search(page, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", text)


@pytest.fixture
def upstream(tmp_path):
    """A SQLite file with a user table of two users."""
    path = tmp_path / "people.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    with engine.begin() as connection:
        connection.execute(sa.text("CREATE TABLE people (id INTEGER PRIMARY KEY, username TEXT, email TEXT)"))
        connection.execute(sa.text("INSERT INTO people (username, email) VALUES ('ann', 'ann@example.com'), "
                                   "('ben', 'ben@example.com')"))
    engine.dispose()
    return str(path)


def test_a_database_syncer_its_columns_and_the_keycloak_preset(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/syncers")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/syncers/syncer_\w+\?mode=add"))
    expect(_field(page, "type")).to_have_text("Database")
    expect(_field(page, "databaseType")).to_have_text("mysql")
    expect(_field(page, "port")).to_have_value("3306")
    expect(_field(page, "sslMode")).to_have_count(0)
    expect(_field(page, "sshType")).to_be_visible()  # mysql has the SSH options
    assert serious(page) == []

    # postgres: the SSL mode, set to disable; SSH with a password shows its fields
    choose(page, _field(page, "databaseType"), "postgres")
    expect(_field(page, "sslMode")).to_have_text("disable")
    choose(page, _field(page, "sshType"), "password")
    expect(_field(page, "sshHost")).to_be_visible()
    expect(_field(page, "sshPassword")).to_be_visible()
    expect(_field(page, "cert")).to_have_count(0)
    choose(page, _field(page, "databaseType"), "sqlite3")  # no SSH, no SSL mode
    expect(_field(page, "sshType")).to_have_count(0)
    expect(_field(page, "sshHost")).to_have_count(0)
    expect(_field(page, "sslMode")).to_have_count(0)
    choose(page, _field(page, "databaseType"), "mysql")
    _field(page, "port").fill("3307")

    # the column table: the first row is the key; a key row is neither switched off nor deleted
    rows = page.locator("#table-columns-table tbody tr")
    page.click("#table-columns-add")
    page.click("#table-columns-add")
    expect(rows).to_have_count(2)
    first, second = rows.nth(0), rows.nth(1)
    first.locator(".table-columns-name input").fill("id")
    first.locator(".table-columns-casdoor-name input").fill("Id")
    second.locator(".table-columns-name input").fill("mail")
    second.locator(".table-columns-casdoor-name input").fill("Email")
    expect(first.get_by_role("switch").first).to_be_checked()
    expect(first.get_by_role("switch").first).to_be_disabled()
    expect(first.get_by_role("button", name="Delete")).to_be_disabled()
    second.get_by_role("switch").first.click()  # turning one on turns the other off
    expect(first.get_by_role("switch").first).not_to_be_checked()
    choose(page, second.locator(".table-columns-type"), "integer")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    name = page.url.split("?")[0].rsplit("/", 1)[1]
    stored = page.request.get("/api/get-syncer", params={"id": f"admin/{name}"}).json()["data"]
    assert stored["port"] == 3307
    assert [(c["name"], c["casdoorName"], c["isKey"], c["type"]) for c in stored["tableColumns"]] == [
        ("id", "Id", False, "string"), ("mail", "Email", True, "integer")]

    # Keycloak: the preset columns and Keycloak's user table; Database again: no columns
    choose(page, _field(page, "type"), "Keycloak")
    expect(rows).to_have_count(9)
    expect(rows.nth(0).locator(".table-columns-name input")).to_have_value("ID")
    expect(rows.nth(2).locator(".table-columns-name input")).to_have_value("LAST_NAME+FIRST_NAME")
    expect(_field(page, "table")).to_have_value("user_entity")
    assert serious(page) == []
    save(page)
    stored = page.request.get("/api/get-syncer", params={"id": f"admin/{name}"}).json()["data"]
    assert stored["type"] == "Keycloak" and len(stored["tableColumns"]) == 9 and stored["table"] == "user_entity"
    choose(page, _field(page, "type"), "Database")
    expect(rows).to_have_count(0)


def test_the_list_syncs_and_says_how_it_went(visit, page, api_login, accounts, server, upstream):
    from iam_console.models import Organization, Syncer, User

    suffix = uuid.uuid4().hex[:8]
    org, good, bad = f"sync-{suffix}", f"good-{suffix}", f"bad-{suffix}"
    columns = [{"name": "username", "type": "string", "casdoorName": "Name", "isKey": True, "isHashed": True,
                "values": []},
               {"name": "email", "type": "string", "casdoorName": "Email", "isKey": False, "isHashed": True,
                "values": []}]
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=org, display_name="Sync Org", password_type="argon2id"))
        for name, table in ((good, "people"), (bad, "missing")):
            db.add(Syncer(owner="admin", name=name, organization=org, type="Database", database_type="sqlite3",
                          database=upstream, table=table, table_columns=columns, sync_interval=10))
    api_login(accounts.admin)
    visit("/syncers")
    choose(page, page.locator("#filter-type"), "LDAP")
    expect(_row(page, good)).to_have_count(0)
    visit("/syncers")
    _search(page, suffix)
    expect(page.locator("#list-table tbody tr")).to_have_count(2)
    assert serious(page) == []
    _row(page, good).get_by_role("button", name="Sync").click()
    expect(page.get_by_text("Successfully synced")).to_be_visible()
    with server_db(server) as db:
        names = set(db.exec(select(User.name).where(User.owner == org)).all())
    assert names == {"ann", "ben"}
    _row(page, bad).get_by_role("button", name="Sync").click()
    expect(page.get_by_text("Syncer failed to sync users: The table missing does not exist")).to_be_visible()
    page.goto(server.url(f"/syncers/{bad}"))
    expect(_field(page, "errorText")).to_contain_text("The table missing does not exist")
