"""The Business & Payments screens' own rules, beyond the generated walk: a product's price
hidden for a recharge product (its recharge options shown instead), payment providers alone
offered, the live buy-page preview and the Test buy page link; a plan's product locked and not
deletable; the payment's invoice fields (Paid only, Individual titling, read-only once invoiced,
the checks' messages); a plan's currencies, periods, providers and role; a pricing's trial and
its Copy pricing page URL; the subscriptions' coloured state badges, the state an admin's alone and
the approver it sets, the end computed; the transaction's read-only edit page. axe on each page."""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime

from playwright.sync_api import expect
from sqlmodel import select

from tests.e2e.axe import serious
from tests.e2e.steps import as_page, choose, pick, server_db


def _field(page, key: str):
    return page.locator(f"#field-{key}")


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def _toasts_gone(page) -> None:
    expect(page.locator("[data-sonner-toast]")).to_have_count(0, timeout=15_000)


def _search(page, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", text)


def _providers(server, suffix: str) -> tuple[str, str]:
    """A payment provider and an email provider of acme."""
    from iam_console.models import Provider

    pay, mail = f"pay-{suffix}", f"mail-{suffix}"
    with server_db(server) as db:
        db.add(Provider(owner="acme", name=pay, display_name="Pay", category="Payment", type="Dummy"))
        db.add(Provider(owner="acme", name=mail, display_name="Mail", category="Email", type="Default"))
    return pay, mail


def test_a_product_recharge_providers_and_preview(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Product

    suffix = uuid.uuid4().hex[:6]
    pay, mail = _providers(server, suffix)
    name = f"prod-{suffix}"
    with server_db(server) as db:
        db.add(Product(owner="acme", name=name, display_name="Gold", price=12.5, currency="USD", quantity=5,
                       state="Published", detail="A year of gold"))
    api_login(accounts.boss)
    visit(f"/products/acme/{name}")
    expect(_field(page, "displayName")).to_have_value("Gold")
    preview = page.locator("#product-preview")
    expect(preview.locator("#product-preview-name")).to_have_text("Gold")
    expect(preview.locator("#product-preview-price")).to_have_text("$12.5 (USD)")
    expect(preview.locator("#product-preview-detail")).to_have_text("A year of gold")
    expect(preview.locator("#product-preview-no-provider")).to_be_visible()
    expect(page.locator("#product-test-buy")).to_have_attribute("href", f"/products/acme/{name}/buy")
    assert serious(page) == []

    # the preview follows the form
    _field(page, "displayName").fill("Silver")
    expect(preview.locator("#product-preview-name")).to_have_text("Silver")
    choose(page, _field(page, "currency"), "EUR")
    expect(preview.locator("#product-preview-price")).to_have_text("€12.5 (EUR)")

    # only payment providers are offered
    page.click("#field-providers")
    page.locator("input.pick-search, .pick-search input").first.fill(suffix)
    expect(page.locator(".pick-option").filter(has_text=pay)).to_have_count(1)
    expect(page.locator(".pick-option").filter(has_text=mail)).to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator(".pick-option")).to_have_count(0)
    pick(page, "providers", pay, typed=suffix)
    expect(preview.locator(".product-preview-provider")).to_have_text([pay])
    expect(preview.locator(".product-preview-provider")).to_be_disabled()  # a preview pays nothing

    # a recharge product: no price, its recharge options and the custom amount instead
    _field(page, "isRecharge").click()
    expect(_field(page, "price")).to_have_count(0)
    expect(preview.locator("#product-preview-price")).to_have_count(0)
    _field(page, "rechargeOptions").fill("10, 25.5")
    expect(preview.locator(".product-preview-option")).to_have_text(["€10 (EUR)", "€25.5 (EUR)"])
    expect(preview.locator("#product-preview-custom-amount")).to_be_visible()
    _field(page, "disableCustomRecharge").click()
    expect(preview.locator("#product-preview-custom-amount")).to_have_count(0)
    assert serious(page) == []
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        saved = db.exec(select(Product).where(Product.owner == "acme", Product.name == name)).one()
        assert (saved.display_name, saved.currency, saved.is_recharge, saved.recharge_options, saved.providers,
                saved.disable_custom_recharge) == ("Silver", "EUR", True, [10.0, 25.5], [pay], True)

    # back to a plain product: the price again
    _toasts_gone(page)
    _field(page, "isRecharge").click()
    expect(_field(page, "price")).to_be_visible()
    expect(_field(page, "rechargeOptions")).to_have_count(0)


def test_a_plans_product_is_locked_and_not_deletable(visit, page, api_login, accounts, server):
    suffix = uuid.uuid4().hex[:6]
    api_login(accounts.boss)
    plan = f"plan-{suffix}"
    added = page.request.post("/api/add-plan", data={"owner": "acme", "name": plan, "displayName": "Gold",
                                                     "price": 9, "currency": "USD", "period": "Monthly"},
                              headers=as_page(page)).json()
    assert added["status"] == "ok", added
    product = page.request.get(f"/api/get-plan?id=acme/{plan}").json()["data"]["product"]
    visit(f"/products/acme/{product}")
    expect(_field(page, "displayName")).to_have_value(f"Product for Plan {plan}/Gold/Monthly")
    for key in ("name", "tag", "currency", "price", "quantity", "sold", "providers"):
        expect(_field(page, key)).to_be_disabled()
    expect(_field(page, "displayName")).to_be_enabled()
    expect(_field(page, "owner")).to_be_disabled()
    assert serious(page) == []
    # the rest saves as any product's
    _field(page, "description").fill("Gold, monthly")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()

    visit("/products")
    _search(page, product)
    expect(_row(page, product)).to_have_count(1)
    expect(_row(page, product).get_by_role("button", name="Delete")).to_be_disabled()
    # deleting the plan takes the product along
    gone = page.request.post("/api/delete-plan", data={"owner": "acme", "name": plan}, headers=as_page(page)).json()
    assert gone["data"] == "Affected", gone
    assert page.request.get(f"/api/get-product?id=acme/{product}").json()["data"] is None


def _payment(server, suffix: str, **fields) -> str:
    from iam_console.commerce.tables import Payment

    name = f"pay-{suffix}"
    with server_db(server) as db:
        db.add(Payment(owner="acme", name=name, display_name="A payment", provider="", type="Dummy",
                       currency="USD", price=3.5, **fields))
    return name


def test_a_global_admin_adds_a_plan_for_another_organization(visit, page, api_login, accounts, server):
    """Add on Plans, another organization, Save: the plan's product follows it there."""
    from iam_console.commerce.tables import Plan, Product

    api_login(accounts.admin)
    visit("/plans")
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/plans/built-in/plan_\w+\?mode=add"))
    expect(_field(page, "name")).to_have_value(re.compile(r"^plan_"))
    name = _field(page, "name").input_value()
    pick(page, "owner", "acme", "acme")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    expect(page).to_have_url(re.compile(f"/plans/acme/{name}(\\?|$)"))
    with server_db(server) as db:
        plan = db.exec(select(Plan).where(Plan.owner == "acme", Plan.name == name)).one()
        product = db.exec(select(Product.owner, Product.tag).where(Product.name == plan.product)).one()
    assert tuple(product) == ("acme", "auto_created_product_for_plan")


def test_the_invoice_fields_of_a_payment(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Payment

    suffix = uuid.uuid4().hex[:6]
    api_login(accounts.boss)

    # not paid: nothing to invoice
    unpaid = _payment(server, f"u{suffix}", state="Created")
    visit(f"/payments/acme/{unpaid}")
    expect(_field(page, "displayName")).to_have_value("A payment")
    for key in ("personName", "invoiceType", "invoiceTitle", "invoiceTaxId"):
        expect(_field(page, key)).to_be_disabled()
    expect(page.locator("#invoice-hint")).to_have_text("An invoice can be asked for once the payment is Paid")
    for key in ("provider", "type", "price", "currency", "state", "payUrl", "invoiceUrl"):
        expect(_field(page, key)).to_be_disabled()
    assert serious(page) == []

    # paid: an Individual invoice is titled with the person's name and has no tax ID
    paid = _payment(server, f"p{suffix}", state="Paid")
    visit(f"/payments/acme/{paid}")
    expect(_field(page, "personName")).to_be_enabled()
    expect(page.locator("#invoice-hint")).to_have_count(0)
    choose(page, _field(page, "invoiceType"), "Organization")
    expect(_field(page, "invoiceTitle")).to_be_enabled()
    _field(page, "invoiceTitle").fill("Acme Ltd")
    _field(page, "invoiceTaxId").fill("91310000X")
    # the checks, in order, as the save's message
    page.click("#edit-save")
    expect(_toast(page, "Failed to save: Please input your real name!")).to_be_visible()
    _toasts_gone(page)
    _field(page, "personName").fill("Ada Lovelace")
    _field(page, "personIdCard").fill("AB123456")
    _field(page, "personEmail").fill("ada@example.com")
    _field(page, "personPhone").fill("12")
    page.click("#edit-save")
    expect(_toast(page, "Failed to save: The input is not valid Phone!")).to_be_visible()
    _toasts_gone(page)
    _field(page, "personPhone").fill("+44 20 7946 0000")
    choose(page, _field(page, "invoiceType"), "Individual")
    expect(_field(page, "invoiceTitle")).to_have_value("Ada Lovelace")
    expect(_field(page, "invoiceTaxId")).to_have_value("")
    expect(_field(page, "invoiceTitle")).to_be_disabled()
    expect(_field(page, "invoiceTaxId")).to_be_disabled()
    _field(page, "personName").fill("Ada King")
    expect(_field(page, "invoiceTitle")).to_have_value("Ada King")
    assert serious(page) == []
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        row = db.exec(select(Payment).where(Payment.owner == "acme", Payment.name == paid)).one()
        assert (row.invoice_type, row.invoice_title, row.invoice_tax_id, row.person_name) == (
            "Individual", "Ada King", "", "Ada King")
        key = row.pk

    # once invoiced, read-only for good (the API refuses it too)
    with server_db(server) as db:
        invoiced = db.get(Payment, key)
        invoiced.invoice_url = "https://files.example.com/invoice.pdf"
        db.add(invoiced)
    page.reload()
    expect(_field(page, "personName")).to_have_value("Ada King")
    for key in ("personName", "personIdCard", "personEmail", "personPhone", "invoiceType", "invoiceTitle",
                "invoiceTaxId", "invoiceRemark"):
        expect(_field(page, key)).to_be_disabled()
    expect(page.locator("#invoice-hint")).to_have_text("Invoiced: the person and invoice fields can no longer change")
    assert serious(page) == []
    refused = page.request.post(f"/api/update-payment?id=acme/{paid}",
                                data={"owner": "acme", "name": paid, "personName": "Someone"},
                                headers=as_page(page)).json()
    assert refused["status"] == "error" and "invoiced" in refused["msg"], refused


def _options(page, trigger) -> list[str]:
    """A select's offered options (then closed again)."""
    trigger.click()
    offered = page.get_by_role("option").all_inner_texts()
    page.keyboard.press("Escape")
    expect(page.get_by_role("option")).to_have_count(0)
    return offered


def test_a_plan_with_its_currency_period_providers_and_role(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Plan, Product
    from iam_console.models import Role

    suffix = uuid.uuid4().hex[:6]
    pay, mail = _providers(server, suffix)
    with server_db(server) as db:
        db.add(Role(owner="acme", name=f"gold-{suffix}", is_enabled=True))
    api_login(accounts.boss)
    visit("/plans")
    page.click("#list-add")
    expect(page).to_have_url(re.compile(r"/plans/acme/plan_\w+\?mode=add"))
    expect(_field(page, "name")).to_have_value(re.compile(r"^plan_"))
    name = _field(page, "name").input_value()
    assert _options(page, _field(page, "currency")) == ["USD", "CNY"]
    assert _options(page, _field(page, "period")) == ["Monthly", "Yearly"]
    choose(page, _field(page, "currency"), "CNY")
    choose(page, _field(page, "period"), "Yearly")
    _field(page, "price").fill("99.5")
    page.click("#field-paymentProviders")
    page.locator("input.pick-search, .pick-search input").first.fill(suffix)
    expect(page.locator(".pick-option").filter(has_text=pay)).to_have_count(1)
    expect(page.locator(".pick-option").filter(has_text=mail)).to_have_count(0)
    page.keyboard.press("Escape")
    expect(page.locator(".pick-option")).to_have_count(0)
    pick(page, "paymentProviders", pay, typed=suffix)
    pick(page, "role", f"gold-{suffix}", typed=suffix)
    _field(page, "options").fill("Priority support, 10 seats")
    expect(_field(page, "product")).to_be_disabled()
    assert serious(page) == []
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        plan = db.exec(select(Plan).where(Plan.owner == "acme", Plan.name == name)).one()
        assert (plan.currency, plan.period, plan.price, plan.payment_providers, plan.role, plan.options) == (
            "CNY", "Yearly", 99.5, [pay], f"gold-{suffix}", ["Priority support", "10 seats"])
        product = db.exec(select(Product).where(Product.owner == "acme", Product.name == plan.product)).one()
        assert (product.price, product.currency, product.providers) == (99.5, "CNY", [pay])
        made = product.name
    expect(_field(page, "product")).to_have_value(made)


def test_a_pricing_trial_and_its_page_url(visit, page, context, api_login, accounts, server):
    from iam_console.commerce.tables import Plan, Pricing

    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    suffix = uuid.uuid4().hex[:6]
    name = f"pricing-{suffix}"
    with server_db(server) as db:
        db.add(Plan(owner="acme", name=f"basic-{suffix}", price=5, currency="USD", period="Monthly"))
        db.add(Pricing(owner="acme", name=name, display_name="Prices", trial_duration=7, is_enabled=True))
    api_login(accounts.boss)
    visit(f"/pricings/acme/{name}")
    expect(_field(page, "trialDuration")).to_have_value("7")
    pick(page, "plans", f"basic-{suffix}", typed=suffix)
    assert serious(page) == []

    # a trial below 0 is refused, the name put back, nothing written
    _field(page, "name").fill(f"{name}-x")
    _field(page, "trialDuration").fill("-1")
    page.click("#edit-save")
    expect(_toast(page, re.compile("Failed to save: .*trialDuration must be at least 0"))).to_be_visible()
    expect(_field(page, "name")).to_have_value(name)
    with server_db(server) as db:
        assert db.exec(select(Pricing).where(Pricing.owner == "acme", Pricing.name == name)).one().plans == []
    _toasts_gone(page)
    _field(page, "trialDuration").fill("3")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        saved = db.exec(select(Pricing).where(Pricing.owner == "acme", Pricing.name == name)).one()
        assert (saved.trial_duration, saved.plans) == (3, [f"basic-{suffix}"])

    _toasts_gone(page)
    page.click("#copy-pricing-url")
    expect(_toast(page, "Copied to clipboard successfully")).to_be_visible()
    url = f"{server.base_url}/select-plan/acme/{name}"
    page.wait_for_function("expected => navigator.clipboard.readText().then(t => t === expected)", arg=url,
                           timeout=5_000)


def test_subscription_badges_state_and_end(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Plan, Subscription

    suffix = uuid.uuid4().hex[:6]
    start = datetime(2025, 3, 10, 9, tzinfo=UTC)
    with server_db(server) as db:
        db.add(Plan(owner="acme", name=f"yearly-{suffix}", price=50, currency="USD", period="Yearly"))
        for state in ("Pending", "Active", "Upcoming", "Expired", "Error", "Suspended"):
            db.add(Subscription(owner="acme", name=f"sub-{suffix}-{state.lower()}", user="alice", state=state,
                                period="Monthly", start_time=start))
    api_login(accounts.boss)
    visit("/subscriptions")
    _search(page, f"sub-{suffix}")
    expect(page.locator("#list-total")).to_have_text("Total 6")
    for state, color in (("Pending", "blue"), ("Active", "green"), ("Upcoming", "amber"), ("Expired", "orange"),
                         ("Error", "red"), ("Suspended", "gray")):
        badge = _row(page, f"sub-{suffix}-{state.lower()}").locator(f".badge-{color}")
        expect(badge).to_have_text(state)
    assert serious(page) == []

    name = f"sub-{suffix}-pending"
    visit(f"/subscriptions/acme/{name}")
    expect(_field(page, "state")).to_have_text("Pending")
    for key in ("approver", "approveTime", "endTime"):
        expect(_field(page, key)).to_be_disabled()
    # approving: the approver and time shown at once, set by the save
    choose(page, _field(page, "state"), "Active")
    expect(_field(page, "approver")).to_have_value("boss")
    expect(_field(page, "approveTime")).not_to_have_value("")
    # the end follows the start and the period
    _field(page, "startTime").fill("2025-01-31T00:00:00Z")
    expect(_field(page, "endTime")).to_have_value("2025-02-28T00:00:00Z")
    pick(page, "plan", f"yearly-{suffix}", typed=suffix)
    assert serious(page) == []
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        row = db.exec(select(Subscription).where(Subscription.owner == "acme", Subscription.name == name)).one()
        assert (row.state, row.approver, row.period, row.plan) == ("Active", "boss", "Yearly", f"yearly-{suffix}")
        assert row.end_time == datetime(2026, 1, 31, tzinfo=UTC) and row.approve_time is not None
    # the plan's period, and the end computed from it, are shown once read back
    expect(_field(page, "period")).to_have_text("Yearly")
    expect(_field(page, "endTime")).to_have_value("2026-01-31T00:00:00Z")
    _toasts_gone(page)
    choose(page, _field(page, "state"), "Suspended")
    expect(_field(page, "approver")).to_have_value("")
    page.click("#edit-save")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    with server_db(server) as db:
        row = db.exec(select(Subscription).where(Subscription.owner == "acme", Subscription.name == name)).one()
        assert (row.state, row.approver, row.approve_time) == ("Suspended", "", None)


def test_a_transaction_is_only_shown(visit, page, api_login, accounts, server):
    from iam_console.commerce.tables import Transaction

    suffix = uuid.uuid4().hex[:6]
    name = f"txn-{suffix}"
    with server_db(server) as db:  # as the payment flow writes one: type the provider's category, subtype its type
        db.add(Transaction(owner="acme", name=name, display_name="Gold bought", provider="pay", category="Purchase",
                           type="Payment", subtype="Dummy", product_name="gold", currency="USD", amount=12.5,
                           user="alice", application="app-acme", state="Paid"))
        db.add(Transaction(owner="acme", name=f"other-{suffix}", provider="pay", category="Purchase", type="Payment",
                           subtype="Dummy", currency="USD", amount=1, user="alice", state="Paid"))
    api_login(accounts.boss)
    visit("/transactions")
    expect(page.locator("#list-table thead th")).to_have_count(14)
    headers = page.locator("#list-table thead th").all_inner_texts()
    assert [h.strip() for h in headers] == ["Name", "Organization", "Provider", "User", "Created time", "Type",
                                            "Subtype", "Product", "Currency", "Amount", "Application", "Payment",
                                            "State", "Action"]
    _search(page, name)
    expect(_row(page, name)).to_contain_text("12.5")
    # the filters offer the values the rows hold, and match them
    assert _options(page, page.locator("#filter-type")) == ["All", "Payment"]
    choose(page, page.locator("#filter-type"), "Payment")  # on top of the search
    expect(page.locator("#list-total")).to_have_text("Total 1")
    expect(_row(page, name)).to_have_count(1)
    choose(page, page.locator("#filter-subtype"), "Balance")
    expect(_row(page, name)).to_have_count(0)
    choose(page, page.locator("#filter-subtype"), "Dummy")
    expect(_row(page, name)).to_have_count(1)
    _row(page, name).get_by_role("link", name="Edit").click()
    expect(page).to_have_url(re.compile(f"/transactions/acme/{name}$"))
    expect(_field(page, "displayName")).to_have_value("Gold bought")
    expect(_field(page, "amount")).to_have_value("12.5")
    expect(_field(page, "subtype")).to_have_value("Dummy")
    expect(page.locator("#edit-form input:not([disabled])")).to_have_count(0)
    expect(page.locator("#edit-save")).to_have_count(0)
    assert serious(page) == []
    page.click("#edit-back")
    expect(page).to_have_url(re.compile(r"/transactions$"))
