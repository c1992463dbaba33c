"""Plans: what a subscription buys, at a price per period. A plan sells through a product
of its own (tagged as made for a plan): adding the plan makes it, saving the plan keeps
its price, currency and providers in step, moving the plan to another organization moves it
along (as Casdoor's UpdateProductForPlan sets the product's owner to the plan's), deleting the
plan deletes it."""

from __future__ import annotations

import secrets

from sqlmodel import Session, select

from iam_console.commerce.kinds.product import PLAN_PRODUCT_QUANTITY, PLAN_TAG
from iam_console.commerce.tables import Plan, Product
from iam_console.core import references
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, fixed
from iam_console.core.resources import REGISTRY

CURRENCIES = ("USD", "CNY")
PERIODS = ("Monthly", "Yearly")


def _product(db: Session, plan: Plan, owner: str = "") -> Product | None:
    """The plan's product, in `owner` (the plan's organization by default)."""
    if not plan.product:
        return None
    return db.exec(select(Product).where(Product.owner == (owner or plan.owner),
                                           Product.name == plan.product)).first()


def _moving(db: Session, old: Plan | None, plan: Plan) -> Product | None:
    """The product a plan moved to another organization takes along: the one made for it."""
    if old is None or old.owner == plan.owner or old.product != plan.product:
        return None
    product = _product(db, old, old.owner)
    return product if product is not None and product.tag == PLAN_TAG else None


def before_save(db: Session, actor: Actor, old: Plan | None, plan: Plan, changed: set[str]) -> None:
    """A plan moving to another organization: its product is checked as it will stand there
    (after_save moves it), and may not meet a product of the same name in that organization."""
    product = _moving(db, old, plan)
    if product is None:
        return
    if _product(db, plan) is not None:
        raise ServiceError("The organization %s already has a product named %s", plan.owner, plan.product)
    references.known(db.info.setdefault(references.FOUND, {}), REGISTRY["product"],
                     [Product(owner=plan.owner, name=product.name)])


def _mirror(plan: Plan, product: Product) -> None:
    product.owner = plan.owner
    product.display_name = f"Product for Plan {plan.name}/{plan.display_name}/{plan.period}"[:100]
    product.detail = (f"This product was auto created for plan {plan.name}({plan.display_name}), "
                      f"subscription period is {plan.period}")[:1000]
    product.description = plan.description
    product.price, product.currency = plan.price, plan.currency
    product.providers = list(plan.payment_providers)


def after_save(db: Session, actor: Actor, old: Plan | None, plan: Plan) -> None:
    product = _moving(db, old, plan) or _product(db, plan)
    if product is None and old is None and not plan.product:
        product = Product(owner=plan.owner, name=f"product_{secrets.token_hex(8)}", tag=PLAN_TAG,
                            quantity=PLAN_PRODUCT_QUANTITY, state="Published", created_time=plan.created_time)
        plan.product = product.name
        db.add(plan)
    if product is not None and product.tag == PLAN_TAG:
        _mirror(plan, product)
        db.add(product)
    db.flush()


def take_along(db: Session, plan: Plan) -> None:
    product = _product(db, plan)
    if product is not None and product.tag == PLAN_TAG:
        db.delete(product)


RULES = KindRules(choices=(Choice("currency", CURRENCIES), Choice("period", PERIODS)), before_save=before_save,
                  after_save=after_save,
                  take_along=take_along,
                  new=fixed(displayName="New Plan - {suffix}", price=10.0, period="Monthly", currency="USD",
                            isEnabled=True))
