"""The public commerce pages in the browser: buy a product from the balance, land on the result
page and see the transaction it made; choose a plan on /select-plan signed in, and signed out
(sent to the pricing's organization's sign-in, then back to the plan's buy page); providers by
their display names, money in the currency's minor units, a recharge's amounts as its price;
axe on each page."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass
from decimal import Decimal

import pytest
from playwright.sync_api import expect
from sqlmodel import select

from tests.e2e.axe import serious
from tests.e2e.steps import server_db

RESULT = re.compile(r"/payments/[^/]+/payment_[^/]+/result$")


@dataclass
class Shop:
    owner: str
    product: str
    plan: str
    pricing: str
    plan_product: str
    role: str


def _shop(server, owner: str) -> Shop:
    from iam_console import models as m
    from iam_console.commerce.tables import Plan, Pricing, Product

    suffix = uuid.uuid4().hex[:6]
    shop = Shop(owner, f"book-{suffix}", f"plan-{suffix}", f"pricing-{suffix}", f"plan-product-{suffix}",
                f"subscribers-{suffix}")
    with server_db(server) as db:
        for name, kind in ((f"dummy-{suffix}", "Dummy"), (f"balance-{suffix}", "Balance")):
            db.add(m.Provider(owner=owner, name=name, display_name=f"{kind} pay", category="Payment", type=kind))
        providers = [f"dummy-{suffix}", f"balance-{suffix}"]
        db.add(Product(owner=owner, name=shop.product, display_name="A good book", price=Decimal("4.20"),
                         currency="USD", quantity=10, state="Published", providers=providers,
                         detail="Three hundred pages"))
        db.add(Product(owner=owner, name=shop.plan_product, display_name=f"Plan {suffix}", price=Decimal("9.99"),
                         currency="USD", quantity=999, state="Published", providers=providers,
                         tag="auto_created_product_for_plan"))
        db.add(m.Role(owner=owner, name=shop.role, is_enabled=True))
        db.add(Plan(owner=owner, name=shop.plan, display_name="Pro", price=Decimal("9.99"), currency="USD",
                      period="Monthly", product=shop.plan_product, payment_providers=providers, is_enabled=True,
                      role=shop.role, options=["Unlimited books"]))
        db.add(Pricing(owner=owner, name=shop.pricing, display_name="Reading plans", plans=[shop.plan],
                         is_enabled=True, trial_duration=0))
    return shop


@pytest.fixture
def acme_shop(server, accounts):
    from iam_console import models as m

    with server_db(server) as db:
        alice = db.exec(select(m.User).where(m.User.owner == "acme", m.User.name == accounts.alice.username)).one()
        alice.balance = Decimal("50")
        db.add(alice)
    return _shop(server, "acme")


def _pay_with(page, provider: str) -> None:
    """The buy page's card has a button per payment provider, named by the provider's display name."""
    page.locator(".buy-card-provider").get_by_text(provider, exact=True).click()


def _wait_result(page, state: str = "Paid") -> None:
    expect(page).to_have_url(RESULT)
    expect(page.locator("#payment-state")).to_have_text(state)


def test_buy_from_the_balance_then_the_result_shows_the_transaction(visit, page, server, api_login, accounts,
                                                                    acme_shop):
    from iam_console import models as m
    from iam_console.commerce.tables import Product

    api_login(accounts.alice)
    visit(f"/products/acme/{acme_shop.product}/buy")
    expect(page.locator("#buy-card-name")).to_have_text("A good book")
    expect(page.locator("#buy-card-price")).to_have_text("$4.20")
    # the providers by their display names, never their internal names
    expect(page.locator(".buy-card-provider")).to_have_text(["Dummy pay", "Balance pay"])
    assert serious(page) == []
    _pay_with(page, "Balance pay")
    _wait_result(page)
    expect(page.locator("#payment-price")).to_have_text("Price: $4.20")
    expect(page.locator(".payment-transaction")).to_have_count(1)
    expect(page.locator("#payment-transactions")).to_contain_text("Purchase")
    expect(page.locator("#payment-transactions")).to_contain_text("-$4.20")
    assert serious(page) == []
    with server_db(server) as db:
        alice = db.exec(select(m.User).where(m.User.owner == "acme", m.User.name == accounts.alice.username)).one()
        assert alice.balance == Decimal("45.8")
        sold = db.exec(select(Product.sold).where(Product.owner == "acme",
                                                    Product.name == acme_shop.product)).one()
        assert sold == 1


def test_a_refused_purchase_is_told_in_place(visit, page, server, api_login, accounts, acme_shop):
    from iam_console import models as m

    with server_db(server) as db:
        alice = db.exec(select(m.User).where(m.User.owner == "acme", m.User.name == accounts.alice.username)).one()
        alice.balance = Decimal("1")
        db.add(alice)
    api_login(accounts.alice)
    visit(f"/products/acme/{acme_shop.product}/buy")
    _pay_with(page, "Balance pay")
    expect(page.locator("#buy-error")).to_contain_text("Insufficient balance")
    expect(page).to_have_url(re.compile(r"/buy$"))


def _subscription_state(server, owner: str, user: str, plan: str) -> str | None:
    from iam_console.commerce.tables import Subscription

    with server_db(server) as db:
        return db.exec(select(Subscription.state).where(Subscription.owner == owner, Subscription.user == user,
                                                          Subscription.plan == plan)).first()


def test_select_plan_signed_in_subscribes_and_grants_the_role(visit, page, server, api_login, accounts, acme_shop):
    from iam_console import models as m

    api_login(accounts.alice)
    visit(f"/select-plan/acme/{acme_shop.pricing}")
    expect(page.locator(".plan-card")).to_have_count(1)
    expect(page.locator(".plan-price")).to_have_text("$9.99 / Monthly")
    assert serious(page) == []
    page.locator(f"#plan-{acme_shop.plan}").click()
    expect(page.locator("#buy-plan")).to_contain_text(acme_shop.plan)
    _pay_with(page, "Dummy pay")
    _wait_result(page)
    assert _subscription_state(server, "acme", accounts.alice.username, acme_shop.plan) == "Active"
    with server_db(server) as db:
        role = db.exec(select(m.Role).where(m.Role.owner == "acme", m.Role.name == acme_shop.role)).one()
        assert f"acme/{accounts.alice.username}" in role.users


def test_select_plan_signed_out_signs_in_and_comes_back(visit, page, server, accounts, acme_shop):
    """The pricing's organization's sign-in page, where its users sign in (not the built-in one)."""
    visit(f"/select-plan/acme/{acme_shop.pricing}")
    expect(page.locator(f"#plan-{acme_shop.plan}")).to_contain_text("Sign in to subscribe")
    assert serious(page) == []
    page.locator(f"#plan-{acme_shop.plan}").click()
    expect(page).to_have_url(re.compile(r"/login/acme\?from="))
    page.fill("#login-username", accounts.alice.username)
    page.fill("#login-password", accounts.alice.password)
    page.click("#login-submit")
    expect(page.locator("#buy-plan")).to_contain_text(acme_shop.plan)
    _pay_with(page, "Dummy pay")
    _wait_result(page)
    assert _subscription_state(server, "acme", accounts.alice.username, acme_shop.plan) == "Active"


def test_a_recharge_products_price_is_its_amounts(visit, page, server, api_login, accounts, acme_shop):
    from iam_console.commerce.tables import Product

    name = f"credit-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Product(owner="acme", name=name, display_name="Credit", currency="USD", is_recharge=True,
                         recharge_options=[4.2, 1000.0], state="Published",
                         providers=[f"dummy-{acme_shop.product.removeprefix('book-')}"]))
    api_login(accounts.alice)
    visit(f"/products/acme/{name}/buy")
    expect(page.locator("#buy-card-name")).to_have_text("Credit")
    # the Price row offers the amounts, in the dollar's minor units (cents): not an empty row (the
    # recharge is in the balance's currency, which a recharge in another currency is refused)
    expect(page.locator("#buy-recharge .buy-option")).to_have_text(["$4.20", "$1,000.00"])
    assert serious(page) == []
    page.locator(".buy-option").get_by_text("$1,000.00", exact=True).click()
    _pay_with(page, "Dummy pay")
    _wait_result(page)
    expect(page.locator("#payment-price")).to_have_text("Price: $1,000.00")


def test_an_unknown_pricing_is_told(visit, page):
    visit("/select-plan/acme/no-such-pricing")
    expect(page.locator("#select-plan-error")).to_contain_text("does not exist")
    assert serious(page) == []


def test_the_payment_page_issues_and_downloads_the_invoice(visit, page, server, api_login, accounts, acme_shop):
    from iam_console import models as m
    from iam_console.commerce import commerce
    from iam_console.core.access import Actor

    with server_db(server) as db:
        alice = db.exec(select(m.User).where(m.User.owner == "acme", m.User.name == accounts.alice.username)).one()
        payment = commerce.buy_product(db, Actor(user=alice), ("acme", acme_shop.product),
                                       f"dummy-{acme_shop.product.removeprefix('book-')}")
        payment.person_name, payment.person_id_card = "Alice Liddell", "AL123456"
        payment.person_email, payment.person_phone = "alice@example.com", "+15550100"
        payment.invoice_type, payment.invoice_title = "Individual", "Alice Liddell"
        payment.return_url = "https://shop.example/thanks"
        db.add(payment)
        name = payment.name
    api_login(accounts.boss)
    visit(f"/payments/acme/{name}")
    expect(page.locator("#payment-download-invoice")).to_have_count(0)
    expect(page.locator("#payment-return-to-website")).to_have_attribute("href", "https://shop.example/thanks")
    page.click("#payment-issue-invoice")
    expect(page.get_by_text("Successfully invoiced")).to_be_visible()
    link = page.locator("#payment-download-invoice")
    expect(link).to_have_attribute("href", f"http://localhost:{server.port}/api/get-invoice?id=acme/{name}")
    expect(page.locator("#payment-issue-invoice")).to_be_disabled()
    pdf = page.request.get(link.get_attribute("href"))
    assert pdf.ok and pdf.body().startswith(b"%PDF")
    assert serious(page) == []


def test_select_plan_signed_out_signs_up_and_comes_back(visit, page, server, acme_shop):
    from iam_console import models as m
    from iam_console.commerce.tables import Pricing

    application = f"app-{acme_shop.pricing}"
    items = [{"name": name, "visible": True, "required": required, "prompted": False, "rule": "None"}
             for name, required in (("Username", True), ("Password", True), ("Confirm password", True),
                                    ("Signup button", False))]
    with server_db(server) as db:
        db.add(m.Application(owner="admin", name=application, organization="acme", enable_password=True,
                             enable_sign_up=True, client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                             signup_items=items))
        pricing = db.exec(select(Pricing).where(Pricing.owner == "acme",
                                                  Pricing.name == acme_shop.pricing)).one()
        pricing.application = application
        db.add(pricing)
    visit(f"/select-plan/acme/{acme_shop.pricing}")
    page.click("#select-plan-signup")
    newcomer = f"reader{uuid.uuid4().hex[:6]}"
    page.fill("#signup-username", newcomer)
    page.fill("#signup-password", "Reader-passw0rd")
    page.fill("#signup-confirm-password", "Reader-passw0rd")
    page.click("#signup-submit")
    expect(page).to_have_url(re.compile(rf"/select-plan/acme/{acme_shop.pricing}$"))
    expect(page.locator(f"#plan-{acme_shop.plan}")).to_contain_text("Subscribe")
    page.locator(f"#plan-{acme_shop.plan}").click()
    _pay_with(page, "Dummy pay")
    _wait_result(page)
    assert _subscription_state(server, "acme", newcomer, acme_shop.plan) == "Active"
