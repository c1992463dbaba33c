"""The payment flows of commerce/commerce.py with each provider (commerce/payments): Dummy and
Balance pay at once; Stripe and PayPal against their local stand-ins (tests/payment_stubs.py).
A notification is verified and idempotent, a balance never goes below zero, the stock left (the
quantity) never goes below zero, and a plan's subscription grants its role until the scheduler
expires it."""

from __future__ import annotations

import asyncio
import dataclasses
import io
import threading
from datetime import timedelta
from decimal import Decimal

import pytest
from pypdf import PdfReader
from sqlmodel import func, select, update

from iam_console import models as m
from iam_console import scheduler
from iam_console.commerce import commerce, invoices
from iam_console.commerce.extension import COMMERCE
from iam_console.commerce.payments import paypal, stripe_checkout
from iam_console.commerce.tables import Order, Payment, Plan, Pricing, Product, Subscription, Transaction
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.extension import Extension
from iam_console.models.base import money_of, to_wire
from tests.conftest import unique
from tests.payment_stubs import PayPalStub, StripeStub

STRIPE_KEY, STRIPE_WEBHOOK = "sk_test_local", "whsec_local_secret"
PAYPAL_ID, PAYPAL_SECRET = "paypal-client", "paypal-secret"


@dataclasses.dataclass
class Shop:
    org: str
    buyer: m.User
    admin: m.User

    def actor(self, user: m.User | None = None) -> Actor:
        with session_scope() as db:
            return Actor(user=db.exec(select(m.User).where(m.User.pk == (user or self.buyer).pk)).one())


def _add(*rows) -> None:
    with session_scope() as db:
        for row in rows:
            db.add(row)


@pytest.fixture
def shop(database, make_org, make_user) -> Shop:
    org = make_org().name
    buyer = make_user(org, balance=Decimal("10"))
    admin = make_user(org, is_admin=True)
    _add(m.Provider(owner=org, name="dummy", category="Payment", type="Dummy"),
         m.Provider(owner=org, name="balance", category="Payment", type="Balance"),
         m.Provider(owner=org, name="stripe", category="Payment", type="Stripe", client_id="pk_test",
                    client_secret=STRIPE_KEY, client_secret2=STRIPE_WEBHOOK),
         m.Provider(owner=org, name="paypal", category="Payment", type="PayPal", client_id=PAYPAL_ID,
                    client_secret=PAYPAL_SECRET))
    return Shop(org, buyer, admin)


def product(shop: Shop, *, price: str = "3.30", quantity: int = 10, sold: int = 0, **fields) -> str:
    name = unique("product")
    _add(Product(owner=shop.org, name=name, display_name=f"Display {name}", price=Decimal(price),
                   currency=fields.pop("currency", "USD"), quantity=quantity, sold=sold, state="Published",
                   providers=["dummy", "balance", "stripe", "paypal"], **fields))
    return name


def row(model, owner: str, name: str):
    with session_scope() as db:
        return db.exec(select(model).where(model.owner == owner, model.name == name)).one()


def count(model, **where) -> int:
    with session_scope() as db:
        query = select(func.count()).select_from(model)
        for key, value in where.items():
            query = query.where(getattr(model, key) == value)
        return db.exec(query).one()


def buy(shop: Shop, name: str, provider: str, actor: Actor | None = None, **options) -> Payment:
    with session_scope() as db:
        return commerce.buy_product(db, actor or shop.actor(), (shop.org, name), provider, **options)


def balance_of(user: m.User) -> Decimal:
    return row(m.User, user.owner, user.name).balance


# --- money ---

def test_money_is_exact_from_the_wire_to_the_database(shop):
    name = product(shop, price="0.10", quantity=100)
    with session_scope() as db:
        order = commerce.place_order(db, shop.actor(), shop.org, [{"name": name, "quantity": 3}])
    stored = row(Order, shop.org, order.name)
    assert stored.price == Decimal("0.3") and isinstance(stored.price, Decimal)  # 0.1 * 3 in floats is not 0.3
    assert to_wire(stored)["price"] == 0.3
    assert money_of(0.1) + money_of(0.2) == Decimal("0.3")
    for bad in ("1e-7", "1000000000", float("nan"), True):
        with pytest.raises(ValueError):
            money_of(bad)


