"""Casbin models: the text of an access control model."""

from __future__ import annotations

from ..seed import USER_MODEL_TEXT
from .common import BUILT_IN_CASBIN, KindRules, fixed

RULES = KindRules(protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Model - {suffix}", modelText=USER_MODEL_TEXT))
