"""Casbin adapters: where an enforcer's policies are stored."""

from __future__ import annotations

from .common import BUILT_IN_CASBIN, KindRules, check_port, fixed

RULES = KindRules(validate=check_port, protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Adapter - {suffix}", table="table_name", useSameDb=True))
