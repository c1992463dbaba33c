"""Casbin enforcers: a model and an adapter put together."""

from __future__ import annotations

from iam_console.core.kinds.common import BUILT_IN_CASBIN, KindRules, fixed, stamp_updated

RULES = KindRules(before_save=stamp_updated, protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Enforcer - {suffix}"))