# --- Dummy ---

def test_dummy_pays_at_once_and_sets_off_a_transaction_and_sold(shop):
    name = product(shop, price="12.34", sold=2)
    payment = buy(shop, name, "dummy")
    assert payment.state == "Paid"
    assert row(Product, shop.org, name).sold == 3
    assert row(Order, shop.org, payment.order).state == "Paid"
    with session_scope() as db:
        (transaction,) = db.exec(select(Transaction).where(Transaction.payment == payment.name)).all()
    assert (transaction.amount, transaction.category, transaction.subtype, transaction.user) == (
        Decimal("-12.34"), "Purchase", "Dummy", shop.buyer.name)
    assert balance_of(shop.buyer) == Decimal("10")  # Dummy takes nothing


def test_a_provider_the_product_does_not_offer_is_refused_and_nothing_is_written(shop):
    name = product(shop)
    _add(m.Provider(owner=shop.org, name="mailer", category="Email", type="SMTP"))
    for provider, message in (("missing", "The provider missing is not a payment provider"),
                              ("mailer", "The provider mailer is not a payment provider")):
        with pytest.raises(ServiceError, match=message):
            buy(shop, name, provider)
    assert count(Order, owner=shop.org) == 0 and count(Payment, owner=shop.org) == 0


def test_a_user_buys_only_from_their_own_organization_and_only_for_themselves(shop, make_org, make_user):
    name = product(shop)
    stranger = make_user(make_org().name)
    with pytest.raises(ServiceError, match="Unauthorized operation"):
        buy(shop, name, "dummy", shop.actor(stranger))
    other = make_user(shop.org)
    with pytest.raises(ServiceError, match="Only admin user can specify user"):
        buy(shop, name, "dummy", user_name=other.name)
    paid = buy(shop, name, "dummy", shop.actor(shop.admin), user_name=other.name)  # an admin buys for a user
    assert paid.user == other.name
    with pytest.raises(ServiceError, match="Please login first"):
        buy(shop, name, "dummy", Actor())


# --- Balance ---

def test_balance_pays_from_the_balance_exactly(shop):
    name = product(shop, price="3.30")
    buy(shop, name, "balance")
    buy(shop, name, "balance")
    buy(shop, name, "balance")
    assert balance_of(shop.buyer) == Decimal("0.1")  # 10 - 3 * 3.3, which floats make 0.0999999...
    with pytest.raises(ServiceError, match="Insufficient balance"):
        buy(shop, name, "balance")
    assert balance_of(shop.buyer) == Decimal("0.1")
    assert count(Order, owner=shop.org) == 3 and row(Product, shop.org, name).sold == 3  # the refusal wrote nothing


def test_concurrent_balance_purchases_never_overdraw_nor_oversell(shop, make_user):
    """One buyer with money for 4, a product with 6 left, 12 purchases at once from 3 buyers."""
    name = product(shop, price="2.50", quantity=6)
    rich = make_user(shop.org, balance=Decimal("100"))
    poor = make_user(shop.org, balance=Decimal("10"))  # four purchases' worth
    actors = [shop.actor(poor)] * 8 + [shop.actor(rich)] * 4
    outcomes: list[str] = []
    start = threading.Barrier(len(actors))

    def purchase(actor: Actor) -> None:
        start.wait()
        try:
            buy(shop, name, "balance", actor)
            outcomes.append("paid")
        except ServiceError as exc:
            outcomes.append(exc.template)

    threads = [threading.Thread(target=purchase, args=(a,)) for a in actors]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert outcomes.count("paid") == 6, outcomes
    assert row(Product, shop.org, name).sold == 6
    spent = {user.name: balance_of(user) for user in (rich, poor)}
    assert spent[poor.name] >= 0 and spent[rich.name] >= 0
    paid_poor = (Decimal("10") - spent[poor.name]) / Decimal("2.5")
    paid_rich = (Decimal("100") - spent[rich.name]) / Decimal("2.5")
    assert paid_poor <= 4 and paid_poor + paid_rich == 6
    assert count(Transaction, owner=shop.org) == 6


