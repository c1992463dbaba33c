"""Buying: orders, their payments, and what a payment sets off (docs/architecture.md, "Payments").

- place_order: an order (state Created) of products of one organization and one currency, at the
  products' prices (a recharge at the buyer's amount).
- pay_order: a payment through one of the first product's payment providers (commerce/payments).
  Dummy and Balance pay at once, and the payment is settled in the same transaction; Stripe and
  PayPal answer a URL to pay at, and the payment is settled when the provider says it is paid.
- check_payment / notify_payment: ask the provider how a payment stands. Only a payment still
  Created moves, by one conditional UPDATE (Created -> the new state): of two notifications at
  once, one moves it and settles; a repeated one finds it final and changes nothing.
- settle: in the payment's transaction, a Purchase transaction (and a Recharge one that raises the
  balance, for recharge products), the stock taken as Casdoor's UpdateProductStock takes it
  (quantity - n and sold + n, a conditional UPDATE: the quantity, the stock left, never below
  zero; a recharge sold + n only), and for a plan a subscription, Active, with the plan's role
  granted (or the user's active subscription of the plan one period longer).
- expire_subscriptions: the scheduler's; ends the subscriptions past their end and takes back the
  role unless another active subscription grants it.

All money is Decimal (models/base.py Money): nothing here computes with a float."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlmodel import Session, select, update

from iam_console import models as m
from iam_console.audit import records
from iam_console.commerce import payments
from iam_console.commerce.kinds import subscription as subscription_rules
from iam_console.commerce.kinds.subscription import add_period
from iam_console.commerce.payments import balance
from iam_console.commerce.payments.base import CREATED, FINAL, PAID, Check, PayRequest
from iam_console.commerce.tables import Order, Payment, Plan, Pricing, Product, Subscription, Transaction
from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError, Unauthorized
from iam_console.models.base import money_of, utcnow, wire_money
from iam_console.settings import settings

ORDER_STATES = ("Created", "Paid", "Canceled", "Failed", "Timeout")
MAX_ITEMS = 50
MAX_QUANTITY = 1000
EXPIRY_BATCH = 500  # subscriptions expired per transaction


def _name(prefix: str) -> str:
    return f"{prefix}_{utcnow().strftime('%Y%m%d%H%M%S')}_{secrets.token_hex(4)}"


def period_end(start: datetime, period: str) -> datetime:
    """start + one period, as a subscription's save computes it (commerce/kinds/subscription.py)."""
    end = add_period(start, period)
    if end is None:
        raise ServiceError("The period %s is not Monthly or Yearly", period)
    return end


# --- who buys ---

def _signed_in(actor: Actor) -> None:
    """Who may act is told before whether a record exists."""
    if actor.is_anonymous:
        raise Unauthorized()


def buyer(db: Session, actor: Actor, owner: str, user_name: str = "") -> m.User:
    """The user an order is for: the caller, or (for an admin of `owner`) the named user. A buyer
    is a user of the organization that sells."""
    _signed_in(actor)
    name = user_name or actor.name
    admin = actor.is_global_admin or (actor.is_org_admin and actor.organization == owner)
    if user_name and user_name != actor.name and not admin:
        raise ServiceError("Only admin user can specify user")
    if not admin and (actor.user is None or actor.user.owner != owner):
        raise ServiceError("Unauthorized operation")  # a user buys from their own organization
    if not name:
        raise ServiceError("Please login first")
    user = lookup.user(db, owner, name)
    if user is None:
        raise ServiceError("The user: %s/%s doesn't exist", owner, name)
    return user


def _may_act_on(actor: Actor, owner: str, user: str) -> None:
    """An order or payment is its buyer's, and its organization's admins'."""
    if actor.is_anonymous:
        raise ServiceError("Please login first")
    if actor.is_global_admin or (actor.is_org_admin and actor.organization == owner):
        return
    if actor.user is None or actor.user.owner != owner or actor.user.name != user:
        raise ServiceError("Unauthorized operation")


# --- orders ---

def _product(db: Session, owner: str, name: str) -> Product:
    found = db.exec(select(Product).where(Product.owner == owner, Product.name == name)).first()
    if found is None:
        raise ServiceError("The product: %s/%s does not exist", owner, name)
    return found


