"""Transactions: money moved for a user through a provider. The payment flow (commerce/commerce.py
settle) writes its category (Purchase or Recharge), its type, the category of the provider that
moved the money (Payment), and its subtype, that provider's type (Dummy, Balance, Stripe...)."""

from __future__ import annotations

from iam_console.core.kinds.common import KindRules, answer_name, fixed

CATEGORIES = ("Purchase", "Recharge")
TYPES = ("Payment",)  # the categories of the providers that move money

RULES = KindRules(new=fixed(displayName="New Transaction - {suffix}", type="Payment", subtype="PayPal",
                            currency="USD", amount=0.0, state="Paid"),
                  generate_name=True, answer=answer_name)
