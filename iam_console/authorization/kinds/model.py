"""Casbin models: the text of an access control model, checked by Casbin on every save."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.authorization.casbin_engine import parse_model
from iam_console.core.access import Actor
from iam_console.core.kinds.common import BUILT_IN_CASBIN, KindRules, fixed
from iam_console.core.seed import USER_MODEL_TEXT


def validate(db: Session, actor: Actor, row: m.CasbinModel) -> None:
    # a model not written yet (empty) is kept, as Casdoor keeps it; any text must be a model
    if row.model_text.strip():
        parse_model(row.model_text)  # Casbin's own error when it is not one


RULES = KindRules(validate=validate, protect=BUILT_IN_CASBIN,
                  new=fixed(displayName="New Model - {suffix}", modelText=USER_MODEL_TEXT))
