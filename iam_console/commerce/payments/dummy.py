"""The Dummy provider: pays at once, for trying a shop out."""

from __future__ import annotations

from collections.abc import Mapping

from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce.payments.base import Check, PayAnswer, PayRequest
from iam_console.commerce.tables import Payment


class Dummy:
    instant = True  # paid when made
    def __init__(self, provider: m.Provider) -> None:
        self.provider = provider

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        return PayAnswer(pay_url=request.return_url, out_order_id=request.payment_name, paid=True)

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        return None  # nothing to notify: the payment was final when made

    def check(self, payment: Payment) -> Check:
        return Check(state=payment.state, price=payment.price, currency=payment.currency)