def _count(value: Any) -> int:
    if value in (None, "", 0):
        return 1
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_QUANTITY:
        raise ServiceError("The quantity must be a whole number between 1 and %d", MAX_QUANTITY)
    return value


def _amount(value: Any, label: str) -> Decimal:
    if isinstance(value, bool) or not isinstance(value, int | float | str | Decimal):
        raise ServiceError("The %s must be a number", label)
    try:
        return money_of(value)
    except (ValueError, ArithmeticError):
        raise ServiceError("The %s must be a number with at most 6 decimal places", label) from None


def _amounts(values: list) -> set[Decimal]:
    """A product's recharge options that are amounts (the list is a client's JSON)."""
    found = set()
    for value in values:
        if isinstance(value, int | float | str) and not isinstance(value, bool):
            try:
                found.add(money_of(value))
            except (ValueError, ArithmeticError):
                continue
    return found


def _plan_of(db: Session, product: Product, info: Mapping[str, Any]) -> tuple[str, str]:
    """The pricing and plan an item names: both or neither, an enabled pricing listing an enabled
    plan whose product is this one."""
    pricing_name, plan_name = str(info.get("pricingName") or ""), str(info.get("planName") or "")
    if not pricing_name and not plan_name:
        return "", ""
    if not pricing_name or not plan_name:
        raise ServiceError("A plan is bought with its pricing: give both pricingName and planName")
    pricing = db.exec(select(Pricing).where(Pricing.owner == product.owner,
                                              Pricing.name == pricing_name)).first()
    if pricing is None or not pricing.is_enabled:
        raise ServiceError("The pricing: %s does not exist or is disabled", pricing_name)
    plan = db.exec(select(Plan).where(Plan.owner == product.owner, Plan.name == plan_name)).first()
    if plan is None or not plan.is_enabled or plan_name not in pricing.plans:
        raise ServiceError("The plan: %s is not an enabled plan of the pricing %s", plan_name, pricing_name)
    if plan.product != product.name:
        raise ServiceError("The product %s is not the product of the plan %s", product.name, plan_name)
    return pricing_name, plan_name


def _check_exclusive(db: Session, owner: str, plan_name: str, user: str) -> None:
    """An exclusive plan holds one active subscription of a user at a time."""
    exclusive = db.exec(select(Plan.is_exclusive).where(Plan.owner == owner, Plan.name == plan_name)).first()
    if exclusive and db.exec(select(Subscription.pk).where(
            Subscription.owner == owner, Subscription.user == user, Subscription.plan == plan_name,
            Subscription.state == "Active")).first() is not None:
        raise ServiceError("user already has an active subscription for plan: %s", plan_name)


def place_order(db: Session, actor: Actor, owner: str, items: Any, user_name: str = "", *,
                save: bool = True) -> Order:
    """The order, written (`save`), or only checked and built: buy-product writes it once its
    provider has answered, so no transaction stays open over a provider's network call."""
    if not isinstance(items, list) or not items:
        raise ServiceError("Product list cannot be empty")
    if len(items) > MAX_ITEMS:
        raise ServiceError("An order holds at most %d products", MAX_ITEMS)
    user = buyer(db, actor, owner, user_name)
    infos, total, currency = [], Decimal(0), ""
    for item in items:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"]:
            raise ServiceError("product name cannot be empty")
        product = _product(db, owner, item["name"])
        if product.state != "Published":
            raise ServiceError("The product %s is not published", product.name)
        quantity = _count(item.get("quantity"))
        if product.is_recharge:
            price = _amount(item.get("price"), "custom price")
            if price <= 0:
                raise ServiceError("the custom price should be greater than zero")
            options = _amounts(product.recharge_options)
            if product.disable_custom_recharge and price not in options:
                raise ServiceError("The amount %s is not one of the product's recharge options", str(price))
            balance.check_recharge(db, user, product.currency)  # a balance has one currency
        else:
            price = product.price
            if product.quantity < quantity:  # the stock left (checked again when the stock is taken)
                raise ServiceError("The product: %s is out of stock", product.name)
        pricing_name, plan_name = _plan_of(db, product, item)
        if plan_name:
            _check_exclusive(db, owner, plan_name, user.name)
        currency = currency or product.currency or "USD"
        if (product.currency or "USD") != currency:
            raise ServiceError("All products of an order have one currency: %s is in %s, not %s", product.name,
                               product.currency or "USD", currency)
        infos.append({"owner": owner, "name": product.name, "displayName": product.display_name,
                      "image": product.image, "detail": product.detail, "price": wire_money(price),
                      "currency": currency, "isRecharge": product.is_recharge, "quantity": quantity,
                      "pricingName": pricing_name, "planName": plan_name})
        total += price * quantity
    name = _name("order")
    order = Order(owner=owner, name=name, display_name=name, products=infos, user=user.name, price=total,
                    currency=currency, state="Created", updated_time=utcnow())
    if save:
        _save_order(db, actor, order)
    return order


