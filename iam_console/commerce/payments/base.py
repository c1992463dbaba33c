"""What every payment provider module offers (docs/architecture.md, "Payments").

A provider module turns a payment request into a pay URL (or pays at once), and tells the
payment's state by asking the provider itself. A notification only prompts that question: its body
is never believed. Where the provider signs its notifications (Stripe), `verify` refuses an unsigned
or forged one before anything is asked or changed."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Protocol

from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce.tables import Payment
from iam_console.core.errors import ServiceError

# a payment's states (Casdoor's); all but Created are final
CREATED, PAID, CANCELED, TIMEOUT, ERROR = "Created", "Paid", "Canceled", "Timeout", "Error"
FINAL = frozenset({PAID, CANCELED, TIMEOUT, ERROR})

# ISO 4217 currencies without minor units, and those with three decimals: a provider that counts
# in minor units multiplies by 10 ** decimals
ZERO_DECIMAL = frozenset({"BIF", "CLP", "DJF", "GNF", "JPY", "KMF", "KRW", "MGA", "PYG", "RWF", "UGX", "VND",
                          "VUV", "XAF", "XOF", "XPF"})
THREE_DECIMAL = frozenset({"BHD", "JOD", "KWD", "OMR", "TND"})


def decimals(currency: str) -> int:
    code = currency.upper()
    return 0 if code in ZERO_DECIMAL else 3 if code in THREE_DECIMAL else 2


def minor_units(price: Decimal, currency: str) -> int:
    """The price in the currency's minor units (cents); refused when it has finer fractions."""
    scaled = price.scaleb(decimals(currency))
    if scaled != scaled.to_integral_value():
        raise ServiceError("The price %s cannot be paid in %s", str(price.normalize()), currency.upper())
    return int(scaled)


def from_minor_units(amount: int, currency: str) -> Decimal:
    return Decimal(int(amount)).scaleb(-decimals(currency))


@dataclass(frozen=True)
class PayRequest:
    owner: str
    payment_name: str
    user: m.User
    price: Decimal
    currency: str
    product_names: str
    product_display_names: str
    description: str
    return_url: str
    notify_url: str


@dataclass(frozen=True)
class PayAnswer:
    pay_url: str = ""
    out_order_id: str = ""
    paid: bool = False  # paid at once (Dummy, Balance): settled in the same transaction


@dataclass(frozen=True)
class Check:
    """The provider's word on a payment."""

    state: str
    price: Decimal | None = None  # what was paid, when Paid
    currency: str = ""
    message: str = ""
    extra: dict = field(default_factory=dict)


class PaymentProvider(Protocol):
    instant: bool  # pays when asked (the payment is settled in the same transaction)

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        """Start (or make) the payment; `db` is the caller's transaction."""

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        """Refuse a notification that the provider did not send (ServiceError)."""

    def check(self, payment: Payment) -> Check:
        """Ask the provider how the payment stands."""
