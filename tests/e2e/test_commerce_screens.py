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

from playwright.sync_api import expect
from sqlmodel import select

from tests.e2e.axe import serious
from tests.e2e.steps import choose, pick, server_db


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
    from iam_console.models import Product

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
                                                     "price": 9, "currency": "USD", "period": "Monthly"}).json()
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
    gone = page.request.post("/api/delete-plan", data={"owner": "acme", "name": plan}).json()
    assert gone["data"] == "Affected", gone
    assert page.request.get(f"/api/get-product?id=acme/{product}").json()["data"] is None


def _payment(server, suffix: str, **fields) -> str:
    from iam_console.models import Payment

    name = f"pay-{suffix}"
    with server_db(server) as db:
        db.add(Payment(owner="acme", name=name, display_name="A payment", provider="", type="Dummy",
                       currency="USD", price=3.5, **fields))
    return name


def test_the_invoice_fields_of_a_payment(visit, page, api_login, accounts, server):
    from iam_console.models import Payment

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
                                data={"owner": "acme", "name": paid, "personName": "Someone"}).json()
    assert refused["status"] == "error" and "invoiced" in refused["msg"], refused