def _save_order(db: Session, actor: Actor, order: Order) -> None:
    db.add(order)
    db.flush()
    _record(db, actor, order.owner, "place-order", order)


def _order(db: Session, owner: str, name: str, *, lock: bool = False) -> Order:
    query = select(Order).where(Order.owner == owner, Order.name == name)
    found = db.exec(query.with_for_update() if lock else query).first()
    if found is None:
        raise ServiceError("The order: %s/%s does not exist", owner, name)
    return found


def cancel_order(db: Session, actor: Actor, owner: str, name: str) -> Order:
    _signed_in(actor)
    order = _order(db, owner, name)
    _may_act_on(actor, owner, order.user)
    done = db.exec(update(Order).where(Order.pk == order.pk, Order.state == "Created")
                   .values(state="Canceled", message="Canceled by user", updated_time=utcnow()))
    if done.rowcount != 1:
        db.refresh(order)
        raise ServiceError("cannot cancel order in state: %s", order.state)
    db.refresh(order)
    _record(db, actor, owner, "cancel-order", order)
    return order


# --- payments ---

def payment_provider(db: Session, product: Product, name: str) -> m.Provider:
    """One of the product's payment providers: the organization's own, or a shared one."""
    if not name or name not in product.providers:
        raise ServiceError("The provider %s is not a payment provider of the product %s", name or "''",
                           product.name)
    rows = db.exec(select(m.Provider).where(m.Provider.name == name,
                                            m.Provider.owner.in_((product.owner, b.ADMIN_OWNER)))).all()
    found = next((p for p in rows if p.owner == product.owner), rows[0] if rows else None)
    if found is None or found.category != "Payment":
        raise ServiceError("The provider %s is not a payment provider of the product %s", name, product.name)
    return found


def result_url(owner: str, payment: str) -> str:
    return f"{settings.origin}/payments/{owner}/{payment}/result"


def pay_order(db: Session, actor: Actor, owner: str, name: str, provider_name: str) -> Payment:
    _signed_in(actor)
    order = _order(db, owner, name)
    _may_act_on(actor, owner, order.user)
    return _pay(db, actor, order, provider_name, new=False)


