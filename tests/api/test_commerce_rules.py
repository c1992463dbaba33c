"""The commerce kinds' save rules through the HTTP API (commerce/kinds/product.py, payment.py,
plan.py, pricing.py, subscription.py): a plan's product locked, undeletable while its plan exists
and deleted with it; the invoice checks in order with their messages and an invoiced payment's
fields fixed; the trial at least 0; the subscription's state an admin's, the approver it sets, the
period the plan's and the end computed; the fixed choices. Every refusal writes nothing."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.commerce.kinds import subscription as subscription_rules
from iam_console.commerce.tables import Payment, Plan, Product, Subscription
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique

PASSWORD = "Commerce-pass-1"


@pytest.fixture(scope="module")
def org(admin) -> str:
    """An organization with an admin `boss`, a normal user `ann`, a payment provider `pay` and a role `gold`."""
    name = unique("shop")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name}))
    for user, is_admin in (("boss", True), ("ann", False)):
        ok_body(admin.post("/api/add-user", json={"owner": name, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin}))
    ok_body(admin.post("/api/add-provider", json={"owner": name, "name": "pay", "category": "Payment",
                                                  "type": "Dummy"}))
    ok_body(admin.post("/api/add-role", json={"owner": name, "name": "gold", "isEnabled": True}))
    return name


@pytest.fixture(scope="module")
def boss(org):
    return sign_in(org, "boss", PASSWORD)


def _stored(model, owner: str, name: str):
    with session_scope() as db:
        return db.exec(select(model).where(model.owner == owner, model.name == name)).first()


def _error(answer) -> str:
    body = answer.json()
    assert body["status"] == "error", body
    return body["msg"]


# --- a plan's product ---

def _plan(boss, org: str, **fields) -> tuple[str, str]:
    name = unique("plan")
    ok_body(boss.post("/api/add-plan", json={"owner": org, "name": name, "displayName": "Gold", "price": 10,
                                             "currency": "USD", "period": "Monthly", "paymentProviders": ["pay"],
                                             "role": "gold", **fields}))
    return name, _stored(Plan, org, name).product


@pytest.mark.parametrize(("field", "value"), [
    ("owner", "built-in"), ("name", "renamed"), ("tag", "other"), ("currency", "EUR"), ("price", 1.5),
    ("quantity", 5), ("sold", 3), ("providers", []),
])
def test_a_plans_product_keeps_its_locked_fields(boss, org, field, value):
    _, product = _plan(boss, org)
    before = _stored(Product, org, product)
    assert (before.tag, before.price, before.currency, before.providers, before.quantity) == (
        "auto_created_product_for_plan", 10.0, "USD", ["pay"], 999)
    message = _error(boss.post("/api/update-product", params={"id": f"{org}/{product}"},
                               json={"owner": org, "name": product, field: value}))
    assert message in (f"The field {field} of a product created for a plan cannot be changed",
                       "Only a global admin may change the owner")
    after = _stored(Product, org, product)
    assert after is not None and after.model_dump() == before.model_dump()  # nothing written
    # its other fields change as any product's
    ok_body(boss.post("/api/update-product", params={"id": f"{org}/{product}"},
                      json={"owner": org, "name": product, "description": "monthly gold"}))
    assert _stored(Product, org, product).description == "monthly gold"


def test_a_plans_product_follows_the_plan_and_goes_with_it(boss, org):
    plan, product = _plan(boss, org)
    refused = _error(boss.post("/api/delete-product", json={"owner": org, "name": product}))
    assert refused == f"The product {product} belongs to the plan {plan}: delete the plan instead"
    assert _stored(Product, org, product) is not None
    ok_body(boss.post("/api/update-plan", params={"id": f"{org}/{plan}"},
                      json={"owner": org, "name": plan, "price": 99, "currency": "CNY", "paymentProviders": []}))
    mirrored = _stored(Product, org, product)
    assert (mirrored.price, mirrored.currency, mirrored.providers) == (99.0, "CNY", [])
    ok_body(boss.post("/api/delete-plan", json={"owner": org, "name": plan}))
    assert _stored(Product, org, product) is None


def test_a_plan_moved_to_another_organization_takes_its_product_along(admin, boss, org):
    """A global admin's update-plan with a new owner (the console's Add, another organization, Save)."""
    other = unique("shop")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": other}))
    plan, product = _plan(boss, org, role="")
    ok_body(admin.post("/api/update-plan", params={"id": f"{org}/{plan}"},
                       json={"owner": other, "name": plan, "paymentProviders": [], "price": 12}))
    assert _stored(Plan, org, plan) is None
    moved = _stored(Plan, other, plan)
    assert moved is not None and moved.product == product
    assert _stored(Product, org, product) is None
    follows = _stored(Product, other, product)
    assert follows is not None and (follows.tag, follows.price) == ("auto_created_product_for_plan", 12)
    # a product of that name in the organization it moves to: refused, nothing written
    back, back_product = _plan(boss, org, role="")
    ok_body(admin.post("/api/add-product", json={"owner": other, "name": back_product}))
    message = _error(admin.post("/api/update-plan", params={"id": f"{org}/{back}"},
                                json={"owner": other, "name": back, "paymentProviders": []}))
    assert message == f"The organization {other} already has a product named {back_product}"
    assert _stored(Plan, org, back) is not None and _stored(Product, org, back_product).tag == \
        "auto_created_product_for_plan"


# --- choices and amounts ---

@pytest.mark.parametrize(("kind", "fields", "message"), [
    ("product", {"currency": "XYZ"}, "The currency must be USD, CNY, EUR, JPY, GBP, AUD, CAD, CHF, HKD or SGD"),
    ("product", {"state": "Sold out"}, "The state must be Published or Draft"),
    ("product", {"rechargeOptions": [10, "abc"]}, "The recharge options must be positive amounts"),
    ("product", {"rechargeOptions": [-5]}, "The recharge options must be positive amounts"),
    ("product", {"price": -1}, "The price must be at least 0"),
    ("product", {"price": -0.01, "quantity": 5}, "The price must be at least 0"),
    ("product", {"quantity": -1}, "The quantity must be at least 0"),
    ("product", {"sold": -3}, "The sold count must be at least 0"),
    ("plan", {"currency": "EUR"}, "The currency must be USD or CNY"),
    ("plan", {"period": "Weekly"}, "The period must be Monthly or Yearly"),
    ("pricing", {"trialDuration": -1}, "The trial duration must be at least 0"),
    ("subscription", {"state": "Approved"}, "The state must be Pending, Active, Upcoming, Expired, Error or Suspended"),
    ("subscription", {"period": "Daily"}, "The period must be Monthly or Yearly"),
    ("payment", {"invoiceType": "Company"}, "The invoice type must be Individual or Organization"),
])
def test_bad_values_are_refused_on_add_and_update(boss, org, kind, fields, message):
    name = unique(kind)
    assert _error(boss.post(f"/api/add-{kind}", json={"owner": org, "name": name, **fields})) == message
    assert _stored(REGISTRY[kind].model, org, name) is None
    ok_body(boss.post(f"/api/add-{kind}", json={"owner": org, "name": name}))
    assert _error(boss.post(f"/api/update-{kind}", params={"id": f"{org}/{name}"},
                            json={"owner": org, "name": name, **fields})) == message


def test_recharge_options_are_kept_as_amounts(boss, org):
    name = unique("product")
    ok_body(boss.post("/api/add-product", json={"owner": org, "name": name, "isRecharge": True,
                                                "rechargeOptions": ["10", 25.5, 100]}))
    assert _stored(Product, org, name).recharge_options == [10.0, 25.5, 100.0]


# --- invoices ---

INVOICE = {"state": "Paid", "personName": "Ada Lovelace", "personIdCard": "AB123456", "personEmail": "ada@example.com",
           "personPhone": "+44 20 7946 0000", "invoiceType": "Organization", "invoiceTitle": "Analytical Engines",
           "invoiceTaxId": "913100001234"}
# each check, in order: the value that fails it (every later one failing too), and its message
CHECKS = [
    ("state", "Created", "Please pay the order first!"),
    ("personName", " ", "Please input your real name!"),
    ("personIdCard", "x", "Please input the correct ID card number!"),
    ("personEmail", "nope", "The input is not valid Email!"),
    ("personPhone", "12", "The input is not valid Phone!"),
    ("invoiceTitle", "", "The input is not invoice title!"),
    ("invoiceTaxId", "x", "The input is not invoice Tax ID!"),
]


def test_the_invoice_checks_are_told_in_order_and_write_nothing(boss, org):
    name = unique("payment")
    ok_body(boss.post("/api/add-payment", json={"owner": org, "name": name, "state": "Paid"}))
    before = _stored(Payment, org, name).model_dump()
    asked = {**INVOICE, **{key: bad for key, bad, _ in CHECKS}}  # every check failing
    for key, _, message in CHECKS:
        update = boss.post("/api/update-payment", params={"id": f"{org}/{name}"},
                           json={"owner": org, "name": name, **asked})
        assert _error(update) == message
        assert _stored(Payment, org, name).model_dump() == before
        asked[key] = INVOICE[key]  # mended: the next check is told
    ok_body(boss.post("/api/update-payment", params={"id": f"{org}/{name}"}, json={"owner": org, "name": name,
                                                                                    **asked}))
    assert _stored(Payment, org, name).invoice_title == "Analytical Engines"


@pytest.mark.parametrize(("change", "message"), [
    ({"invoiceTitle": "Someone Else"}, "The input is not invoice title!"),
    ({"invoiceTaxId": "913100001234"}, "The input is not invoice Tax ID!"),
])
def test_an_individual_invoice_is_titled_with_the_person_and_has_no_tax_id(boss, org, change, message):
    individual = {**INVOICE, "invoiceType": "Individual", "invoiceTitle": "Ada Lovelace", "invoiceTaxId": ""}
    name = unique("payment")
    assert _error(boss.post("/api/add-payment", json={"owner": org, "name": name, **individual, **change})) == message
    assert _stored(Payment, org, name) is None
    ok_body(boss.post("/api/add-payment", json={"owner": org, "name": name, **individual}))


@pytest.mark.parametrize(("field", "value"), [
    ("personName", "Someone"), ("personIdCard", "ZZ999999"), ("personEmail", "x@example.org"),
    ("personPhone", "+1 555 0100"), ("invoiceType", "Individual"), ("invoiceTitle", "Other Ltd"),
    ("invoiceTaxId", "999999999999"), ("invoiceRemark", "later"), ("invoiceUrl", ""),
])
def test_an_invoiced_payment_keeps_its_person_and_invoice(boss, org, field, value):
    name = unique("payment")
    ok_body(boss.post("/api/add-payment", json={"owner": org, "name": name, **INVOICE}))
    with session_scope() as db:
        row = db.exec(select(Payment).where(Payment.owner == org, Payment.name == name)).one()
        row.invoice_url = "https://files.example.com/invoice.pdf"  # as issuing the invoice sets it
        db.add(row)
    before = _stored(Payment, org, name).model_dump()
    message = _error(boss.post("/api/update-payment", params={"id": f"{org}/{name}"},
                               json={"owner": org, "name": name, field: value}))
    assert message == f"The field {field} of an invoiced payment cannot be changed"
    assert _stored(Payment, org, name).model_dump() == before
    ok_body(boss.post("/api/update-payment", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "displayName": "Invoiced"}))


# --- subscriptions ---

def test_the_period_is_the_plans_and_the_end_is_computed(boss, org):
    plan, _ = _plan(boss, org, period="Yearly")
    name = unique("subscription")
    ok_body(boss.post("/api/add-subscription", json={
        "owner": org, "name": name, "user": "ann", "plan": plan, "period": "Monthly",
        "startTime": "2024-01-31T10:00:00Z", "endTime": "2030-01-01T00:00:00Z"}))
    row = _stored(Subscription, org, name)
    assert row.period == "Yearly"
    assert row.end_time == datetime(2025, 1, 31, 10, tzinfo=UTC)
    # without a plan, its own period; a month from January 31 ends on the month's last day
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "plan": "", "period": "Monthly"}))
    row = _stored(Subscription, org, name)
    assert (row.period, row.end_time) == ("Monthly", datetime(2024, 2, 29, 10, tzinfo=UTC))
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "startTime": "2024-12-15T00:00:00Z"}))
    assert _stored(Subscription, org, name).end_time == datetime(2025, 1, 15, tzinfo=UTC)
    # a trial's longer end (written when it was bought) stays through a save that changes neither
    # the start, the period nor the plan
    with session_scope() as db:
        row = db.exec(select(Subscription).where(Subscription.owner == org, Subscription.name == name)).one()
        row.end_time = datetime(2025, 1, 29, tzinfo=UTC)
        db.add(row)
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "description": "14 trial days", "state": "Suspended"}))
    assert _stored(Subscription, org, name).end_time == datetime(2025, 1, 29, tzinfo=UTC)


def test_add_period():
    start = datetime(2023, 11, 30, 8, 30, tzinfo=UTC)
    assert subscription_rules.add_period(start, "Monthly") == datetime(2023, 12, 30, 8, 30, tzinfo=UTC)
    assert subscription_rules.add_period(start, "Yearly") == datetime(2024, 11, 30, 8, 30, tzinfo=UTC)
    assert subscription_rules.add_period(datetime(2024, 2, 29, tzinfo=UTC), "Yearly") == datetime(2025, 2, 28,
                                                                                                   tzinfo=UTC)
    assert subscription_rules.add_period(start, "") is None
    assert subscription_rules.add_period(datetime(9999, 12, 1, tzinfo=UTC), "Monthly") is None


def test_an_end_past_the_year_9999_is_refused(boss, org):
    name = unique("subscription")
    message = _error(boss.post("/api/add-subscription", json={"owner": org, "name": name, "period": "Yearly",
                                                              "startTime": "9999-03-01T00:00:00Z"}))
    assert message == "The end time of the subscription would be past the year 9999"
    assert _stored(Subscription, org, name) is None


def test_approving_a_subscription_sets_the_approver(boss, org):
    name = unique("subscription")
    ok_body(boss.post("/api/add-subscription", json={"owner": org, "name": name, "user": "ann", "state": "Pending",
                                                     "approver": "someone", "approveTime": "2020-01-01T00:00:00Z"}))
    row = _stored(Subscription, org, name)
    assert (row.approver, row.approve_time) == ("", None)  # only the service sets them
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "state": "Active"}))
    row = _stored(Subscription, org, name)
    assert row.approver == "boss" and row.approve_time is not None
    # a client's approver is ignored while the state stays
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "approver": "mallory", "description": "kept"}))
    assert _stored(Subscription, org, name).approver == "boss"
    ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                      json={"owner": org, "name": name, "state": "Suspended"}))
    row = _stored(Subscription, org, name)
    assert (row.state, row.approver, row.approve_time) == ("Suspended", "", None)


def test_only_admins_change_a_subscriptions_state(boss, org):
    name = unique("subscription")
    ok_body(boss.post("/api/add-subscription", json={"owner": org, "name": name, "user": "ann", "state": "Pending"}))
    before = _stored(Subscription, org, name).model_dump()
    ann = sign_in(org, "ann", PASSWORD)
    assert _error(ann.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                           json={"owner": org, "name": name, "state": "Active"})) == "Unauthorized operation"
    assert _stored(Subscription, org, name).model_dump() == before
    # the kind's own rule, whatever route lets a normal user write a subscription
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org, m.User.name == "ann")).one()
        old = db.exec(select(Subscription).where(Subscription.owner == org, Subscription.name == name)).one()
        new = Subscription.model_validate(old.model_dump())
        new.state = "Active"
        with pytest.raises(ServiceError) as refused:
            subscription_rules.before_save(db, Actor(user=user), old, new, {"state"})
        assert refused.value.template == subscription_rules.NOT_ADMIN


def _members(org: str, role: str) -> list[str]:
    return _stored(m.Role, org, role).users


def test_a_subscriptions_state_set_by_hand_takes_and_gives_the_plans_role(boss, org):
    role = unique("role")
    ok_body(boss.post("/api/add-role", json={"owner": org, "name": role, "isEnabled": True}))
    plan, _ = _plan(boss, org, role=role)
    name, ann = unique("subscription"), f"{org}/ann"

    def state(value: str) -> None:
        ok_body(boss.post("/api/update-subscription", params={"id": f"{org}/{name}"},
                          json={"owner": org, "name": name, "state": value}))

    ok_body(boss.post("/api/add-subscription", json={"owner": org, "name": name, "user": "ann", "plan": plan,
                                                     "state": "Pending"}))
    assert ann not in _members(org, role)
    state("Active")
    assert ann in _members(org, role)
    state("Suspended")
    assert ann not in _members(org, role)
    state("Active")  # re-activated: granted again
    assert ann in _members(org, role)
    state("Expired")
    assert ann not in _members(org, role)
    # another Active subscription granting the role keeps it; deleting the last takes it back
    other_plan, _ = _plan(boss, org, role=role)
    other = unique("subscription")
    ok_body(boss.post("/api/add-subscription", json={"owner": org, "name": other, "user": "ann", "plan": other_plan,
                                                     "state": "Active"}))
    state("Active")
    state("Suspended")
    assert ann in _members(org, role)
    ok_body(boss.post("/api/delete-subscription", json={"owner": org, "name": other}))
    assert ann not in _members(org, role)
