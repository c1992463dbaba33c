"""The LDAP server's edit page and its sync page,
against a real OpenLDAP slapd (tests/ldap_server.py, the `directory` fixture):
the fields and their rules, who may change the organization, the directory's
users with their synced/unsynced tags, selection, Sync with its confirmation
and messages, and a synced user signing in with the directory password."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from iam_console.core import builtin as b
from tests import ldap_server
from tests.e2e.steps import server_db

PASSWORD = "E2e-ldap-pass-1"


def _seed(server, directory) -> tuple[str, str]:
    """A fresh organization with its admin, an ordinary user, a physical and a virtual
    group, and an LDAP server pointing at the directory; (organization, LDAP id)."""
    from sqlmodel import Session

    from iam_console import models as m
    from iam_console.db import make_engine
    from iam_console.identity.passwords import hash_password

    org, ident = f"org-ldap-{uuid.uuid4().hex[:6]}", f"ldap-{uuid.uuid4().hex[:6]}"
    record = directory.ldap_record()
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(m.Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                                  password_obfuscator_type="Plain", nav_items=["all"],
                                  account_items=b.default_account_items(), mfa_items=b.default_mfa_items()))
            for name, admin in (("boss", True), ("alice", False)):
                db.add(m.User(owner=org, name=name, uuid=str(uuid.uuid4()), type="normal-user", is_admin=admin,
                              password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
            db.add(m.Group(owner=org, name="staff", display_name="Staff", type="Physical", parent_id=org,
                           is_top_group=True))
            db.add(m.Group(owner=org, name="team", display_name="Team", type="Virtual", parent_id=org,
                           is_top_group=True))
            db.add(m.Ldap(owner=org, name=ident, server_name=record["serverName"], host=record["host"],
                          port=record["port"], username=record["username"], password=record["password"],
                          base_dn=record["baseDn"], filter=record["filter"], filter_fields=["uid"],
                          password_type="SSHA"))
            db.commit()
    finally:
        engine.dispose()
    return org, ident


def _login(page, org: str, name: str, password: str) -> None:
    answer = page.request.post("/api/login", data={"organization": org, "username": name, "password": password,
                                                   "autoSignin": True, "type": "login"}).json()
    assert answer["status"] == "ok", answer


def _stored(page, org: str, ident: str) -> dict:
    answer = page.request.get(f"/api/get-ldap?id={org}/{ident}").json()
    assert answer["status"] == "ok", answer
    return answer["data"]


def test_the_edit_page_fields_and_rules(visit, page, api_login, accounts, server, directory):
    org, ident = _seed(server, directory)
    api_login(accounts.admin)
    visit(f"/ldap/{org}/{ident}")
    expect(page.locator("#field-serverName")).to_have_value("Test directory")
    expect(page.locator("#field-owner")).to_be_enabled()  # the global admin may move it
    expect(page.locator("#field-name")).to_have_value(ident)
    expect(page.locator("#field-name")).to_be_disabled()  # the ID is read-only
    expect(page.locator("#field-password")).to_have_value("***")
    expect(page.locator("#field-filterFields-uid")).to_be_checked()
    page.click("#field-filterFields-mail")
    expect(page.locator("#field-filterFields-mail")).to_be_checked()

    # the default group: the organization's groups with their type's icon
    page.click("#field-defaultGroup")
    expect(page.get_by_role("option", name=f"{org}/staff").locator(".choice-icon-physical")).to_be_visible()
    expect(page.get_by_role("option", name=f"{org}/team").locator(".choice-icon-virtual")).to_be_visible()
    page.get_by_role("option", name=f"{org}/staff").click()

    # auto sync above 0 warns that every user goes to the organization
    warning = page.locator("#ldap-auto-sync-warning")
    expect(warning).to_have_count(0)
    page.fill("#field-autoSync", "5")
    expect(warning).to_contain_text("will sync all users to specify organization")
    page.fill("#field-autoSync", "0")
    expect(warning).to_have_count(0)

    # a port out of range is refused and nothing is saved
    page.fill("#field-port", "70000")
    page.click("#edit-save-bottom")  # the toasts cover the top row
    expect(page.get_by_text(re.compile(r"Update LDAP server failed: .*65535"))).to_be_visible()
    assert _stored(page, org, ident)["port"] == directory.port
    assert _stored(page, org, ident)["filterFields"] == ["uid"]

    page.fill("#field-port", str(directory.port))
    page.fill("#field-autoSync", "15")
    page.click("#edit-save-bottom")  # the toasts cover the top row
    expect(page.get_by_text("Update LDAP server success")).to_be_visible()
    saved = _stored(page, org, ident)
    assert (saved["autoSync"], saved["filterFields"], saved["defaultGroup"]) == (15, ["uid", "mail"], f"{org}/staff")
    assert saved["password"] == "***"  # the masked value sent back kept the stored password

    page.click("#edit-save-exit-bottom")  # the toasts cover the top row
    expect(page).to_have_url(server.url(f"/organizations/{org}"))


def test_organization_admins_edit_their_own_servers_only(visit, page, server, directory):
    org, ident = _seed(server, directory)
    _login(page, org, "boss", PASSWORD)
    visit(f"/ldap/{org}/{ident}")
    expect(page.locator("#field-serverName")).to_have_value("Test directory")
    expect(page.locator("#field-owner")).to_be_disabled()  # the organization: the global admin's alone
    other, other_ident = _seed(server, directory)
    visit(f"/ldap/{other}/{other_ident}")  # another organization's server: answered as a missing one
    expect(page).to_have_url(server.url("/404"))


def test_an_ordinary_user_reaches_neither_page(visit, page, server, directory):
    org, ident = _seed(server, directory)
    _login(page, org, "alice", PASSWORD)
    visit(f"/ldap/{org}/{ident}")
    expect(page).to_have_url(server.url("/403"))
    visit(f"/ldap/sync/{org}/{ident}")
    expect(page).to_have_url(server.url("/403"))


def _row(page, uid: str):
    return page.locator(f'tr.ldap-row[data-uid="{uid}"]')


def _sort_descending(page, rows) -> None:
    """Sort by UidNumber ascending, then descending, waiting for each order to show."""
    page.click("#ldap-sort-uidNumber")
    expect(rows.first).to_have_attribute("data-uid", "user0001")
    page.click("#ldap-sort-uidNumber")
    expect(rows.first).to_have_attribute("data-uid", "user0300")


def test_syncing_selected_users_from_the_directory(visit, page, server, directory):
    org, ident = _seed(server, directory)
    _login(page, org, "boss", PASSWORD)
    visit(f"/ldap/{org}/{ident}")
    page.click("#ldap-sync-open")
    expect(page).to_have_url(server.url(f"/ldap/sync/{org}/{ident}"))
    rows = page.locator("tr.ldap-row")
    expect(rows).to_have_count(10)
    expect(page.locator("#ldap-list-total")).to_have_text("Total 300")
    expect(page.locator("#ldap-sync")).to_be_disabled()  # nothing selected yet
    expect(page.locator(".ldap-unsynced")).to_have_count(10)

    # the size changer and the quick jumper
    page.click("#ldap-page-size")
    page.get_by_role("option", name="20", exact=True).click()
    expect(rows).to_have_count(20)
    expect(page.locator("#ldap-page-current")).to_have_text("1 / 15")
    first_on_page_one = rows.first.get_attribute("data-uid")
    page.fill("#ldap-page-jump", "15")
    page.press("#ldap-page-jump", "Enter")
    expect(page.locator("#ldap-page-current")).to_have_text("15 / 15")
    expect(rows.first).not_to_have_attribute("data-uid", first_on_page_one)
    expect(rows).to_have_count(20)
    page.click("#ldap-page-size")
    page.get_by_role("option", name="10", exact=True).click()
    expect(page.locator("#ldap-page-current")).to_have_text("1 / 30")
    expect(rows).to_have_count(10)

    # sorted by UidNumber, descending: the last users first (each click seen before the next)
    _sort_descending(page, rows)
    for uid in ("user0300", "user0299", "user0297"):
        _row(page, uid).locator(".ldap-select").click()
    expect(page.locator("#ldap-selected")).to_have_text("3 selected")
    page.click("#ldap-sync")
    expect(page.locator("#ldap-sync-question")).to_have_text("Please confirm to sync selected users")
    page.click("#ldap-sync-confirm")
    # all went well: on to the organization's users, where they are
    expect(page).to_have_url(server.url(f"/organizations/{org}/users"), timeout=30_000)
    users = page.request.get(f"/api/get-users?owner={org}&pageSize=50").json()["data"]
    assert {"user0300", "user0299", "user0297"} <= {u["name"] for u in users}

    # back on the sync page: synced tags, their checkboxes disabled, the uid a link to the user
    visit(f"/ldap/sync/{org}/{ident}")
    _sort_descending(page, rows)
    for uid in ("user0300", "user0299", "user0297"):
        expect(_row(page, uid).locator(".ldap-synced")).to_have_text("synced")
        expect(_row(page, uid).locator(".ldap-select")).to_be_disabled()
    expect(_row(page, "user0298").locator(".ldap-unsynced")).to_have_text("unsynced")
    expect(_row(page, "user0300").locator(".ldap-user-link")).to_have_attribute("href", f"/users/{org}/user0300")

    # the Group ID filter
    page.click("#ldap-filter-group")
    page.get_by_role("option", name="501", exact=True).click()
    expect(page.locator("#ldap-list-total")).to_have_text("Total 100")

    # a user synced elsewhere meanwhile: the 'already exist' message, and no move
    page.click("#ldap-filter-group")
    page.get_by_role("option", name="All", exact=True).click()
    expect(page.locator("#ldap-list-total")).to_have_text("Total 300")
    _row(page, "user0298").locator(".ldap-select").click()
    listed = page.request.get(f"/api/get-ldap-users?id={org}/{ident}").json()["data"]["users"]
    entry = next(u for u in listed if u["uid"] == "user0298")
    assert page.request.post(f"/api/sync-ldap-users?id={org}/{ident}", data=[entry],
                             headers={"Origin": server.base_url}).json()["status"] == "ok"
    page.click("#ldap-sync")
    page.click("#ldap-sync-confirm")
    expect(page.get_by_text("User [User 0298] is already exist")).to_be_visible()
    expect(page).to_have_url(server.url(f"/ldap/sync/{org}/{ident}"))

    # a synced user signs in on the login page with the directory password
    page.context.clear_cookies()
    visit(f"/login/{org}")
    page.fill("#login-username", "user0299")
    page.fill("#login-password", "wrong-password")
    page.click("#login-submit")
    expect(page.get_by_text(re.compile("password or code is incorrect"))).to_be_visible()
    page.fill("#login-password", ldap_server.password_of("user0299"))
    page.click("#login-submit")
    expect(page.locator("#user-menu")).to_be_visible(timeout=30_000)
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"]) == (org, "user0299")


def test_the_sync_pages_heading_names_the_server(visit, page, api_login, accounts, server):
    """From the record, whether or not the directory answers: its name, else its ID."""
    from iam_console import models as m

    api_login(accounts.admin)
    for server_name in ("Head office", ""):
        ident = f"ldap-{uuid.uuid4().hex[:6]}"
        with server_db(server) as db:
            # a port nothing listens on: the directory's read fails, the heading stays
            db.add(m.Ldap(owner="acme", name=ident, server_name=server_name, host="127.0.0.1", port=9,
                          base_dn="dc=example,dc=org", username="cn=admin,dc=example,dc=org"))
        visit(f"/ldap/sync/acme/{ident}")
        expect(page.locator("#ldap-sync-heading")).to_have_text(f"LDAP sync: {server_name or ident}")