def _pay(db: Session, actor: Actor, order: Order, provider_name: str, *, new: bool) -> Payment:
    """Pay an order (`new`: not written yet). Everything is read and checked first; a provider
    that pays elsewhere (Stripe, PayPal) is called before this transaction writes anything, so no
    row lock (and on SQLite no database write lock) is held over its network call."""
    owner = order.owner
    if order.state != "Created":
        raise ServiceError("cannot pay for order: %s/%s, current state is %s", owner, order.name, order.state)
    infos = [i for i in order.products if isinstance(i, dict)]
    if not infos:
        raise ServiceError("order has no products")
    first = _product(db, owner, str(infos[0].get("name", "")))
    provider = payment_provider(db, first, provider_name)
    module = payments.of(provider)
    if provider.type == "Balance" and any(i.get("isRecharge") for i in infos):
        raise ServiceError("A recharge cannot be paid from the balance")
    user = lookup.user(db, owner, order.user)
    if user is None:
        raise ServiceError("the user: %s does not exist", order.user)
    payment_name = _name("payment")
    return_url = result_url(owner, payment_name)
    if first.success_url:
        joiner = "&" if "?" in first.success_url else "?"
        return_url = f"{first.success_url}{joiner}transactionOwner={owner}&transactionName={payment_name}"
    names = ", ".join(str(i.get("name", "")) for i in infos)
    display = ", ".join(str(i.get("displayName", "")) for i in infos)
    if module.instant:  # stock before money: every purchase locks the product row first, then the buyer's
        _take_stock(db, owner, infos)
    answer = module.pay(db, PayRequest(
        owner=owner, payment_name=payment_name, user=user, price=order.price, currency=order.currency,
        product_names=names, product_display_names=display, description=first.description,
        return_url=return_url, notify_url=f"{settings.origin}/api/notify-payment/{owner}/{payment_name}"))
    if new:
        _save_order(db, actor, order)
    payment = Payment(
        owner=owner, name=payment_name, display_name=payment_name, provider=provider.name, type=provider.type,
        products=[str(i.get("name", "")) for i in infos], products_display_name=display[:1000],
        product_name=str(infos[0].get("name", ""))[:100],
        product_display_name=str(infos[0].get("displayName", ""))[:100],
        detail=first.detail, currency=order.currency, price=order.price, user=order.user, order=order.name,
        out_order_id=answer.out_order_id[:100], pay_url=answer.pay_url, success_url=return_url[:1000],
        return_url=first.return_url, state=CREATED)
    db.add(payment)
    order.payment = payment.name
    order.updated_time = utcnow()
    db.add(order)
    db.flush()
    if answer.paid:
        payment.state, payment.message = PAID, "Payment successful"
        settle(db, payment, order, provider, stock_taken=True)
    _record(db, actor, owner, "pay-order", payment)
    return payment


def buy_product(db: Session, actor: Actor, product_id: tuple[str, str], provider_name: str, *,
                pricing: str = "", plan: str = "", user_name: str = "", custom_price: Any = None) -> Payment:
    """Casdoor's buy-product: an order of one product, paid at once."""
    owner, name = product_id
    item: dict[str, Any] = {"name": name, "quantity": 1, "pricingName": pricing, "planName": plan}
    if custom_price not in (None, ""):
        item["price"] = custom_price
    order = place_order(db, actor, owner, [item], user_name, save=False)
    return _pay(db, actor, order, provider_name, new=True)


def _take_stock(db: Session, owner: str, infos: list[dict]) -> None:
    """Casdoor's stock rule: a product's quantity is the stock left. Each product bought leaves
    quantity - n, sold + n, by a conditional UPDATE (quantity >= n) that the database applies
    under the row's lock, so the stock never goes below zero whatever runs at once; a recharge
    has no stock and counts its sales only (sold + n)."""
    for info in infos:
        product = _product(db, owner, str(info.get("name", "")))
        quantity = int(info.get("quantity") or 1)
        if info.get("isRecharge"):
            db.exec(update(Product).where(Product.pk == product.pk).values(sold=Product.sold + quantity))
            continue
        done = db.exec(update(Product).where(Product.pk == product.pk, Product.quantity >= quantity)
                       .values(quantity=Product.quantity - quantity, sold=Product.sold + quantity))
        if done.rowcount != 1:
            raise ServiceError("The product: %s is out of stock", product.name)


def settle(db: Session, payment: Payment, order: Order, provider: m.Provider, *,
           stock_taken: bool = False) -> None:
    """What a paid payment sets off, in the caller's transaction (a ServiceError undoes it all)."""
    now = utcnow()
    # the order is paid once: of two payments of one order settling at once, the second finds it Paid
    db.flush()
    claimed = db.exec(update(Order).where(Order.pk == order.pk, Order.state == "Created")
                      .values(state="Paid", message="Payment successful", updated_time=now, payment=payment.name))
    if claimed.rowcount != 1:
        raise ServiceError("cannot pay for order: %s/%s, current state is %s", order.owner, order.name, "Paid")
    db.refresh(order)
    user = lookup.user(db, payment.owner, payment.user)
    application = user.signup_application if user is not None else ""
    infos = [i for i in order.products if isinstance(i, dict)]
    if not stock_taken:
        _take_stock(db, payment.owner, infos)

    def transaction(category: str, amount: Decimal, product: str = "", display: str = "") -> None:
        db.add(Transaction(
            owner=payment.owner, name=f"transaction_{secrets.token_hex(16)}", display_name=payment.name,
            application=application, category=category, type=provider.category, subtype=provider.type,
            provider=provider.name, user=payment.user, tag="User", amount=amount, currency=order.currency,
            payment=payment.name, state=PAID, product_name=product[:100], product_display_name=display[:100],
            detail=payment.detail[:1000], return_url=payment.return_url))

    transaction("Purchase", -payment.price, payment.product_name, payment.product_display_name)
    recharge = sum((money_of(i.get("price", 0)) * int(i.get("quantity") or 1) for i in infos
                    if i.get("isRecharge")), Decimal(0))
    if recharge:
        if user is None:
            raise ServiceError("the user: %s does not exist", payment.user)
        transaction("Recharge", recharge)
        balance.give(db, user, recharge, order.currency)
    for info in infos:
        if info.get("planName"):
            _subscribe(db, payment, str(info.get("pricingName", "")), str(info["planName"]), now)
    db.add(payment)
    db.flush()


