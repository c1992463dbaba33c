"""Casdoor's commerce routes over HTTP: buy-product, place-order, pay-order, cancel-order,
get-user-orders, get-user-payments, notify-payment, invoice-payment and get-invoice. Bad input
gets a clear error and writes nothing; a forged notification changes nothing."""

from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
from sqlmodel import func, select

from iam_console.commerce.payments import stripe_checkout
from iam_console.commerce.tables import Order, Payment, Plan, Product, Subscription, Transaction
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique
from tests.payment_stubs import StripeStub

PASSWORD = "Commerce-pass-1"
STRIPE_KEY, STRIPE_WEBHOOK = "sk_test_api", "whsec_api"


@dataclasses.dataclass
class Shop:
    org: str
    product: str
    buyer: object  # a signed-in TestClient
    other: object
    admin: object


@pytest.fixture(scope="module")
def shop(database, admin) -> Shop:
    org = unique("shop")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
    for name, is_admin, balance in (("buyer", False, 20), ("other", False, 0), ("boss", True, 0)):
        ok_body(admin.post("/api/add-user", json={"owner": org, "name": name, "password": PASSWORD,
                                                  "isAdmin": is_admin, "balance": balance}))
    for name, kind, extra in (("dummy", "Dummy", {}), ("balance", "Balance", {}),
                              ("stripe", "Stripe", {"clientId": "pk", "clientSecret": STRIPE_KEY,
                                                    "clientSecret2": STRIPE_WEBHOOK})):
        ok_body(admin.post("/api/add-provider", json={"owner": org, "name": name, "category": "Payment",
                                                      "type": kind, **extra}))
    product = unique("product")
    ok_body(admin.post("/api/add-product", json={
        "owner": org, "name": product, "displayName": "Good book", "price": 4.2, "currency": "USD",
        "quantity": 100, "sold": 0, "state": "Published", "providers": ["dummy", "balance", "stripe"]}))
    return Shop(org, product, sign_in(org, "buyer", PASSWORD), sign_in(org, "other", PASSWORD),
                sign_in(org, "boss", PASSWORD))


def _count(model, owner: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(model).where(model.owner == owner)).one()


def _buy(shop: Shop, client, provider: str, **params):
    return client.post("/api/buy-product", params={"id": f"{shop.org}/{shop.product}", "providerName": provider,
                                                   **params}).json()


def test_buy_product_pays_and_answers_the_payment(shop):
    body = ok_body(shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{shop.product}",
                                                              "providerName": "balance"}))
    payment = body["data"]
    assert (payment["state"], payment["price"], payment["user"], payment["type"]) == ("Paid", 4.2, "buyer", "Balance")
    assert body["data2"]["payUrl"] == f"http://testserver/payments/{shop.org}/{payment['name']}/result"
    account = ok_body(shop.buyer.get("/api/get-account"))["data"]
    assert account["balance"] == 15.8
    orders = ok_body(shop.buyer.get("/api/get-user-orders", params={"owner": shop.org, "user": "buyer"}))["data"]
    assert [o["name"] for o in orders if o["payment"] == payment["name"]] and orders[0]["state"] == "Paid"
    payments = ok_body(shop.buyer.get("/api/get-user-payments", params={"owner": shop.org, "user": "buyer"}))
    assert payment["name"] in [p["name"] for p in payments["data"]]


@pytest.mark.parametrize(("params", "message"), [
    ({"id": "nope"}, "The id must be of the form owner/name"),
    ({"providerName": ""}, "is not a payment provider of the product"),
    ({"providerName": "nope"}, "is not a payment provider of the product"),
    ({"id": "{org}/nope"}, "does not exist"),
    ({"customPrice": "abc"}, None),  # not a recharge: the custom price is not read
    ({"userName": "other"}, "Only admin user can specify user"),
    ({"pricingName": "p"}, "give both pricingName and planName"),
])
def test_bad_buy_product_input_is_refused_and_writes_nothing(shop, params, message):
    before = (_count(Order, shop.org), _count(Payment, shop.org))
    query = {"id": f"{shop.org}/{shop.product}", "providerName": "dummy", **params}
    query = {k: v.format(org=shop.org) for k, v in query.items()}
    body = shop.buyer.post("/api/buy-product", params=query).json()
    if message is None:
        assert body["status"] == "ok"
        return
    assert body["status"] == "error" and message in body["msg"], body
    assert (_count(Order, shop.org), _count(Payment, shop.org)) == before


def test_insufficient_balance_is_refused_and_writes_nothing(shop):
    before = (_count(Order, shop.org), _count(Transaction, shop.org))
    body = shop.other.post("/api/buy-product", params={"id": f"{shop.org}/{shop.product}",
                                                       "providerName": "balance"}).json()
    assert body["status"] == "error" and body["msg"].startswith("Insufficient balance")
    assert (_count(Order, shop.org), _count(Transaction, shop.org)) == before