def test_a_recharge_raises_the_balance_and_is_not_paid_from_it(shop):
    name = product(shop, price="0", is_recharge=True, recharge_options=[5, 25.5], disable_custom_recharge=True)
    payment = buy(shop, name, "dummy", custom_price="25.5")
    assert balance_of(shop.buyer) == Decimal("35.5")
    with session_scope() as db:
        categories = sorted(t.category for t in db.exec(select(Transaction).where(
            Transaction.payment == payment.name)).all())
    assert categories == ["Purchase", "Recharge"]
    with pytest.raises(ServiceError, match="not one of the product's recharge options"):
        buy(shop, name, "dummy", custom_price="7")
    with pytest.raises(ServiceError, match="greater than zero"):
        buy(shop, name, "dummy", custom_price="-5")
    with pytest.raises(ServiceError, match="cannot be paid from the balance"):
        buy(shop, name, "balance", custom_price="5")
    assert balance_of(shop.buyer) == Decimal("35.5")


def test_a_balance_is_in_the_organizations_currency_and_keeps_it(shop, make_org, make_user):
    """With no balanceCurrency of its own, a user's balance is in the organization's: a recharge in
    it is taken and pins it on the user; one in another currency is refused, nothing written."""
    org = make_org(balance_currency="JPY").name
    buyer = make_user(org)
    with session_scope() as db:
        db.add(m.Provider(owner=org, name="dummy", category="Payment", type="Dummy"))
        db.add(Product(owner=org, name="yen", price=Decimal(0), currency="JPY", is_recharge=True,
                         state="Published", providers=["dummy"]))
        db.add(Product(owner=org, name="dollar", price=Decimal(0), currency="USD", is_recharge=True,
                         state="Published", providers=["dummy"]))
    actor = Shop(org, buyer, buyer).actor()
    with session_scope() as db:
        commerce.buy_product(db, actor, (org, "yen"), "dummy", custom_price="100")
    stored = row(m.User, org, buyer.name)
    assert (stored.balance, stored.balance_currency) == (Decimal(100), "JPY")
    with pytest.raises(ServiceError, match="The balance is kept in JPY: a recharge in USD"), \
            session_scope() as db:
        commerce.buy_product(db, actor, (org, "dollar"), "dummy", custom_price="100")
    assert row(m.User, org, buyer.name).balance == Decimal(100)
    assert count(Order, owner=org) == 1


def test_a_recharge_settled_after_the_balance_changed_currency_is_kept_for_a_refund(shop, stripe_api):
    """A recharge paid elsewhere (Stripe) is settled later: if the balance's currency is no longer
    the recharge's by then, nothing is added and the payment waits for a refund."""
    name = product(shop, price="0", is_recharge=True)
    payment = buy(shop, name, "stripe", custom_price="5")
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.pk == shop.buyer.pk)).one()
        user.balance_currency = "EUR"
        db.add(user)
    stripe_api.complete(payment.out_order_id)
    with session_scope() as db:
        checked = commerce.check_payment(db, shop.actor(), shop.org, payment.name)
    assert checked.state == "Paid" and "a recharge in USD cannot be added to it" in checked.message
    assert "to be refunded" in checked.message
    assert balance_of(shop.buyer) == Decimal("10") and count(Transaction, payment=payment.name) == 0


def test_sold_out_products_are_refused(shop):
    name = product(shop, quantity=1)
    buy(shop, name, "dummy")
    with pytest.raises(ServiceError, match="out of stock"):
        buy(shop, name, "dummy")
    assert row(Product, shop.org, name).sold == 1


# --- plans ---