# --- subscriptions ---

def _subscribe(db: Session, payment: Payment, pricing_name: str, plan_name: str, now: datetime) -> None:
    """A plan bought: a new Active subscription granting the plan's role; or, when the user holds
    an Active subscription of the plan already, that one a period longer (docs/api.md, "Commerce":
    one Active subscription of a plan per user, a repeated purchase renews it)."""
    plan = db.exec(select(Plan).where(Plan.owner == payment.owner, Plan.name == plan_name)).first()
    if plan is None:
        raise ServiceError("the plan: %s does not exist", plan_name)
    active = db.exec(select(Subscription).where(
        Subscription.owner == payment.owner, Subscription.user == payment.user,
        Subscription.plan == plan_name, Subscription.state == "Active")
        .order_by(Subscription.end_time.desc()).with_for_update()).first()
    if active is not None:
        active.end_time = period_end(max(active.end_time or now, now), plan.period)
        active.payment = payment.name
        db.add(active)
        return
    pricing = db.exec(select(Pricing).where(Pricing.owner == payment.owner,
                                              Pricing.name == pricing_name)).first()
    end = period_end(now, plan.period)
    description = ""
    trial = pricing.trial_duration if pricing is not None else 0
    if trial > 0:
        earlier = db.exec(select(Subscription.pk).where(
            Subscription.owner == payment.owner, Subscription.user == payment.user,
            Subscription.pricing == pricing_name)).first()
        if earlier is None:  # the pricing's first subscription of this user runs the trial days longer
            end += timedelta(days=trial)
            description = f"Includes a trial of {trial} days"
    name = _name("subscription")
    db.add(Subscription(
        owner=payment.owner, name=name, display_name=name, description=description, user=payment.user,
        pricing=pricing_name, plan=plan_name, payment=payment.name, start_time=now, end_time=end,
        period=plan.period, state="Active"))
    if plan.role:
        subscription_rules.grant_role(db, payment.owner, plan.role, payment.user)


def expire_subscriptions(db: Session, now: datetime | None = None, batch: int = EXPIRY_BATCH) -> int:
    """Active subscriptions past their end become Expired, each by a conditional UPDATE (Active ->
    Expired: of several workers, one moves it); the plan's role is taken back unless another
    active subscription of the user grants it. Returns how many expired."""
    now = now or utcnow()
    due = db.exec(select(Subscription).where(Subscription.state == "Active", Subscription.end_time <= now)
                  .order_by(Subscription.end_time).limit(batch)).all()
    expired = 0
    for sub in due:
        held = subscription_rules.granted(db, sub)
        moved = db.exec(update(Subscription).where(Subscription.pk == sub.pk, Subscription.state == "Active")
                        .values(state="Expired"))
        if moved.rowcount != 1:
            continue
        expired += 1
        if held is not None:
            subscription_rules.release_role(db, *held, leaving=sub.pk)
    db.commit()
    return expired


# --- notifications and checks ---

def _payment(db: Session, owner: str, name: str) -> Payment:
    found = db.exec(select(Payment).where(Payment.owner == owner, Payment.name == name)).first()
    if found is None:
        raise ServiceError("the payment: %s does not exist", name)
    return found


