"""The pages of kinds the API served without one: access keys (the secret shown once, on the page
the list's Add opens, then never again), orders (Pay on a Created order: the pay page with the
order's products, paid through a provider, then its payment) and the webhook event log (state,
attempts, last error, Replay and Delete), each as the global admin and as an organization admin,
who meets their own organization's records only. axe on every page. The generated walk of
tests/e2e/test_resource_screens.py walks their lists and edit pages too."""

from __future__ import annotations

import json
import re
import time
import uuid
from decimal import Decimal

import httpx
from playwright.sync_api import expect
from sqlmodel import select

from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.sinks import HttpSink

RESULT = re.compile(r"/payments/acme/payment_[^/]+/result$")


def _clean(page, where: str) -> None:
    found = serious(page)
    assert found == [], f"{where}: {found}"


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _search(page, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", text)


# --- keys ---

def _stored_key(server, owner: str, name: str):
    from iam_console import models as m

    with server_db(server) as db:
        return db.exec(select(m.Key.pk, m.Key.access_key, m.Key.display_name, m.Key.access_secret)
                       .where(m.Key.owner == owner, m.Key.name == name)).one()


def test_a_keys_secret_is_shown_once_then_only_masked(visit, page, api_login, accounts, server):
    """The organization admin's Add makes a key of their organization; its page shows the secret
    once, with Copy, and the secret works (the key acting as its user); a reload, the list and the
    API show it no more."""
    from iam_console import models as m

    api_login(accounts.boss)
    visit("/keys")
    expect(page.locator("#list-table")).to_be_visible()
    _clean(page, "/keys")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/keys/acme/key_[^/?]+\?mode=add"))
    secret = page.locator("#once-accessSecret")
    expect(secret).to_have_value(re.compile(r".{24,}"))
    shown = secret.input_value()
    expect(page.locator("#edit-shown-once")).to_contain_text("shown only this once")
    _clean(page, "/keys/[owner]/[name] (the secret shown)")
    name = page.locator("#field-name").input_value()
    access_key = page.locator("#field-accessKey").input_value()
    assert page.locator("#field-owner").input_value() == "acme" and page.locator("#field-owner").is_disabled()
    assert page.locator("#field-accessKey").is_disabled()
    page.fill("#field-displayName", "Deploy key")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(secret).to_have_value(shown)  # saving the page keeps it in view

    stored = _stored_key(server, "acme", name)
    assert (stored.access_key, stored.display_name) == (access_key, "Deploy key")
    assert stored.access_secret.startswith("sha256:") and shown not in stored.access_secret
    # the shown secret is the key's: as the user it acts as, it reads that user
    with server_db(server) as db:
        db.exec(m.Key.__table__.update().where(m.Key.pk == stored.pk).values(type="User", user=accounts.alice.username))
    answer = httpx.get(server.url("/api/get-account"), params={"accessKey": access_key, "accessSecret": shown}).json()
    assert answer["data"]["name"] == accounts.alice.username, answer
    wrong = httpx.get(server.url("/api/get-account"), params={"accessKey": access_key, "accessSecret": "x" * 32})
    assert wrong.json()["status"] == "error"

    visit.reload()  # a reload shows it no more
    expect(page.locator("#field-displayName")).to_have_value("Deploy key")
    expect(page.locator("#edit-shown-once")).to_have_count(0)
    expect(page.locator("#field-user")).to_be_visible()  # a User key names its user
    visit("/keys")
    _search(page, name)
    expect(_row(page, name)).to_have_count(1)
    expect(_row(page, name)).to_contain_text(access_key)
    assert shown not in page.content()
    visit(f"/keys/acme/{name}")
    expect(page.locator("#field-displayName")).to_have_value("Deploy key")
    expect(page.locator("#edit-shown-once")).to_have_count(0)


def test_keys_stay_in_their_organization(visit, page, api_login, accounts, server):
    """The global admin lists every organization's keys; an organization admin only theirs, and
    another organization's key is a missing page to them."""
    from iam_console import models as m

    suffix = uuid.uuid4().hex[:6]
    with server_db(server) as db:
        for owner in ("acme", "built-in"):
            db.add(m.Key(owner=owner, name=f"k-{owner}-{suffix}", organization=owner, type="General",
                         access_key=uuid.uuid4().hex, access_secret="sha256:" + "0" * 64, state="Active"))
    api_login(accounts.admin)
    visit("/keys")
    _search(page, suffix)
    expect(page.locator("#list-total")).to_have_text("Total 2")
    _clean(page, "/keys (global admin)")

    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/keys")
    _search(page, suffix)
    expect(page.locator("#list-total")).to_have_text("Total 1")
    expect(_row(page, f"k-acme-{suffix}")).to_have_count(1)
    visit(f"/keys/built-in/k-built-in-{suffix}")
    page.wait_for_url(re.compile(r"/404$"))


# --- orders ---

def _order(server, owner: str, user: str, state: str = "Created") -> tuple[str, str]:
    """A product of `owner` paid through its Dummy provider, and an order of one of it: (order, product)."""
    from iam_console import models as m
    from iam_console.commerce.tables import Order, Product

    suffix = uuid.uuid4().hex[:6]
    product, order, provider = f"tea-{suffix}", f"order-{suffix}", f"dummy-{suffix}"
    with server_db(server) as db:
        db.add(m.Provider(owner=owner, name=provider, display_name="Dummy pay", category="Payment", type="Dummy"))
        db.add(Product(owner=owner, name=product, display_name=f"Green tea {suffix}", price=Decimal("3.50"),
                       currency="USD", quantity=10, state="Published", providers=[provider]))
        db.add(Order(owner=owner, name=order, display_name=order, user=user, price=Decimal("7.00"), currency="USD",
                     state=state, products=[{"owner": owner, "name": product, "displayName": f"Green tea {suffix}",
                                             "price": "3.50", "currency": "USD", "quantity": 2}]))
    return order, product


def test_an_organization_admin_pays_a_created_order(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Order, Payment

    order, product = _order(server, "acme", accounts.alice.username)
    paid_order, _ = _order(server, "acme", accounts.alice.username, state="Paid")
    api_login(accounts.boss)
    visit("/orders")
    _search(page, order)
    row = _row(page, order)
    expect(row).to_contain_text("Green tea")
    expect(row.get_by_role("link", name="Pay", exact=True)).to_be_visible()
    _clean(page, "/orders")
    visit("/orders")
    _search(page, paid_order)
    expect(_row(page, paid_order)).to_have_count(1)
    # Pay is for Created orders
    expect(_row(page, paid_order).get_by_role("link", name="Pay", exact=True)).to_have_count(0)

    visit("/orders")
    _search(page, order)
    _row(page, order).get_by_role("link", name="Pay", exact=True).click()
    page.wait_for_url(re.compile(f"/orders/acme/{order}/pay$"))
    expect(page.locator("#order-id")).to_have_text(f"acme/{order}")
    expect(page.locator("#order-state")).to_have_text("Created")
    expect(page.locator("#order-price")).to_have_text("$7.00")
    products = page.locator("#order-products .order-product")
    expect(products).to_have_count(1)
    expect(products.first).to_contain_text(product)
    expect(products.first).to_contain_text("$3.50")
    expect(page.locator("#order-payment")).to_have_count(0)  # no payment yet
    _clean(page, "/orders/[owner]/[name]/pay")
    page.locator(".order-pay-provider").get_by_text("Dummy pay", exact=True).click()
    expect(page).to_have_url(RESULT)
    expect(page.locator("#payment-state")).to_have_text("Paid")

    with server_db(server) as db:
        stored = db.exec(select(Order).where(Order.owner == "acme", Order.name == order)).one()
        payment = db.exec(select(Payment).where(Payment.owner == "acme", Payment.name == stored.payment)).one()
        assert (stored.state, payment.state, payment.order, payment.user) == ("Paid", "Paid", order,
                                                                             accounts.alice.username)
        payment_name = payment.name
    visit(f"/orders/acme/{order}/pay")  # paid: its payment, and nothing to pay
    expect(page.locator("#order-state")).to_have_text("Paid")
    expect(page.locator("#order-payment")).to_have_text(payment_name)
    expect(page.locator(".order-pay-provider")).to_have_count(0)
    visit("/orders")
    _search(page, order)
    expect(_row(page, order).get_by_role("link", name="Pay", exact=True)).to_have_count(0)
    expect(_row(page, order).get_by_role("link", name=payment_name)).to_be_visible()


def test_orders_stay_in_their_organization(visit, page, api_login, accounts, server):
    """Another organization's order is neither listed nor payable by an organization admin; the
    global admin lists both."""
    theirs, _ = _order(server, "built-in", "admin")
    ours, _ = _order(server, "acme", accounts.alice.username)
    api_login(accounts.boss)
    visit("/orders")
    _search(page, "order-")
    expect(_row(page, ours)).to_have_count(1)
    expect(_row(page, theirs)).to_have_count(0)
    visit(f"/orders/built-in/{theirs}/pay")
    expect(page.locator("#order-error")).to_have_text("Unauthorized operation")
    expect(page.locator(".order-pay-provider")).to_have_count(0)
    _clean(page, "/orders/[owner]/[name]/pay (refused)")

    page.context.clear_cookies()
    api_login(accounts.admin)
    visit("/orders")
    _search(page, "order-")
    expect(_row(page, ours)).to_have_count(1)
    expect(_row(page, theirs)).to_have_count(1)


# --- webhook events ---

def _event(server, hook: str, organization: str, state: str, error: str = "") -> str:
    from iam_console.models import WebhookEvent

    name = f"event-{uuid.uuid4().hex[:10]}"
    with server_db(server) as db:
        db.add(WebhookEvent(owner="admin", name=name, webhook=f"admin/{hook}", organization=organization,
                            event_type="update-user", state=state, attempt_count=3, max_retries=3,
                            payload=json.dumps({"id": 1, "action": "update-user", "organization": organization}),
                            last_status_code=500 if error else 200, last_error=error))
    return name


def _hook(server, organization: str, url: str) -> str:
    from iam_console.models import Webhook

    name = f"hook-{uuid.uuid4().hex[:8]}"
    with server_db(server) as db:
        db.add(Webhook(owner="admin", name=name, organization=organization, url=url, method="POST",
                       content_type="application/json", events=["update-user"], is_enabled=True,
                       secret="e2e-secret", max_retries=3, retry_interval=60))
    return name


def _state_of(server, name: str, wanted: str, timeout: float = 20) -> str:
    from iam_console.models import WebhookEvent

    deadline = time.monotonic() + timeout
    while True:
        with server_db(server) as db:
            state = db.exec(select(WebhookEvent.state).where(WebhookEvent.name == name)).one()
        if state == wanted or time.monotonic() > deadline:
            return state
        time.sleep(0.2)


def test_an_organization_admin_replays_and_deletes_their_webhook_events(visit, page, api_login, accounts, server):
    from iam_console import models as m

    with HttpSink() as sink:
        hook = _hook(server, "acme", f"{sink.url}/events")
        other = _hook(server, "built-in", f"{sink.url}/other")
        failed = _event(server, hook, "acme", "Failed", "The receiver answered 500")
        delivered = _event(server, hook, "acme", "Success")
        foreign = _event(server, other, "built-in", "Failed", "The receiver answered 503")

        api_login(accounts.boss)
        visit("/webhook-events")
        _search(page, "event-")
        expect(_row(page, failed)).to_have_count(1)
        expect(_row(page, delivered)).to_have_count(1)
        expect(_row(page, foreign)).to_have_count(0)  # another organization's
        row = _row(page, failed)
        expect(row).to_contain_text("The receiver answered 500")
        expect(row).to_contain_text("Failed")
        expect(row.get_by_role("link", name=f"admin/{hook}")).to_have_attribute("href", f"/webhooks/{hook}")
        # delivered already: nothing to replay
        expect(_row(page, delivered).get_by_role("button", name="Replay", exact=True)).to_have_count(0)
        expect(page.locator("#list-add")).to_have_count(0)
        _clean(page, "/webhook-events")

        # Replay: the worker sends it again, and it is delivered this time
        row.get_by_role("button", name="Replay", exact=True).click()
        expect(page.get_by_text("Webhook event replay triggered")).to_be_visible()
        assert _state_of(server, failed, "Success") == "Success"
        assert [c.headers.get("X-Webhook-Id") for c in sink.calls if c.path == "/events"] == [failed]
        assert not any(c.path == "/other" for c in sink.calls)
        with server_db(server) as db:
            replayed = db.exec(select(m.Record.object).where(m.Record.action == "replay-webhook-event",
                                                             m.Record.user == "acme/boss")).all()
        assert any(failed in (text or "") for text in replayed)

        # Delete, with its question
        visit("/webhook-events")
        _search(page, "event-")
        _row(page, delivered).get_by_role("button", name="Delete").click()
        expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {delivered} ?")
        page.click("#delete-confirm")
        expect(page.get_by_text("Successfully deleted")).to_be_visible()
        expect(_row(page, delivered)).to_have_count(0)

        # the global admin sees every organization's, narrowed by the state filter
        page.context.clear_cookies()
        api_login(accounts.admin)
        visit("/webhook-events")
        _search(page, "event-")
        expect(_row(page, foreign)).to_have_count(1)
        expect(_row(page, failed)).to_have_count(1)
        page.click("#filter-state")
        page.get_by_role("option", name="Failed", exact=True).click()
        expect(_row(page, failed)).to_have_count(0)  # delivered since
        expect(_row(page, foreign)).to_have_count(1)
        expect(page.get_by_role("listbox")).to_have_count(0)
        page.mouse.move(0, 0)  # the pointer off the row it chose over: axe judges the page at rest
        _clean(page, "/webhook-events (global admin, filtered)")


def test_an_ordinary_user_gets_no_webhook_events(visit, page, api_login, accounts):
    api_login(accounts.alice)
    visit("/webhook-events")
    expect(page.locator("#list-forbidden")).to_be_visible()


def test_the_menu_has_the_pages_where_casdoor_puts_them(visit, page, api_login, accounts):
    """Keys under Identity, Orders under Business & Payments, Webhook Events under Admin: an
    organization admin's menu too."""
    api_login(accounts.boss)
    visit("/")
    for group, item, route in (("identity", "keys", "/keys"), ("business", "orders", "/orders"),
                               ("admin", "webhook-events", "/webhook-events")):
        page.click(f"#menu-group-{group}")
        page.click(f"#menu-item-{item}")
        page.wait_for_url(re.compile(f"{route}$"))
        expect(page.locator("#list-table")).to_be_visible()
