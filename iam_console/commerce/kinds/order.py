"""Orders: what a user bought, before and after payment."""

from __future__ import annotations

from iam_console.core.kinds.common import KindRules, fixed

RULES = KindRules(new=fixed(displayName="New Order - {suffix}", currency="USD", state="Created"))