def _provider_of(db: Session, payment: Payment) -> m.Provider:
    rows = db.exec(select(m.Provider).where(m.Provider.name == payment.provider,
                                            m.Provider.owner.in_((payment.owner, b.ADMIN_OWNER)))).all()
    found = next((p for p in rows if p.owner == payment.owner), rows[0] if rows else None)
    if found is None:
        raise ServiceError("the payment provider: %s does not exist", payment.provider)
    return found


ORDER_AFTER = {"Paid": ("Paid", "Payment successful"), "Error": ("Failed", ""),
               "Canceled": ("Canceled", "Payment was cancelled"), "Timeout": ("Timeout", "Payment timed out")}


def apply_check(db: Session, payment: Payment, provider: m.Provider, check: Check) -> Payment:
    """Move a Created payment to the provider's state, once; settle it when Paid."""
    if payment.state in FINAL or check.state == payment.state or check.state == CREATED:
        return payment
    state, message = check.state, check.message
    if state == PAID and (check.price != payment.price or check.currency.upper() != payment.currency.upper()):
        state = "Error"
        message = (f"the payment's price: {check.price} {check.currency} doesn't equal to the expected price: "
                   f"{payment.price} {payment.currency}")
    moved = db.exec(update(Payment).where(Payment.pk == payment.pk, Payment.state == CREATED)
                    .values(state=state, message=message))
    if moved.rowcount != 1:  # another notification moved it first
        db.refresh(payment)
        return payment
    db.refresh(payment)
    order = db.exec(select(Order).where(Order.owner == payment.owner, Order.name == payment.order)).first()
    if order is None:
        return payment
    if state == PAID:
        savepoint = db.begin_nested()
        try:
            settle(db, payment, order, provider)
            savepoint.commit()
        except ServiceError as exc:  # paid, but not deliverable (sold out meanwhile): kept, to be refunded
            savepoint.rollback()
            db.refresh(payment)
            db.refresh(order)
            payment.message = f"{exc}: the payment is to be refunded"[:2000]
            db.add(payment)
            if order.state == "Created":  # not when another payment of the order paid it
                order.state, order.message, order.updated_time = "Failed", payment.message, utcnow()
                db.add(order)
    else:
        order.state, order.message = ORDER_AFTER.get(state, ("Failed", ""))
        order.message = order.message or message
        order.updated_time = utcnow()
        db.add(order)
    db.flush()
    return payment


def notify_payment(db: Session, owner: str, name: str, body: bytes, headers: Mapping[str, str]) -> Payment:
    """A provider's notification: verified (where the provider signs them), then a check with the
    provider. A final payment is answered as it is, changed in nothing."""
    payment = _payment(db, owner, name)
    provider = _provider_of(db, payment)
    module = payments.of(provider)
    module.verify(body, headers)
    if payment.state in FINAL:
        return payment
    payment = apply_check(db, payment, provider, module.check(payment))
    records.audit(db, organization=owner, user=payment.user, action="notify-payment",
                  obj={"owner": owner, "name": name, "state": payment.state})
    return payment


def check_payment(db: Session, actor: Actor, owner: str, name: str) -> Payment:
    """The result page's question: a payment still Created is checked with its provider."""
    _signed_in(actor)
    payment = _payment(db, owner, name)
    _may_act_on(actor, owner, payment.user)
    if payment.state in FINAL:
        return payment
    provider = _provider_of(db, payment)
    return apply_check(db, payment, provider, payments.of(provider).check(payment))


def payment_for(db: Session, actor: Actor, owner: str, name: str) -> Payment:
    _signed_in(actor)
    payment = _payment(db, owner, name)
    _may_act_on(actor, owner, payment.user)
    return payment


# --- a user's own lists ---

def user_rows(db: Session, actor: Actor, model: type[Order] | type[Payment], owner: str,
              user: str) -> list[Any]:
    """get-user-orders / get-user-payments: a user's own, or any user's of an admin's organization."""
    _signed_in(actor)
    if not owner or not user:
        raise ServiceError("The owner and user cannot be empty")
    admin = actor.is_global_admin or (actor.is_org_admin and actor.organization == owner)
    if not admin and (actor.user is None or actor.user.owner != owner or actor.user.name != user):
        raise ServiceError("Forbidden")
    return list(db.exec(select(model).where(model.owner == owner, model.user == user)
                        .order_by(model.created_time.desc(), model.pk.desc()).limit(1000)).all())


