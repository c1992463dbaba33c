"""The tickets' two screens in the browser: an ordinary user opens a ticket from the menu's
Tickets entry, writes it, posts to its thread and closes it; the organization's admin finds it in
the list, answers (the answer shows the Admin badge) and moves it on; another organization's
ticket stays out of both lists. axe-core checks the list and the edit page with its thread."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import choose, server_db
from tests.e2e.test_accessibility import report


def _accessible(page, where: str) -> None:
    found = serious(page)
    report(where, found)
    assert found == [], f"{where}: critical or serious WCAG violations"


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _post(page, text: str) -> None:
    page.get_by_label("New message").fill(text)
    page.get_by_role("button", name="Send").click()
    expect(page.get_by_text("Successfully sent")).to_be_visible()
    expect(page.locator("#ticket-new-message")).to_have_value("")


def test_a_user_and_their_admin_work_a_ticket_through_its_thread(visit, page, api_login, accounts, server):
    from iam_tickets.models import Ticket

    elsewhere = f"other-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:  # another organization's ticket: in neither list below
        db.add(Ticket(owner="built-in", name=elsewhere, title="Not yours", user="built-in/admin", state="Open"))

    api_login(accounts.alice)
    visit("/")
    expect(page.locator("#welcome")).to_be_visible()
    page.click("#menu-group-admin")
    expect(page.locator("#menu-item-tickets")).to_have_attribute("href", "/tickets")
    page.keyboard.press("Escape")
    visit("/tickets")
    expect(page.locator("#list-table")).to_be_visible()
    expect(_row(page, elsewhere)).to_have_count(0)
    _accessible(page, "/tickets")

    page.click("#list-add")
    page.wait_for_url(re.compile(r"/tickets/acme/ticket_\w+\?mode=add"))
    expect(page.locator("#field-name")).to_have_value(re.compile(r"^ticket_"))
    name = page.locator("#field-name").input_value()
    expect(page.locator("#field-state")).to_have_text("Open")
    page.fill("#field-title", "The invoice page fails")
    page.fill("#field-content", "It answers 500 since Monday.")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-cancel")).to_have_count(0)
    expect(page.locator("#field-user")).to_have_value("acme/alice")  # the server's, never typed
    expect(page.locator("#field-user")).to_be_disabled()
    expect(page.locator("#field-name")).to_be_disabled()  # an admin's to change

    expect(page.locator("#ticket-messages-empty")).to_have_text("No messages yet")
    expect(page.get_by_role("button", name="Send")).to_be_disabled()
    _post(page, "Any news?")
    thread = page.locator("#ticket-messages .ticket-message")
    expect(thread).to_have_count(1)
    expect(thread.first.locator(".ticket-message-author")).to_have_text("acme/alice")
    expect(thread.first.locator(".ticket-message-text")).to_have_text("Any news?")
    expect(thread.first.locator(".ticket-admin")).to_have_count(0)
    _accessible(page, "/tickets/[p0]/[p1]")

    # a user sets the state only to Closed: the server refuses the rest, and nothing is saved
    choose(page, page.locator("#field-state"), "Resolved")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile(r"Failed to save: A user can only close their ticket"))).to_be_visible()

    api_login(accounts.boss)
    visit("/tickets")
    expect(page.locator("#list-table")).to_be_visible()
    expect(_row(page, name)).to_have_count(1)
    expect(_row(page, elsewhere)).to_have_count(0)
    _row(page, name).get_by_role("link", name=name).click()
    page.wait_for_url(re.compile(f"/tickets/acme/{name}$"))
    expect(page.locator("#field-title")).to_have_value("The invoice page fails")
    expect(page.locator("#field-state")).to_have_text("Open")
    _post(page, "We are on it.")
    thread = page.locator("#ticket-messages .ticket-message")
    expect(thread).to_have_count(2)
    expect(thread.nth(1).locator(".ticket-message-author")).to_have_text("acme/boss")
    expect(thread.nth(1).locator(".ticket-admin")).to_have_text("Admin")
    choose(page, page.locator("#field-state"), "In Progress")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    _accessible(page, "/tickets/[p0]/[p1] (admin)")

    with server_db(server) as db:
        from sqlmodel import select

        stored = db.exec(select(Ticket).where(Ticket.owner == "acme", Ticket.name == name)).one()
        assert stored.state == "In Progress" and stored.user == "acme/alice"
        assert [(m["author"], m["isAdmin"]) for m in stored.messages] == [("acme/alice", False), ("acme/boss", True)]
