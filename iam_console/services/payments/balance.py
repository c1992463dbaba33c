"""The Balance provider: pays from the buyer's balance, in the buyer's own transaction.

One conditional UPDATE takes the price: `balance = balance - price WHERE balance >= price`. The
database checks and subtracts in one statement under the row's lock, so two purchases at once can
never both pass the check on the same money: a balance never goes below zero, on SQLite,
PostgreSQL and MariaDB alike (the amounts are exact integers there: models/base.py Money)."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session, update

from ... import models as m
from ..errors import ServiceError
from .base import Check, PayAnswer, PayRequest


def take(db: Session, user: m.User, price) -> None:
    """Subtract `price` from the user's balance, or refuse: never below zero."""
    done = db.exec(update(m.User).where(m.User.pk == user.pk, m.User.balance >= price)
                   .values(balance=m.User.balance - price))
    if done.rowcount != 1:
        raise ServiceError("Insufficient balance: the user %s/%s has less than %s", user.owner, user.name,
                           str(price.normalize()))


def give(db: Session, owner: str, name: str, amount) -> None:
    """Add `amount` to a user's balance (a recharge)."""
    db.exec(update(m.User).where(m.User.owner == owner, m.User.name == name)
            .values(balance=m.User.balance + amount))


class Balance:
    instant = True  # paid when made
    def __init__(self, provider: m.Provider) -> None:
        self.provider = provider

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        take(db, request.user, request.price)
        return PayAnswer(pay_url=request.return_url, out_order_id=request.payment_name, paid=True)

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        return None  # paid at once: a notification finds the payment final

    def check(self, payment: m.Payment) -> Check:
        return Check(state=payment.state, price=payment.price, currency=payment.currency)
