"""Each kind's own rules, in one module per kind named after it (kinds/<kind>.py, its `RULES`):
the fixed choices of its fields, its validation, what saving also does, what may never happen
to its records, and its new records. services/rules.py applies them to every write,
services/defaults.py builds new records with them, and the console's selects offer the
values `choices` reads from the same declarations."""

from __future__ import annotations

from iam_console import models as m
from iam_console.extension import Gathered
from iam_console.services.kinds import (
    adapter,
    application,
    cert,
    enforcer,
    group,
    invitation,
    key,
    ldap,
    model,
    order,
    organization,
    payment,
    permission,
    plan,
    pricing,
    product,
    provider,
    resource,
    role,
    subscription,
    syncer,
    token,
    transaction,
    user,
    webhook,
)
from iam_console.services.kinds.common import KindRules
from iam_console.services.resources import REGISTRY

BUILT_IN_RULES: dict[str, KindRules] = {module.__name__.rpartition(".")[2]: module.RULES for module in (
    adapter, application, cert, enforcer, group, invitation, key, ldap, model, order, organization, payment, permission,
    plan, pricing, product, provider, resource, role, subscription, syncer, token, transaction, user, webhook)}
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