def _record(db: Session, actor: Actor, owner: str, action: str, row: m.Named) -> None:
    records.audit(db, organization=owner, user=actor.name if actor.user is not None else "", action=action,
                  obj=m.to_wire(row))


# --- what the public pages show ---

def product_for_buyer(db: Session, actor: Actor, owner: str, name: str) -> dict[str, Any]:
    """The buy page's product and its payment providers, for a user of its organization (or an
    admin of it); a draft only to those admins."""
    _signed_in(actor)
    admin = actor.is_global_admin or (actor.is_org_admin and actor.organization == owner)
    if not admin and (actor.user is None or actor.user.owner != owner):
        raise ServiceError("Unauthorized operation")
    product = _product(db, owner, name)
    if product.state != "Published" and not admin:
        raise ServiceError("The product %s is not published", name)
    return {"product": m.to_wire(product), "providers": _payment_providers(db, product)}


def _payment_providers(db: Session, product: Product) -> list[dict[str, str]]:
    """The product's payment providers as a page offers them: name, display name and type."""
    owner = product.owner
    rows = db.exec(select(m.Provider).where(m.Provider.name.in_(product.providers or [""]),
                                            m.Provider.owner.in_((owner, b.ADMIN_OWNER)),
                                            m.Provider.category == "Payment")).all()
    chosen: dict[str, m.Provider] = {}
    for row in rows:  # the organization's own before a shared one of the same name
        if row.name not in chosen or row.owner == owner:
            chosen[row.name] = row
    return [{"name": p.name, "displayName": p.display_name or p.name, "type": p.type}
            for n in product.providers if (p := chosen.get(n)) is not None]


def order_to_pay(db: Session, actor: Actor, owner: str, name: str) -> dict[str, Any]:
    """The order's pay page, for its buyer and its organization's admins: the order, its payment
    once it has one, and while it is Created the payment providers pay_order takes (its first
    product's)."""
    _signed_in(actor)
    order = _order(db, owner, name)
    _may_act_on(actor, owner, order.user)
    infos = [i for i in order.products if isinstance(i, dict)]
    first = db.exec(select(Product).where(Product.owner == owner,
                                          Product.name == str(infos[0].get("name", "")))).first() if infos else None
    payment = db.exec(select(Payment).where(Payment.owner == owner, Payment.name == order.payment)).first() \
        if order.payment else None
    return {"order": m.to_wire(order), "payment": m.to_wire(payment) if payment is not None else None,
            "providers": _payment_providers(db, first) if first is not None and order.state == "Created" else []}


def payment_result(db: Session, actor: Actor, owner: str, name: str) -> dict[str, Any]:
    """The result page: the payment (checked with its provider while still Created), and the
    transactions it set off."""
    payment = check_payment(db, actor, owner, name)
    transactions = db.exec(select(Transaction).where(Transaction.owner == owner,
                                                       Transaction.payment == payment.name)
                           .order_by(Transaction.pk)).all()
    return {"payment": m.to_wire(payment), "transactions": [m.to_wire(t) for t in transactions]}


def pricing_plans(db: Session, owner: str, name: str) -> dict[str, Any]:
    """The select-plan page, public as Casdoor's: an enabled pricing and its enabled plans."""
    pricing = db.exec(select(Pricing).where(Pricing.owner == owner, Pricing.name == name)).first()
    if pricing is None or not pricing.is_enabled:
        raise ServiceError("The pricing: %s does not exist or is disabled", name)
    plans = {p.name: p for p in db.exec(select(Plan).where(Plan.owner == owner,
                                                             Plan.name.in_(pricing.plans or [""]),
                                                             Plan.is_enabled)).all()}
    shown = [{"name": p.name, "displayName": p.display_name or p.name, "description": p.description,
              "price": wire_money(p.price), "currency": p.currency, "period": p.period, "product": p.product,
              "options": [str(o) for o in p.options]} for n in pricing.plans if (p := plans.get(n)) is not None]
    return {"pricing": {"owner": owner, "name": pricing.name, "displayName": pricing.display_name or pricing.name,
                        "description": pricing.description, "trialDuration": pricing.trial_duration,
                        "application": pricing.application}, "plans": shown}
