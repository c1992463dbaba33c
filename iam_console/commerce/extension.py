"""Commerce, declared through the extension contract (iam_console/extension.py) as an installed
extension declares itself: its kinds and their rules, its menu group and pages, its routes, its
job, its webhook events, its catalogs, its first-start providers and its invoices folder. Nothing
outside this package names it (docs/extending.md, "How extensions are found")."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce import commerce, invoices
from iam_console.commerce.kinds import order, payment, plan, pricing, product, subscription, transaction
from iam_console.commerce.tables import Order, Payment, Plan, Pricing, Product, Subscription, Transaction
from iam_console.core import builtin as b
from iam_console.core.resources import Kind, Ref
from iam_console.core.seed import ensure_record
from iam_console.db import session_scope
from iam_console.extension import Extension, Job, MenuEntry, MenuGroup

PROVIDER, USER = Ref("provider", "provider", shared=True), Ref("user", "user")
APPLICATION, PAYMENT = Ref("application", "application", shared=True), Ref("payment", "payment")
KINDS = (
    Kind("product", Product, name_prefix="product", counted=True,
         references=(Ref("providers", "provider", shared=True),)),
    Kind("payment", Payment, name_prefix="payment", counted=True, references=(PROVIDER, USER)),
    Kind("plan", Plan, name_prefix="plan", references=(
        Ref("payment_providers", "provider", shared=True), Ref("role", "role"), Ref("product", "product"))),
    Kind("pricing", Pricing, name_prefix="pricing", references=(Ref("plans", "plan"), APPLICATION)),
    Kind("subscription", Subscription, name_prefix="subscription", counted=True, charted=True, references=(
        USER, Ref("pricing", "pricing"), Ref("plan", "plan"), PAYMENT)),
    Kind("transaction", Transaction, name_prefix="transaction", counted=True, charted=True,
         references=(APPLICATION, PROVIDER, USER, PAYMENT)),
    Kind("order", Order, name_prefix="order", counted=True, references=(USER, PAYMENT)),
)
# the events of a webhook: add-, update- and delete- of these kinds, and the payment notifications
EVENT_KINDS = ("product", "payment", "plan", "pricing", "subscription")
EVENTS = (*(f"{verb}-{kind}" for kind in EVENT_KINDS for verb in ("add", "update", "delete")),
          "invoice-payment", "notify-payment")


def expire_subscriptions() -> None:
    """Subscriptions past their end: Expired, their plan's role taken back (commerce/commerce.py);
    each is claimed by its own conditional UPDATE (Active -> Expired), so one worker ends it."""
    with session_scope() as db:
        while commerce.expire_subscriptions(db) == commerce.EXPIRY_BATCH:
            pass


def first_start(db: Session) -> None:
    """The shared payment providers every organization may use: pay from the balance, and pay at once."""
    for name, display, type_ in (("provider_balance", "Balance", "Balance"),
                                 ("provider_payment_dummy", "Dummy Payment", "Dummy")):
        ensure_record(db, m.Provider(owner=b.ADMIN_OWNER, name=name, display_name=display, category="Payment",
                                     type=type_))


COMMERCE = Extension(
    "commerce",
    kinds=KINDS,
    rules={module.__name__.rpartition(".")[2]: module.RULES
           for module in (order, payment, plan, pricing, product, subscription, transaction)},
    menu_groups=(MenuGroup("/business", "Business & Payments", after="/logs"),),
    menu=(
        MenuEntry("/business", "/products", "Products"),
        MenuEntry("/business", "/orders", "Orders"),
        MenuEntry("/business", "/payments", "Payments"),
        MenuEntry("/business", "/plans", "Plans"),
        MenuEntry("/business", "/pricings", "Pricings"),
        MenuEntry("/business", "/subscriptions", "Subscriptions"),
        MenuEntry("/business", "/transactions", "Transactions"),
    ),
    pages=tuple(f"iam_console.commerce.ui.{name}" for name in (
        "buy", "orders", "payments", "plans", "pricings", "products", "select_plan", "subscriptions", "transactions")),
    routers=("iam_console.commerce.api:router",),
    jobs=(Job("subscription expiry", expire_subscriptions),),
    webhook_events=EVENTS,
    translations=str(Path(__file__).parent / "translations"),
    seed=first_start,
    file_folders=(invoices.INVOICE_FOLDER,),
)