def plan(shop: Shop, *, trial: int = 0, period: str = "Monthly", role: str = "") -> tuple[str, str, str, str]:
    """A plan and its pricing, granting a new role (or `role`, an existing one)."""
    new_role = not role
    role, plan_name, pricing = role or unique("role"), unique("plan"), unique("pricing")
    product_name = product(shop, price="9.99", quantity=999)
    if new_role:
        _add(m.Role(owner=shop.org, name=role, is_enabled=True))
    _add(Plan(owner=shop.org, name=plan_name, price=Decimal("9.99"), currency="USD", period=period,
                product=product_name, payment_providers=["dummy"], is_enabled=True, role=role),
         Pricing(owner=shop.org, name=pricing, plans=[plan_name], is_enabled=True, trial_duration=trial))
    return product_name, plan_name, pricing, role


def test_a_plan_subscribes_grants_its_role_and_the_scheduler_takes_it_back(shop):
    product_name, plan_name, pricing, role = plan(shop)
    payment = buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with session_scope() as db:
        (sub,) = db.exec(select(Subscription).where(Subscription.payment == payment.name)).all()
    assert (sub.state, sub.plan, sub.pricing, sub.user) == ("Active", plan_name, pricing, shop.buyer.name)
    assert sub.end_time == commerce.period_end(sub.start_time, "Monthly")
    member = f"{shop.org}/{shop.buyer.name}"
    assert member in row(m.Role, shop.org, role).users
    with session_scope() as db:  # other tests' subscriptions may be due by then: this one is not
        commerce.expire_subscriptions(db, sub.end_time - timedelta(seconds=1))
    assert row(Subscription, shop.org, sub.name).state == "Active"
    assert member in row(m.Role, shop.org, role).users
    with session_scope() as db:
        assert commerce.expire_subscriptions(db, sub.end_time + timedelta(seconds=1)) >= 1
        assert commerce.expire_subscriptions(db, sub.end_time + timedelta(seconds=1)) == 0  # once
    assert row(Subscription, shop.org, sub.name).state == "Expired"
    assert member not in row(m.Role, shop.org, role).users


def test_a_role_stays_while_another_subscription_grants_it(shop):
    product_name, plan_name, pricing, role = plan(shop)
    other_product, other_plan, other_pricing, _ = plan(shop, role=role)  # another plan granting the same role
    first = buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with session_scope() as db:
        sub = db.exec(select(Subscription).where(Subscription.payment == first.name)).one()
        sub.end_time = sub.start_time + timedelta(days=1)
        db.add(sub)
    buy(shop, other_product, "dummy", pricing=other_pricing, plan=other_plan)
    with session_scope() as db:
        assert commerce.expire_subscriptions(db, sub.end_time + timedelta(seconds=1)) >= 1
    assert f"{shop.org}/{shop.buyer.name}" in row(m.Role, shop.org, role).users


def test_a_pricing_trial_lengthens_the_first_subscription(shop):
    product_name, plan_name, pricing, _ = plan(shop, trial=7, period="Yearly")
    first = buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with session_scope() as db:  # ended: the next purchase is a new subscription, not a renewal
        db.exec(update(Subscription).where(Subscription.payment == first.name).values(state="Expired"))
    second = buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with session_scope() as db:
        subs = {s.payment: s for s in db.exec(select(Subscription).where(Subscription.pricing == pricing))}
    one, two = subs[first.name], subs[second.name]
    assert one.end_time == commerce.period_end(one.start_time, "Yearly") + timedelta(days=7)
    assert two.end_time == commerce.period_end(two.start_time, "Yearly")


def test_an_exclusive_plan_holds_one_active_subscription(shop):
    product_name, plan_name, pricing, _ = plan(shop)
    with session_scope() as db:
        db.exec(select(Plan).where(Plan.owner == shop.org, Plan.name == plan_name)).one().is_exclusive = True
    buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with pytest.raises(ServiceError, match="already has an active subscription"):
        buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    assert count(Subscription, owner=shop.org) == 1


def test_a_plan_is_bought_through_its_pricing_and_product(shop):
    product_name, plan_name, pricing, _ = plan(shop)
    other = product(shop)
    for options, message in (
            ({"plan": plan_name}, "give both pricingName and planName"),
            ({"pricing": "nope", "plan": plan_name}, "The pricing: nope does not exist"),
            ({"pricing": pricing, "plan": "nope"}, "The plan: nope is not an enabled plan"),
    ):
        with pytest.raises(ServiceError, match=message):
            buy(shop, product_name, "dummy", **options)
    with pytest.raises(ServiceError, match="is not the product of the plan"):
        buy(shop, other, "dummy", pricing=pricing, plan=plan_name)
    assert count(Subscription, owner=shop.org) == 0


