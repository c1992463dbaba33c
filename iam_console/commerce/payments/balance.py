"""The Balance provider: pays from the buyer's balance, in the buyer's own transaction.

One conditional UPDATE takes the price: `balance = balance - price WHERE balance >= price`. The
database checks and subtracts in one statement under the row's lock, so two purchases at once can
never both pass the check on the same money: a balance never goes below zero, on SQLite,
PostgreSQL and MariaDB alike (the amounts are exact integers there: models/base.py Money).

A balance has one currency (`currency_of`): a recharge or a Balance payment in another currency is
refused, never converted (docs/architecture.md, "Payments")."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session, select, update

from iam_console import models as m
from iam_console.commerce.payments.base import Check, PayAnswer, PayRequest
from iam_console.commerce.tables import Payment
from iam_console.core import builtin as b
from iam_console.core.errors import ServiceError

DEFAULT_CURRENCY = "USD"  # Casdoor's, when neither the user nor the organization names one
OTHER_RECHARGE = "The balance is kept in %s: a recharge in %s cannot be added to it"
OTHER_PAYMENT = "The balance is kept in %s: it cannot pay an amount in %s"


def currency_of(db: Session, user: m.User) -> str:
    """The currency of a user's balance: the user's balanceCurrency, else the organization's, else USD."""
    if user.balance_currency.strip():
        return user.balance_currency.strip().upper()
    organization = db.exec(select(m.Organization.balance_currency).where(
        m.Organization.owner == b.ADMIN_OWNER, m.Organization.name == user.owner)).first()
    return (organization or "").strip().upper() or DEFAULT_CURRENCY


def check_recharge(db: Session, user: m.User, currency: str) -> str:
    """The balance's currency, which a recharge in `currency` must be in."""
    kept = currency_of(db, user)
    if (currency or DEFAULT_CURRENCY).upper() != kept:
        raise ServiceError(OTHER_RECHARGE, kept, (currency or DEFAULT_CURRENCY).upper())
    return kept


def take(db: Session, user: m.User, price, currency: str) -> None:
    """Subtract `price` (in `currency`) from the user's balance, or refuse: never below zero, never
    in another currency than the balance's."""
    kept = currency_of(db, user)
    if (currency or DEFAULT_CURRENCY).upper() != kept:
        raise ServiceError(OTHER_PAYMENT, kept, (currency or DEFAULT_CURRENCY).upper())
    done = db.exec(update(m.User).where(m.User.pk == user.pk, m.User.balance >= price)
                   .values(balance=m.User.balance - price))
    if done.rowcount != 1:
        raise ServiceError("Insufficient balance: the user %s/%s has less than %s", user.owner, user.name,
                           str(price.normalize()))


def give(db: Session, user: m.User, amount, currency: str) -> None:
    """Add `amount` (in `currency`) to a user's balance (a recharge). The balance's currency is
    written on the user, so that a later change of the organization's does not re-label money
    already held."""
    kept = check_recharge(db, user, currency)
    db.exec(update(m.User).where(m.User.pk == user.pk)
            .values(balance=m.User.balance + amount, balance_currency=kept))


class Balance:
    instant = True  # paid when made
    def __init__(self, provider: m.Provider) -> None:
        self.provider = provider

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        take(db, request.user, request.price, request.currency)
        return PayAnswer(pay_url=request.return_url, out_order_id=request.payment_name, paid=True)

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        return None  # paid at once: a notification finds the payment final

    def check(self, payment: Payment) -> Check:
        return Check(state=payment.state, price=payment.price, currency=payment.currency)