def test_a_balance_has_one_currency_and_is_never_paid_into_or_from_in_another(shop, admin):
    """The balance is in the user's balanceCurrency, else the organization's, else USD (issue 26: a
    JPY recharge of 100 raised a USD balance by 100, which then paid a 100 USD product)."""
    yen = unique("yen")
    ok_body(admin.post("/api/add-product", json={
        "owner": shop.org, "name": yen, "isRecharge": True, "currency": "JPY", "state": "Published",
        "providers": ["dummy", "balance"]}))
    before = (_count(Order, shop.org), _count(Transaction, shop.org))
    balance = ok_body(shop.other.get("/api/get-account"))["data"]["balance"]
    refused = _buy(shop, shop.other, "dummy", id=f"{shop.org}/{yen}", customPrice=100)
    assert refused["status"] == "error", refused
    assert refused["msg"] == "The balance is kept in USD: a recharge in JPY cannot be added to it"
    assert ok_body(shop.other.get("/api/get-account"))["data"]["balance"] == balance
    assert (_count(Order, shop.org), _count(Transaction, shop.org)) == before
    # a balance in JPY takes JPY recharges and pays JPY, but not the USD book
    ok_body(admin.post("/api/add-user", json={"owner": shop.org, "name": "yen-holder", "password": PASSWORD,
                                              "balance": 100, "balanceCurrency": "JPY"}))
    holder = sign_in(shop.org, "yen-holder", PASSWORD)
    refused = _buy(shop, holder, "balance")
    assert refused["msg"] == "The balance is kept in JPY: it cannot pay an amount in USD", refused
    assert ok_body(holder.get("/api/get-account"))["data"]["balance"] == 100
    assert ok_body(holder.post("/api/buy-product", params={
        "id": f"{shop.org}/{yen}", "providerName": "dummy", "customPrice": 50}))["data"]["currency"] == "JPY"
    account = ok_body(holder.get("/api/get-account"))["data"]
    assert (account["balance"], account["balanceCurrency"]) == (150, "JPY")


def test_place_pay_and_cancel_orders(shop):
    placed = ok_body(shop.buyer.post("/api/place-order", params={"owner": shop.org}, json={
        "productInfos": [{"name": shop.product, "quantity": 2}]}))["data"]
    assert (placed["state"], placed["price"], placed["products"][0]["quantity"]) == ("Created", 8.4, 2)
    ident = f"{shop.org}/{placed['name']}"
    # another user of the organization neither pays nor cancels it
    for route in ("/api/pay-order", "/api/cancel-order"):
        refused = shop.other.post(route, params={"id": ident, "providerName": "dummy"}).json()
        assert refused["msg"] == "Unauthorized operation", refused
    paid = ok_body(shop.buyer.post("/api/pay-order", params={"id": ident, "providerName": "dummy"}))["data"]
    assert paid["state"] == "Paid" and paid["order"] == placed["name"]
    again = shop.buyer.post("/api/pay-order", params={"id": ident, "providerName": "dummy"}).json()
    assert again["status"] == "error" and "current state is Paid" in again["msg"]
    cancelled = shop.buyer.post("/api/cancel-order", params={"id": ident}).json()
    assert cancelled["status"] == "error" and "cannot cancel order in state: Paid" in cancelled["msg"]
    second = ok_body(shop.buyer.post("/api/place-order", params={"owner": shop.org}, json={
        "productInfos": [{"name": shop.product}]}))["data"]
    assert ok_body(shop.buyer.post("/api/cancel-order", params={"id": f"{shop.org}/{second['name']}"}))["data"] \
        == "Affected"


@pytest.mark.parametrize(("body", "message"), [
    (None, "The request body cannot be empty"), ([], "The request body must be a JSON object"),
    ({"productInfos": []}, "Product list cannot be empty"),
    ({"productInfos": [{"name": ""}]}, "product name cannot be empty"),
    ({"productInfos": [{"name": "{product}", "quantity": -1}]}, "The quantity must be a whole number"),
    ({"productInfos": [{"name": "{product}"}], "couponCode": "FREE"}, "Coupons are not supported"),
])
def test_bad_place_order_input_is_refused(shop, body, message):
    before = _count(Order, shop.org)
    if isinstance(body, dict):
        body = {**body, "productInfos": [{k: (v.format(product=shop.product) if isinstance(v, str) else v)
                                          for k, v in i.items()} for i in body["productInfos"]]}
    answer = shop.buyer.post("/api/place-order", params={"owner": shop.org},
                             **({"content": b""} if body is None else {"json": body})).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert _count(Order, shop.org) == before


