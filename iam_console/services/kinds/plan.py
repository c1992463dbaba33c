"""Plans: what a subscription buys, at a price per period. A plan sells through a product
of its own (tagged as made for a plan): adding the plan makes it, saving the plan keeps
its price, currency and providers in step, deleting the plan deletes it."""

from __future__ import annotations

import secrets

from sqlmodel import Session, select

from ... import models as m
from ..access import Actor
from .common import Choice, KindRules, fixed
from .product import PLAN_PRODUCT_QUANTITY, PLAN_TAG

CURRENCIES = ("USD", "CNY")
PERIODS = ("Monthly", "Yearly")


def _product(db: Session, plan: m.Plan) -> m.Product | None:
    if not plan.product:
        return None
    return db.exec(select(m.Product).where(m.Product.owner == plan.owner, m.Product.name == plan.product)).first()


def _mirror(plan: m.Plan, product: m.Product) -> None:
    product.owner = plan.owner
    product.display_name = f"Product for Plan {plan.name}/{plan.display_name}/{plan.period}"[:100]
    product.detail = (f"This product was auto created for plan {plan.name}({plan.display_name}), "
                      f"subscription period is {plan.period}")[:1000]
    product.description = plan.description
    product.price, product.currency = plan.price, plan.currency
    product.providers = list(plan.payment_providers)


def after_save(db: Session, actor: Actor, old: m.Plan | None, plan: m.Plan) -> None:
    product = _product(db, plan)
    if product is None and old is None and not plan.product:
        product = m.Product(owner=plan.owner, name=f"product_{secrets.token_hex(8)}", tag=PLAN_TAG,
                            quantity=PLAN_PRODUCT_QUANTITY, state="Published", created_time=plan.created_time)
        plan.product = product.name
        db.add(plan)
    if product is not None and product.tag == PLAN_TAG:
        _mirror(plan, product)
        db.add(product)
    db.flush()


def take_along(db: Session, plan: m.Plan) -> None:
    product = _product(db, plan)
    if product is not None and product.tag == PLAN_TAG:
        db.delete(product)


RULES = KindRules(choices=(Choice("currency", CURRENCIES), Choice("period", PERIODS)), after_save=after_save,
                  take_along=take_along,
                  new=fixed(displayName="New Plan - {suffix}", price=10.0, period="Monthly", currency="USD",
                            isEnabled=True))