# --- Stripe ---

@pytest.fixture
def stripe_api(monkeypatch):
    with StripeStub(STRIPE_KEY) as stub:
        monkeypatch.setattr(stripe_checkout, "API_BASE", stub.url)
        yield stub


def notify(shop: Shop, payment: Payment, body: bytes = b"{}", headers: dict | None = None) -> Payment:
    with session_scope() as db:
        return commerce.notify_payment(db, shop.org, payment.name, body, headers or {})


def test_stripe_checkout_is_paid_on_a_signed_notification_once(shop, stripe_api):
    name = product(shop, price="12.34")
    payment = buy(shop, name, "stripe")
    assert payment.state == "Created" and payment.pay_url.startswith(f"{stripe_api.url}/pay/cs_test_")
    session = stripe_api.sessions[payment.out_order_id]
    assert (session["amount_total"], session["currency"]) == (1234, "usd")
    assert session["success_url"] == f"http://testserver/payments/{shop.org}/{payment.name}/result"
    # not paid yet: the result page's check leaves it Created
    with session_scope() as db:
        assert commerce.check_payment(db, shop.actor(), shop.org, payment.name).state == "Created"
    stripe_api.complete(payment.out_order_id)
    # forged: unsigned, signed with another secret, or an old signature: refused, nothing changes
    forged = [{}, {"stripe-signature": StripeStub.signed_event(session, "whsec_other")[1]},
              {"stripe-signature": StripeStub.signed_event(session, STRIPE_WEBHOOK, at=1_000_000)[1]}]
    for headers in forged:
        body = StripeStub.signed_event(session, STRIPE_WEBHOOK)[0]
        with pytest.raises(ServiceError, match="signature is not valid"):
            notify(shop, payment, body, headers)
    assert row(Payment, shop.org, payment.name).state == "Created" and row(Product, shop.org, name).sold == 0
    body, signature = StripeStub.signed_event(session, STRIPE_WEBHOOK)
    assert notify(shop, payment, body, {"stripe-signature": signature}).state == "Paid"
    again = StripeStub.signed_event(session, STRIPE_WEBHOOK)
    assert notify(shop, payment, again[0], {"stripe-signature": again[1]}).state == "Paid"
    assert row(Product, shop.org, name).sold == 1
    assert count(Transaction, payment=payment.name) == 1
    assert row(Order, shop.org, payment.order).state == "Paid"


def test_an_order_paid_twice_is_settled_once(shop, stripe_api):
    """Two Stripe checkouts of one order both completed: the first settles it, the second is kept
    Paid (the money was taken) with a message for a refund, and sets off nothing."""
    name = product(shop, price="3")
    with session_scope() as db:
        order = commerce.place_order(db, shop.actor(), shop.org, [{"name": name}])
    with session_scope() as db:
        first = commerce.pay_order(db, shop.actor(), shop.org, order.name, "stripe")
    with session_scope() as db:
        second = commerce.pay_order(db, shop.actor(), shop.org, order.name, "stripe")
    for payment in (first, second):
        stripe_api.complete(payment.out_order_id)
        with session_scope() as db:
            commerce.check_payment(db, shop.actor(), shop.org, payment.name)
    assert row(Payment, shop.org, first.name).message == "Paid through Stripe"
    assert "to be refunded" in row(Payment, shop.org, second.name).message
    stored = row(Order, shop.org, order.name)
    assert (stored.state, stored.payment) == ("Paid", first.name)
    assert count(Transaction, owner=shop.org) == 1 and row(Product, shop.org, name).sold == 1


