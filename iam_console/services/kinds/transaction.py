"""Transactions: money moved for a user through a provider."""

from __future__ import annotations

from .common import KindRules, answer_name, fixed

RULES = KindRules(new=fixed(displayName="New Transaction - {suffix}", type="PayPal", currency="USD", amount=0.0,
                            state="Paid"),
                  generate_name=True, answer=answer_name)
