"""Payment providers (category Payment), each a module behind one interface (base.py); the flows
that use them are commerce/commerce.py."""

from __future__ import annotations

from iam_console import models as m
from iam_console.commerce.payments.balance import Balance
from iam_console.commerce.payments.base import PaymentProvider
from iam_console.commerce.payments.dummy import Dummy
from iam_console.commerce.payments.paypal import PayPal
from iam_console.commerce.payments.stripe_checkout import StripeCheckout
from iam_console.core.errors import ServiceError

MODULES = {"Dummy": Dummy, "Balance": Balance, "Stripe": StripeCheckout, "PayPal": PayPal}


def of(provider: m.Provider) -> PaymentProvider:
    if provider.category != "Payment":
        raise ServiceError("The provider %s is not a payment provider", provider.name)
    module = MODULES.get(provider.type)
    if module is None:
        raise ServiceError("The payment provider type %s is not supported", provider.type)
    return module(provider)
