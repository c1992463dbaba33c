"""Each kind's rules live in its own module, and a field's fixed choices are declared once:
every write is checked against them, and the console's selects and filters offer them."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.commerce.extension import COMMERCE
from iam_console.core import crud, kinds
from iam_console.core.access import Actor
from iam_console.core.defaults import new_record
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_console.features import BUILT_IN_RULES
from iam_console.ui import pages  # noqa: F401  (declares the screens)
from iam_console.ui.screens import SCREENS

CHOICES = [(name, choice) for name, rules in sorted(kinds.RULES.items()) for choice in rules.choices]


def test_every_kind_module_is_registered_and_names_a_kind():
    features = Path(kinds.__file__).parents[2]  # each feature package keeps its kinds' rules in kinds/
    modules = {path.stem for path in features.glob("*/kinds/*.py")} - {"__init__", "common"}
    built_in = set(BUILT_IN_RULES) | set(COMMERCE.rules)
    assert modules == built_in  # and an installed extension's rules beside them
    assert built_in <= set(kinds.RULES)
    assert set(kinds.RULES) <= set(REGISTRY)


@pytest.mark.parametrize(("kind_name", "choice"), CHOICES, ids=[f"{n}.{c.attribute}" for n, c in CHOICES])
def test_a_choice_names_a_column_and_reads_by_its_wire_key(kind_name, choice):
    model = REGISTRY[kind_name].model
    assert choice.attribute in model.model_fields
    assert kinds.choices(kind_name, m.wire_name(model, choice.attribute)) is choice.values
    with pytest.raises(KeyError):
        kinds.choices(kind_name, "noSuchField")


def god() -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())


@pytest.mark.parametrize(("kind_name", "choice"), CHOICES, ids=[f"{n}.{c.attribute}" for n, c in CHOICES])
def test_a_write_takes_each_choice_and_nothing_else(database, make_org, kind_name, choice):
    org, actor, kind = make_org(), god(), REGISTRY[kind_name]
    key = m.wire_name(kind.model, choice.attribute)
    listed = isinstance(getattr(kind.model(), choice.attribute), list)
    for value in choice.values:  # taken (another rule may still ask for more: an AES obfuscator, a key)
        with session_scope() as db:
            record = new_record(db, actor, kind_name, org.name) | {key: [value] if listed else value}
            try:
                crud.add_record(db, actor, kind, record, dry_run=True)
            except ServiceError as refused:
                assert refused.template != choice.refusal, value
    with session_scope() as db:
        record = new_record(db, actor, kind_name, org.name) | {key: ["bogus"] if listed else "bogus"}
        with pytest.raises(ServiceError) as refused:
            crud.add_record(db, actor, kind, record, dry_run=True)
    assert refused.value.template == choice.refusal


def test_refusals_name_the_field_and_its_values():
    assert kinds.of("invitation").choices[0].refusal == "The state must be Active or Suspended"
    assert kinds.of("ldap").choices[0].refusal == "The password type must be Plain, SSHA or MD5"
    assert kinds.of("user").choices[0].refusal == "The user type must be normal-user or paid-user"


def test_the_console_offers_the_declared_choices():
    checked = 0
    for screen in SCREENS.values():
        declared = {m.wire_name(screen.kind.model, c.attribute) for c in kinds.of(screen.key).choices}
        for field in screen.fields:
            if field.key in declared and field.widget in ("select", "checks"):
                assert field.options == kinds.choices(screen.key, field.key), (screen.key, field.key)
                checked += 1
        for column in screen.columns:
            if column.key in declared and column.filters:
                assert column.filters == kinds.choices(screen.key, column.key), (screen.key, column.key)
                checked += 1
    assert checked >= 9