def test_stripe_amount_that_differs_is_an_error_and_settles_nothing(shop, stripe_api):
    name = product(shop, price="5")
    payment = buy(shop, name, "stripe")
    stripe_api.complete(payment.out_order_id)
    stripe_api.sessions[payment.out_order_id]["amount_total"] = 1  # one cent
    with session_scope() as db:
        checked = commerce.check_payment(db, shop.actor(), shop.org, payment.name)
    assert checked.state == "Error" and "doesn't equal to the expected price" in checked.message
    assert count(Transaction, payment=payment.name) == 0 and row(Product, shop.org, name).sold == 0


def test_stripe_expired_session_times_out(shop, stripe_api):
    payment = buy(shop, product(shop), "stripe")
    stripe_api.expire(payment.out_order_id)
    with session_scope() as db:
        assert commerce.check_payment(db, shop.actor(), shop.org, payment.name).state == "Timeout"
    assert row(Order, shop.org, payment.order).state == "Timeout"


def test_stripe_refusal_is_a_clear_error_and_writes_nothing(shop, stripe_api):
    with session_scope() as db:
        db.exec(select(m.Provider).where(m.Provider.owner == shop.org, m.Provider.name == "stripe")).one() \
            .client_secret = "sk_wrong"
    name = product(shop)
    with pytest.raises(ServiceError, match="Stripe refused the request: Invalid API Key"):
        buy(shop, name, "stripe")
    assert count(Payment, owner=shop.org) == 0 and count(Order, owner=shop.org) == 0


def test_a_price_finer_than_the_currency_is_refused(shop, stripe_api):
    with pytest.raises(ServiceError, match="cannot be paid in JPY"):
        buy(shop, product(shop, price="100.5", currency="JPY"), "stripe")


# --- PayPal ---

@pytest.fixture
def paypal_api(monkeypatch):
    with PayPalStub(PAYPAL_ID, PAYPAL_SECRET) as stub:
        monkeypatch.setattr(paypal, "API_BASE", stub.url)
        yield stub


def test_paypal_order_is_captured_once_approved_and_settled_once(shop, paypal_api):
    name = product(shop, price="7.5")
    payment = buy(shop, name, "paypal")
    order = paypal_api.orders[payment.out_order_id]
    assert payment.state == "Created" and payment.pay_url.endswith(f"token={payment.out_order_id}")
    assert order["purchase_units"][0]["amount"] == {"currency_code": "USD", "value": "7.50"}
    assert notify(shop, payment).state == "Created"  # not approved: nothing to capture
    paypal_api.approve(payment.out_order_id)
    assert notify(shop, payment, b'{"forged": "COMPLETED"}').state == "Paid"
    assert notify(shop, payment).state == "Paid"
    assert paypal_api.captures == 1 and count(Transaction, payment=payment.name) == 1
    assert row(Product, shop.org, name).sold == 1


def test_paypal_wrong_credentials_are_a_clear_error(shop, paypal_api):
    with session_scope() as db:
        db.exec(select(m.Provider).where(m.Provider.owner == shop.org, m.Provider.name == "paypal")).one() \
            .client_secret = "wrong"
    with pytest.raises(ServiceError, match="PayPal refused the request: Client Authentication failed"):
        buy(shop, product(shop), "paypal")
    assert count(Payment, owner=shop.org) == 0


def test_a_forged_notification_of_an_unknown_payment_changes_nothing(shop):
    with session_scope() as db, pytest.raises(ServiceError, match="does not exist"):
        commerce.notify_payment(db, shop.org, "payment_forged", b"{}", {})


# --- orders ---

def test_an_order_is_cancelled_once_and_then_cannot_be_paid(shop):
    name = product(shop)
    with session_scope() as db:
        order = commerce.place_order(db, shop.actor(), shop.org, [{"name": name, "quantity": 2}])
    with session_scope() as db:
        assert commerce.cancel_order(db, shop.actor(), shop.org, order.name).state == "Canceled"
    with session_scope() as db, pytest.raises(ServiceError, match="cannot cancel order in state: Canceled"):
        commerce.cancel_order(db, shop.actor(), shop.org, order.name)
    with session_scope() as db, pytest.raises(ServiceError, match="current state is Canceled"):
        commerce.pay_order(db, shop.actor(), shop.org, order.name, "dummy")


