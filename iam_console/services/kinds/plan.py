"""Plans: what a subscription buys, at a price per period."""

from __future__ import annotations

from .common import KindRules, fixed

RULES = KindRules(new=fixed(displayName="New Plan - {suffix}", price=10.0, period="Monthly", currency="USD",
                            isEnabled=True))
