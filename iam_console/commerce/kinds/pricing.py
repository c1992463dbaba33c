"""Pricings: the plans an application offers, with a trial."""

from __future__ import annotations

from sqlmodel import Session

from iam_console.commerce.tables import Pricing
from iam_console.core.access import Actor
from iam_console.core.kinds.common import KindRules, check_range, fixed


def validate(db: Session, actor: Actor, row: Pricing) -> None:
    check_range(row.trial_duration, 0, None, "trial duration")


RULES = KindRules(validate=validate, new=fixed(displayName="New Pricing - {suffix}", trialDuration=7, isEnabled=True))
