"""Products: what is sold, through payment providers; a plan's product is locked."""

from __future__ import annotations

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.commerce.tables import Plan, Product
from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, check_range, fixed
from iam_console.core.resources import Kind
from iam_console.models.base import money_of, wire_money

CURRENCIES = ("USD", "CNY", "EUR", "JPY", "GBP", "AUD", "CAD", "CHF", "HKD", "SGD")
STATES = ("Published", "Draft")
PLAN_TAG = "auto_created_product_for_plan"  # the tag of a product a plan created
PLAN_PRODUCT_QUANTITY = 999
# what a plan's product keeps as the plan made it
PLAN_LOCKED = ("owner", "name", "tag", "currency", "price", "quantity", "sold", "providers")


def before_save(db: Session, actor: Actor, old: Product | None, row: Product, changed: set[str]) -> None:
    """Recharge options are amounts: numbers, or texts of numbers (the console's list field), kept
    exactly as money is (models/base.py Money: at most 6 decimals, below 10^9), sent as numbers."""
    amounts = []
    for option in row.recharge_options:
        try:
            amount = money_of(option) if isinstance(option, int | float | str) and not isinstance(option, bool) \
                else None
        except (ValueError, ArithmeticError):
            amount = None
        if amount is None or amount <= 0:
            raise ServiceError("The recharge options must be positive amounts")
        amounts.append(wire_money(amount))
    if amounts != row.recharge_options:
        row.recharge_options = amounts


def validate(db: Session, actor: Actor, row: Product) -> None:
    """No negative price, quantity (the stock left) or sold count, as the console's form allows
    none; its providers are payment providers (that they are the organization's or shared:
    references)."""
    check_range(row.price, 0, None, "price")
    check_range(row.quantity, 0, None, "quantity")
    check_range(row.sold, 0, None, "sold count")
    names = [p for p in row.providers if isinstance(p, str)]
    if names:
        other = db.exec(select(m.Provider.name).where(
            m.Provider.category != "Payment", m.Provider.name.in_(names),
            m.Provider.owner.in_((row.owner, b.ADMIN_OWNER)))).first()
        if other is not None:
            raise ServiceError("The provider %s is not a payment provider", other)


def protect(kind: Kind, old: Product, new: Product | None) -> None:
    if old.tag != PLAN_TAG or new is None:
        return
    for attribute in PLAN_LOCKED:
        if getattr(new, attribute) != getattr(old, attribute):
            raise ServiceError("The field %s of a product created for a plan cannot be changed", attribute)


def check_delete(db: Session, row: Product) -> None:
    """A plan's product goes with its plan; one whose plan is gone (or that a client tagged
    so) may be deleted like any other."""
    if row.tag != PLAN_TAG:
        return
    plan = db.exec(select(Plan.name).where(Plan.owner == row.owner, Plan.product == row.name)).first()
    if plan is not None:
        raise ServiceError("The product %s belongs to the plan %s: delete the plan instead", row.name, plan)


def is_plan_product(record: dict) -> bool:
    """A product a plan made (its wire record): the console locks PLAN_LOCKED on it."""
    return record.get("tag") == PLAN_TAG


RULES = KindRules(choices=(Choice("currency", CURRENCIES), Choice("state", STATES)), validate=validate,
                  before_save=before_save, protect=protect, check_delete=check_delete,
                  new=fixed(displayName="New Product - {suffix}", price=300.0, quantity=99, sold=10, currency="USD",
                            state="Published", isRecharge=False))
