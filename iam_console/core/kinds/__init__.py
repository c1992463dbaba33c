"""Each kind's own rules, in one module per kind named after it (kinds/<kind>.py, its `RULES`):
the fixed choices of its fields, its validation, what saving also does, what may never happen
to its records, and its new records. core/rules.py applies them to every write,
core/defaults.py builds new records with them, and the console's selects offer the
values `choices` reads from the same declarations."""

from __future__ import annotations

from iam_console import models as m
from iam_console.core.kinds.common import KindRules
from iam_console.core.resources import REGISTRY
from iam_console.extension import Gathered

# every extension's rules, by kind (iam_console/extension.py)
RULES: Gathered[KindRules] = Gathered("rules of the kind", lambda extension: extension.rules.items())
NO_RULES = KindRules()


def of(kind_name: str) -> KindRules:
    return RULES.get(kind_name, NO_RULES)


def choices(kind_name: str, key: str) -> tuple[str, ...]:
    """The values a field of a kind may hold, by its wire key (`choices("ldap", "passwordType")`)."""
    model = REGISTRY[kind_name].model
    for choice in of(kind_name).choices:
        if m.wire_name(model, choice.attribute) == key:
            return choice.values
    raise KeyError(f"{kind_name} declares no choices for {key}")