@pytest.mark.parametrize(("items", "message"), [
    ([], "Product list cannot be empty"), ("x", "Product list cannot be empty"),
    ([{"quantity": 1}], "product name cannot be empty"), ([{"name": "nope"}], "does not exist"),
    ([{"name": "{p}", "quantity": 0.5}], "The quantity must be a whole number"),
    ([{"name": "{p}", "quantity": 11}], "out of stock"),
])
def test_bad_orders_are_refused(shop, items, message):
    name = product(shop)
    items = [{k: (v.format(p=name) if isinstance(v, str) else v) for k, v in i.items()} if isinstance(i, dict)
             else i for i in items] if isinstance(items, list) else items
    with session_scope() as db, pytest.raises(ServiceError, match=message):
        commerce.place_order(db, shop.actor(), shop.org, items)
    assert count(Order, owner=shop.org) == 0


# --- invoices ---

def test_an_invoice_is_a_real_pdf_made_once_after_the_checks(shop):
    payment = buy(shop, product(shop, price="42"), "dummy")
    with session_scope() as db:
        stored = db.exec(select(Payment).where(Payment.pk == payment.pk)).one()
        stored.person_name, stored.person_id_card = "Zoë Müller", "ID123456"
        db.add(stored)
    with session_scope() as db, pytest.raises(ServiceError, match="The input is not valid Email!"):
        invoices.invoice_payment(db, shop.actor(), shop.org, payment.name)
    with session_scope() as db:
        stored = db.exec(select(Payment).where(Payment.pk == payment.pk)).one()
        stored.person_email, stored.person_phone = "zoe@example.com", "+15550100"
        stored.invoice_type, stored.invoice_title = "Individual", "Zoë Müller"
        db.add(stored)
    with session_scope() as db:
        url = invoices.invoice_payment(db, shop.actor(), shop.org, payment.name)
    assert url == f"http://testserver/api/get-invoice?id={shop.org}/{payment.name}"
    with session_scope() as db:
        assert invoices.invoice_payment(db, shop.actor(), shop.org, payment.name) == url  # once
        path = invoices.invoice_file(db, shop.actor(), shop.org, payment.name)
    content = path.read_bytes()
    assert content.startswith(b"%PDF")
    text = "".join(page.extract_text() for page in PdfReader(io.BytesIO(content)).pages)
    for expected in ("Invoice", payment.name, "Zoë Müller", "zoe@example.com", "42 USD", shop.org):
        assert expected in text, (expected, text)
    assert count(m.Resource, owner=shop.org, name=f"invoice_{payment.name}") == 1
    with session_scope() as db, pytest.raises(ServiceError, match="Unauthorized operation"):
        invoices.invoice_file(db, Actor(user=m.User(owner=shop.org, name="someone-else")), shop.org, payment.name)


def test_an_unpaid_payment_gets_no_invoice(shop, stripe_api):
    payment = buy(shop, product(shop), "stripe")
    with session_scope() as db, pytest.raises(ServiceError, match="Please pay the order first!"):
        invoices.invoice_payment(db, shop.actor(), shop.org, payment.name)
    assert row(Payment, shop.org, payment.name).invoice_url == ""


def test_the_scheduler_expires_subscriptions_and_takes_the_role_back(shop, monkeypatch):
    product_name, plan_name, pricing, role = plan(shop)
    payment = buy(shop, product_name, "dummy", pricing=pricing, plan=plan_name)
    with session_scope() as db:
        sub = db.exec(select(Subscription).where(Subscription.payment == payment.name)).one()
        sub.end_time = sub.start_time - timedelta(seconds=1)
        db.add(sub)
    monkeypatch.setattr(scheduler, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(scheduler, "extensions", lambda: (Extension("expiry", jobs=COMMERCE.jobs),))  # it alone

    async def main() -> None:
        task = asyncio.create_task(scheduler.run_scheduled_work())
        while row(Subscription, shop.org, sub.name).state == "Active":
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(asyncio.wait_for(main(), 10))
    assert row(Subscription, shop.org, sub.name).state == "Expired"
    assert f"{shop.org}/{shop.buyer.name}" not in row(m.Role, shop.org, role).users
