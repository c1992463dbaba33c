"""The Records screen: a read-only list, 20 a page; its links (organization, user, the client
address's IP lookup); the method filter; the is-triggered switch only for the actions that
trigger; the name column hidden from organization admins; the CSV export of the filtered view;
and a console write recorded with the browser's address and the viewer's language."""

from __future__ import annotations

import csv
import io
import uuid
from pathlib import Path

from playwright.sync_api import expect


def _records(server, rows: list[dict]) -> None:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.models import Record

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            for row in rows:
                db.add(Record(owner=row.get("organization", "acme"), name=uuid.uuid4().hex[:20], **row))
            db.commit()
    finally:
        engine.dispose()


def _search(page, label: str, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name=label, exact=True).click()
    page.fill("#search-value", text)


def _rows(page):
    return page.locator("#list-table tbody tr")


def test_the_list_its_links_filter_and_switches(visit, page, api_login, accounts, server):
    tag = uuid.uuid4().hex[:6]
    _records(server, [
        {"organization": "acme", "user": "acme/alice", "action": "login", "method": "POST", "is_triggered": True,
         "client_ip": "198.51.100.4", "request_uri": f"/api/login?{tag}"},
        {"organization": "acme", "user": "acme/alice", "action": "add-role", "method": "GET",
         "client_ip": "", "request_uri": f"/api/add-role?{tag}"},
    ])
    api_login(accounts.admin)
    visit("/records")
    expect(page.locator("#list-table")).to_be_visible()
    expect(page.locator("#list-add")).to_have_count(0)
    expect(page.locator("#page-size")).to_contain_text("20")
    _search(page, "Request URI", tag)
    expect(_rows(page)).to_have_count(2)

    login = _rows(page).filter(has_text="/api/login")
    expect(login.get_by_role("link", name="acme", exact=True)).to_have_attribute("href", "/organizations/acme")
    expect(login.get_by_role("link", name="acme/alice")).to_have_attribute("href", "/users/acme/alice")
    lookup = login.get_by_role("link", name="198.51.100.4")
    expect(lookup).to_have_attribute("href", "https://ip-lookup.example/198.51.100.4")
    expect(lookup).to_have_attribute("target", "_blank")
    # is-triggered: a read-only switch for a login, nothing for add-role
    switch = login.get_by_role("switch", name="Is triggered")
    expect(switch).to_be_disabled()
    expect(switch).to_have_attribute("data-state", "checked")
    expect(_rows(page).filter(has_text="/api/add-role").get_by_role("switch")).to_have_count(0)

    # the method filter: an exact method
    page.click("#filter-method")
    page.get_by_role("option", name="GET", exact=True).click()
    expect(page.locator("#list-table tbody tr").first).to_contain_text("GET")
    for method in _rows(page).locator("td:nth-child(7)").all_inner_texts():
        assert method == "GET"


def test_the_export_downloads_the_filtered_view(visit, page, api_login, accounts, server):
    tag = uuid.uuid4().hex[:6]
    _records(server, [{"organization": "acme", "user": "acme/alice", "action": f"export-{tag}", "method": "PUT",
                       "request_uri": f"/api/x?{tag}"} for _ in range(3)])
    api_login(accounts.admin)
    visit("/records")
    _search(page, "Action", f"export-{tag}")
    expect(_rows(page)).to_have_count(3)
    with page.expect_download() as download:
        page.click("#list-export")
    text = Path(download.value.path()).read_text(encoding="utf-8")
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 3 and {r["action"] for r in rows} == {f"export-{tag}"}


def test_an_organization_admin_sees_their_records_without_names(visit, page, api_login, accounts, server):
    tag = uuid.uuid4().hex[:6]
    _records(server, [{"organization": "other", "user": "other/x", "action": "login", "request_uri": f"/o?{tag}"},
                      {"organization": "acme", "user": "acme/x", "action": "login", "request_uri": f"/a?{tag}"}])
    api_login(accounts.boss)
    visit("/records")
    expect(page.locator("#list-table")).to_be_visible()
    expect(page.locator("#sort-name")).to_have_count(0)  # the name column is the global admin's
    _search(page, "Request URI", tag)
    expect(_rows(page)).to_have_count(1)
    expect(_rows(page).first).to_contain_text(f"/a?{tag}")


def test_a_console_write_is_recorded_with_address_and_language(visit, page, api_login, accounts, server):
    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import Record

    api_login(accounts.boss)
    visit("/users/acme/boss")
    bio = f"Recorded {uuid.uuid4().hex[:6]}"
    page.fill("#field-bio", bio)
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            record = db.exec(select(Record).where(Record.action == "update-user", Record.user == "acme/boss")
                             .order_by(Record.pk.desc())).first()
    finally:
        engine.dispose()
    assert record is not None and bio in record.object
    assert record.client_ip in ("127.0.0.1", "::1") and record.language == "en"
    assert record.request_uri == "/api/update-user?id=acme/boss"
