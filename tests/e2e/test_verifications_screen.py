"""The Verifications screen: a read-only list; '(empty)' for a code of no organization; the
client address's IP lookup without its trailing ': '; the code shown only to the admins of
its organization (masked by the service for everyone else); is-used shown."""

from __future__ import annotations

import uuid

from playwright.sync_api import expect


def _verification(server, owner: str, code: str, receiver: str, used: bool = False) -> None:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.models import Verification

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Verification(owner=owner, name=uuid.uuid4().hex, type="Email", user="alice", provider="mail",
                                receiver=receiver, code=code, remote_addr="198.51.100.2: ", is_used=used))
            db.commit()
    finally:
        engine.dispose()


def _find(page, receiver: str):
    page.click("#search-field")
    page.get_by_role("option", name="Receiver", exact=True).click()
    page.fill("#search-value", receiver)
    return page.locator("#list-table tbody tr").filter(has_text=receiver)


def test_the_list_shows_empty_organizations_lookup_links_and_masks_codes(visit, page, api_login, accounts, server):
    tag = uuid.uuid4().hex[:6]
    _verification(server, "acme", "604211", f"acme-{tag}@example.com", used=True)
    _verification(server, "admin", "918273", f"none-{tag}@example.com")
    api_login(accounts.admin)
    visit("/verifications")
    expect(page.locator("#list-add")).to_have_count(0)

    acme = _find(page, f"acme-{tag}")
    expect(acme).to_have_count(1)
    expect(acme.get_by_role("link", name="acme", exact=True)).to_have_attribute("href", "/organizations/acme")
    expect(acme).to_contain_text("***")  # another organization's code: not the global admin's to read
    expect(acme).not_to_contain_text("604211")
    expect(acme.get_by_role("switch", name="Is used")).to_have_attribute("data-state", "checked")
    lookup = acme.get_by_role("link", name="198.51.100.2:")
    expect(lookup).to_have_attribute("href", "https://ip-lookup.example/198.51.100.2")

    none = _find(page, f"none-{tag}")
    expect(none).to_contain_text("(empty)")
    expect(none.get_by_role("link", name="(empty)")).to_have_count(0)


def test_the_organizations_admin_reads_its_codes(visit, page, api_login, accounts, server):
    tag = uuid.uuid4().hex[:6]
    _verification(server, "acme", "550123", f"boss-{tag}@example.com")
    api_login(accounts.boss)
    visit("/verifications")
    row = _find(page, f"boss-{tag}")
    expect(row).to_contain_text("550123")
