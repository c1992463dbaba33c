"""The webhook edit page: the headers table (a new row is header-{n} / value-{n}; up, down,
delete), the events, the 900x300 read-only preview with an extendedUser sample while "Is user
extended" is on, and the deliveries the server's worker made (with Replay); the organization is
the global admin's alone to change."""

from __future__ import annotations

import re
import time
import uuid

from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.sinks import HttpSink


def _hook(server, organization: str, url: str, events: list[str]) -> str:
    from iam_console.models import Webhook

    name = f"hook-{uuid.uuid4().hex[:8]}"
    with server_db(server) as db:
        db.add(Webhook(owner="admin", name=name, organization=organization, url=url, method="POST",
                       content_type="application/json", events=events, is_enabled=True, secret="e2e-secret",
                       max_retries=3, retry_interval=60))
    return name


def _calls(sink: HttpSink, path: str, count: int, timeout: float = 20) -> list:
    deadline = time.monotonic() + timeout
    while True:
        found = [c for c in list(sink.calls) if c.path == path]
        if len(found) >= count or time.monotonic() > deadline:
            return found
        time.sleep(0.1)


def _cell_input(row, column: str):
    return row.locator(f".headers-{column}").locator("xpath=descendant-or-self::input")


def test_headers_events_preview_and_deliveries(visit, page, api_login, accounts, server):
    from iam_console.models import Webhook

    with HttpSink() as sink:
        # the webhook listens for its own saves: saving the page is the event it delivers
        name = _hook(server, "built-in", f"{sink.url}/e2e", ["update-webhook"])
        api_login(accounts.admin)
        visit(f"/webhooks/{name}")
        expect(page.locator("#field-name")).to_have_value(name)
        expect(page.locator("#webhook-deliveries-empty")).to_be_visible()

        page.click("#headers-add")
        page.click("#headers-add")
        rows = page.locator("#headers-table tbody tr")
        expect(rows).to_have_count(2)
        expect(_cell_input(rows.nth(0), "name")).to_have_value("header-0")
        expect(_cell_input(rows.nth(1), "value")).to_have_value("value-1")
        rows.nth(0).locator(".row-down").click()
        expect(_cell_input(rows.nth(0), "name")).to_have_value("header-1")
        expect(rows.nth(0).locator(".row-up")).to_be_disabled()
        rows.nth(1).locator(".row-delete").click()
        expect(rows).to_have_count(1)
        _cell_input(rows.nth(0), "value").fill("from-the-page")

        page.locator("#field-events-login").click()

        preview = page.locator("#webhook-preview .cm-content")
        expect(preview).to_contain_text('"requestUri"')
        expect(preview).not_to_contain_text("extendedUser")
        page.click("#field-isUserExtended")
        expect(preview).to_contain_text('"extendedUser"')
        expect(preview).to_contain_text('"password": "***"')
        expect(preview).to_have_attribute("aria-readonly", "true")
        box = page.locator("#webhook-preview").bounding_box()
        assert (round(box["width"]), round(box["height"])) == (900, 300), box

        page.click("#edit-save")
        expect(page.get_by_text("Successfully saved")).to_be_visible()
        from sqlmodel import select
        with server_db(server) as db:
            saved = db.exec(select(Webhook).where(Webhook.name == name)).one()
            assert saved.headers == [{"name": "header-1", "value": "from-the-page"}]
            assert sorted(saved.events) == ["login", "update-webhook"] and saved.is_user_extended

        # the save's record was delivered by the server's worker, with the header and the signature
        (call,) = _calls(sink, "/e2e", 1)
        assert call.headers["header-1"] == "from-the-page" and call.headers["X-Webhook-Signature"].startswith("sha256=")
        page.click("#webhook-deliveries-refresh")
        delivery = page.locator("#webhook-deliveries .webhook-delivery").first
        expect(delivery.locator(".webhook-delivery-state")).to_have_text("Success")
        expect(delivery.locator(".webhook-delivery-eventType")).to_have_text("update-webhook")
        expect(delivery.locator(".webhook-delivery-lastStatusCode")).to_have_text("200")
        found = serious(page)
        assert found == [], found

        delivery.locator(".webhook-delivery-replay").click()
        expect(page.get_by_text("Webhook event replay triggered")).to_be_visible()
        assert len(_calls(sink, "/e2e", 2)) == 2


def test_the_organization_is_the_global_admins_to_change(visit, page, api_login, accounts, server):
    name = _hook(server, "acme", "https://hooks.example.com/acme", ["login"])
    api_login(accounts.boss)
    visit(f"/webhooks/{name}")
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-organization")).to_be_disabled()
    visit("/webhooks")
    row = page.locator("#list-table tbody tr").filter(has_text=name)
    expect(row).to_have_count(1)
    expect(row.get_by_role("switch")).to_have_count(3)
    for switch in row.get_by_role("switch").all():
        expect(switch).to_be_disabled()
    expect(row.get_by_role("link", name=re.compile("hooks.example.com"))).to_have_attribute(
        "href", "https://hooks.example.com/acme")

    api_login(accounts.admin)
    visit(f"/webhooks/{name}")
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-organization")).to_be_enabled()
