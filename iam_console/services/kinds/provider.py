"""Providers: the third-party services (OAuth, email, SMS, payment...) an organization uses."""

from __future__ import annotations

from .common import KindRules, fixed

RULES = KindRules(new=fixed(displayName="New Provider - {suffix}", category="OAuth", type="GitHub", method="Normal",
                            enableSignUp=True, port=0))