def test_user_lists_are_the_users_own_or_an_admins(shop):
    refused = shop.other.get("/api/get-user-orders", params={"owner": shop.org, "user": "buyer"}).json()
    assert refused["status"] == "error" and refused["msg"] == "Forbidden"
    assert ok_body(shop.admin.get("/api/get-user-payments", params={"owner": shop.org, "user": "buyer"}))
    missing = shop.buyer.get("/api/get-user-orders", params={"owner": shop.org}).json()
    assert missing["msg"] == "The owner and user cannot be empty"


@pytest.fixture
def stripe_api(monkeypatch):
    with StripeStub(STRIPE_KEY) as stub:
        monkeypatch.setattr(stripe_checkout, "API_BASE", stub.url)
        yield stub


def test_notify_payment_verifies_the_signature_and_is_idempotent(shop, stripe_api):
    payment = ok_body(shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{shop.product}",
                                                                  "providerName": "stripe"}))["data"]
    assert payment["state"] == "Created" and payment["payUrl"].startswith(stripe_api.url)
    session = stripe_api.sessions[payment["outOrderId"]]
    stripe_api.complete(session["id"])
    route = f"/api/notify-payment/{shop.org}/{payment['name']}"
    body, _ = StripeStub.signed_event(session, STRIPE_WEBHOOK)
    forged = shop.buyer.post(route, content=body, headers={"Stripe-Signature": "t=1,v1=00"}).json()
    assert forged["status"] == "error" and forged["msg"] == "The notification's signature is not valid"
    before = _count(Transaction, shop.org)
    for _ in range(2):
        body, signature = StripeStub.signed_event(session, STRIPE_WEBHOOK)
        answer = ok_body(shop.buyer.post(route, content=body, headers={"Stripe-Signature": signature}))
        assert answer["data"]["state"] == "Paid"
    assert _count(Transaction, shop.org) == before + 1
    unknown = shop.buyer.post(f"/api/notify-payment/{shop.org}/payment_nope", content=b"{}").json()
    assert unknown["status"] == "error" and "does not exist" in unknown["msg"]


def test_invoice_payment_makes_a_pdf_served_to_its_readers_only(shop):
    payment = ok_body(_buy_dummy(shop))["data"]
    ident = f"{shop.org}/{payment['name']}"
    refused = shop.buyer.post("/api/invoice-payment", params={"id": ident}).json()
    assert refused["status"] == "error" and refused["msg"] == "Please input your real name!"
    ok_body(shop.admin.post("/api/update-payment", params={"id": ident}, json={
        **payment, "personName": "Ada Lovelace", "personIdCard": "AB123456", "personEmail": "ada@example.com",
        "personPhone": "+15550100", "invoiceType": "Organization", "invoiceTitle": "Analytical Engines Ltd",
        "invoiceTaxId": "TAX12345678"}))
    url = ok_body(shop.buyer.post("/api/invoice-payment", params={"id": ident}))["data"]
    assert url == f"http://testserver/api/get-invoice?id={ident}"
    pdf = shop.buyer.get("/api/get-invoice", params={"id": ident})
    assert pdf.headers["content-type"] == "application/pdf" and pdf.content.startswith(b"%PDF")
    assert shop.other.get("/api/get-invoice", params={"id": ident}).json()["msg"] == "Unauthorized operation"
    assert shop.admin.get("/api/get-invoice", params={"id": ident}).content.startswith(b"%PDF")
    # never through the public files
    assert shop.buyer.get(f"/files/invoice/{shop.org}/{payment['name']}.pdf").status_code == 404
    stored = ok_body(shop.admin.get("/api/get-payment", params={"id": ident}))["data"]
    assert stored["invoiceUrl"] == url


def _buy_dummy(shop: Shop):
    return shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{shop.product}", "providerName": "dummy"})


def test_money_on_the_wire_is_exact_and_bad_amounts_are_refused(shop, admin):
    name = unique("priced")
    ok_body(admin.post("/api/add-product", json={"owner": shop.org, "name": name, "price": 0.1}))
    with session_scope() as db:
        stored = db.exec(select(Product).where(Product.owner == shop.org, Product.name == name)).one()
    assert stored.price == Decimal("0.1")
    for price in (0.1234567, 1e12, "12", True):
        body = admin.post("/api/update-product", params={"id": f"{shop.org}/{name}"},
                          json={"owner": shop.org, "name": name, "price": price}).json()
        assert body["status"] == "error" and "price" in body["msg"], (price, body)
    assert ok_body(admin.get("/api/get-product", params={"id": f"{shop.org}/{name}"}))["data"]["price"] == 0.1


def test_recharge_options_are_exact_positive_amounts(shop, admin):
    name = unique("recharge")
    body = {"owner": shop.org, "name": name, "isRecharge": True, "rechargeOptions": ["5", 25.5]}
    ok_body(admin.post("/api/add-product", json=body))
    read = ok_body(admin.get("/api/get-product", params={"id": f"{shop.org}/{name}"}))["data"]
    assert read["rechargeOptions"] == [5, 25.5]
    for options in (["0"], [-1], ["abc"], [0.1234567], [1e9]):
        answer = admin.post("/api/update-product", params={"id": f"{shop.org}/{name}"},
                            json={**body, "rechargeOptions": options}).json()
        assert answer["msg"] == "The recharge options must be positive amounts", (options, answer)


def _stock(org: str, name: str) -> tuple[int, int]:
    with session_scope() as db:
        product = db.exec(select(Product).where(Product.owner == org, Product.name == name)).one()
        return product.quantity, product.sold


def test_a_purchase_takes_the_stock_as_casdoor_does(shop, admin):
    """quantity is the stock left: a purchase leaves quantity - n and sold + n; a recharge sold + n."""
    name = unique("few")
    ok_body(admin.post("/api/add-product", json={"owner": shop.org, "name": name, "price": 1, "currency": "USD",
                                                 "quantity": 2, "sold": 5, "state": "Published",
                                                 "providers": ["dummy"]}))
    ok_body(shop.buyer.post("/api/place-order", params={"owner": shop.org}, json={
        "productInfos": [{"name": name, "quantity": 2}]}))  # placing takes nothing
    assert _stock(shop.org, name) == (2, 5)
    ok_body(shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{name}", "providerName": "dummy"}))
    assert _stock(shop.org, name) == (1, 6)
    ok_body(shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{name}", "providerName": "dummy"}))
    assert _stock(shop.org, name) == (0, 7)
    before = _count(Order, shop.org)
    refused = shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{name}", "providerName": "dummy"}).json()
    assert refused["status"] == "error" and refused["msg"] == f"The product: {name} is out of stock", refused
    assert _stock(shop.org, name) == (0, 7) and _count(Order, shop.org) == before
    recharge = unique("recharge")
    ok_body(admin.post("/api/add-product", json={"owner": shop.org, "name": recharge, "currency": "USD",
                                                 "isRecharge": True, "quantity": 0, "state": "Published",
                                                 "providers": ["dummy"]}))
    ok_body(shop.buyer.post("/api/buy-product", params={"id": f"{shop.org}/{recharge}", "providerName": "dummy",
                                                        "customPrice": "3"}))
    assert _stock(shop.org, recharge) == (0, 1)


def _plan_for_sale(shop: Shop, admin, **fields) -> tuple[str, str, str]:
    role, plan, pricing = unique("role"), unique("plan"), unique("pricing")
    ok_body(admin.post("/api/add-role", json={"owner": shop.org, "name": role, "isEnabled": True}))
    ok_body(admin.post("/api/add-plan", json={"owner": shop.org, "name": plan, "price": 2, "currency": "USD",
                                              "period": "Monthly", "paymentProviders": ["dummy"], "role": role,
                                              "isEnabled": True, **fields}))
    ok_body(admin.post("/api/add-pricing", json={"owner": shop.org, "name": pricing, "plans": [plan],
                                                 "isEnabled": True, "trialDuration": 0}))
    with session_scope() as db:
        product = db.exec(select(Plan.product).where(Plan.owner == shop.org, Plan.name == plan)).one()
    return plan, pricing, product


def _subscriptions(org: str, plan: str) -> list:
    with session_scope() as db:
        return list(db.exec(select(Subscription).where(Subscription.owner == org, Subscription.plan == plan)))


def test_buying_a_plan_again_renews_the_active_subscription(shop, admin):
    from iam_console.commerce.commerce import period_end

    plan, pricing, product = _plan_for_sale(shop, admin)
    params = {"id": f"{shop.org}/{product}", "providerName": "dummy", "pricingName": pricing, "planName": plan}
    first = ok_body(shop.buyer.post("/api/buy-product", params=params))["data"]
    (sub,) = _subscriptions(shop.org, plan)
    second = ok_body(shop.buyer.post("/api/buy-product", params=params))["data"]
    (renewed,) = _subscriptions(shop.org, plan)  # still one subscription, one period longer
    assert renewed.name == sub.name and renewed.state == "Active"
    assert renewed.end_time == period_end(sub.end_time, "Monthly") and renewed.payment == second["name"]
    assert first["name"] != second["name"]
    # an exclusive plan is refused while its subscription is active, as Casdoor's
    exclusive, pricing, product = _plan_for_sale(shop, admin, isExclusive=True)
    params = {"id": f"{shop.org}/{product}", "providerName": "dummy", "pricingName": pricing, "planName": exclusive}
    ok_body(shop.buyer.post("/api/buy-product", params=params))
    refused = shop.buyer.post("/api/buy-product", params=params).json()
    assert refused["msg"] == f"user already has an active subscription for plan: {exclusive}", refused
    assert len(_subscriptions(shop.org, exclusive)) == 1
