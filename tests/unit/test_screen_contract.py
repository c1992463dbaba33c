"""The contract every screen declaration keeps (iam_console/ui/screens.py): its
columns and fields are wire fields of its kind (or declared virtual), its labels
are in both catalogs, and it has its pages and its menu entry. A new screen is
checked by being declared: nothing here names one."""

from __future__ import annotations

import pytest

from iam_console.core.navigation import menu
from iam_console.i18n import catalog
from iam_console.models.base import wire_names
from iam_console.ui import pages  # noqa: F401  (declares the screens and registers their pages)
from iam_console.ui.routes import PAGES
from iam_console.ui.screens import SCREENS, Screen

MENU_ROUTES = {item.key for group in menu() for item in group.items}
PAGE_ROUTES = {spec.route for spec in PAGES}


def _wire_fields(screen: Screen) -> set[str]:
    model = screen.kind.model
    fields = set(wire_names(model).values())
    if model.json_flatten:  # a dict column's keys travel as top-level wire fields
        fields |= set(model.json_flatten[1])
    return fields


def _labels(screen: Screen) -> set[str]:
    return ({screen.title, screen.name_label, screen.owner_label} | {c.label for c in screen.columns}
            | {c.caption for c in screen.columns if c.caption} | {f.label for f in screen.fields}
            | {f.help for f in screen.fields if f.help}
            | {c.label for f in screen.fields for c in f.columns}  # a row table's column headers
            | {key for f in screen.fields for _, key in f.also}  # a picker's values naming no record
            | {key for f in screen.fields for _, key in f.relabel}  # the labels the edited values choose
            | {key for c in screen.columns for key, _ in c.filter_groups}  # a filter's group headings
            | {key for c in screen.columns for _, key in c.shown_as}  # values shown as catalog texts
            | {value for c in screen.columns for value, _ in c.colors}  # a badge column's values
            | {a.label for a in screen.row_buttons} | {a.failed for a in screen.row_buttons if a.failed != "%s"}
            | {label for _, label in screen.shown_once})  # what its Add shows once


def test_there_are_screens_to_check():
    assert {"organization", "user", "group", "invitation", "ldap"} <= set(SCREENS)


@pytest.mark.parametrize("key", sorted(SCREENS))
def test_columns_and_fields_are_wire_fields_or_virtual(key):
    screen = SCREENS[key]
    wire = _wire_fields(screen)
    strangers = [c.key for c in screen.columns if not c.virtual and c.key not in wire]
    # "a.b" is an entry of the object field a
    strangers += [f.key for f in screen.fields if not f.virtual and f.key.partition(".")[0] not in wire]
    assert strangers == [], f"{key}: not wire fields of {screen.kind.name} (declare them virtual?)"
    # the edit route's placeholders name the record too
    assert set(screen.edit_keys) <= wire, screen.edit_route


@pytest.mark.parametrize("key", sorted(SCREENS))
@pytest.mark.parametrize("language", ["en", "zh"])
def test_every_label_is_in_both_catalogs(key, language):
    missing = sorted(label for label in _labels(SCREENS[key]) if label not in catalog(language))
    assert missing == [], f"{key}: missing from iam_console/i18n/{language}.json"


@pytest.mark.parametrize("key", sorted(SCREENS))
def test_every_screen_has_its_pages_and_menu_entry(key):
    screen = SCREENS[key]
    # a screen without an edit page (sessions, resources) has neither fields nor an Edit button
    assert screen.edit_pattern in PAGE_ROUTES if screen.has_edit_page else not screen.fields, \
        f"{key}: no page for {screen.edit_route}"
    assert screen.list_route in PAGE_ROUTES, f"{key}: no page for {screen.list_route}"
    assert screen.list_route in MENU_ROUTES, f"{key}: {screen.list_route} is in no menu group"


def test_the_contract_catches_a_stranger_field():
    """The checks can fail: a made-up column is neither a wire field nor virtual."""
    from dataclasses import replace

    from iam_console.ui.screens import Column

    broken = replace(SCREENS["group"], columns=(Column("noSuchField", "Name"),))
    assert "noSuchField" not in _wire_fields(broken)
    assert "No such label" not in catalog("en")


def test_a_badge_column_colours_each_of_its_values():
    """A state shown as a badge has a colour of its own for each value its filter offers (the
    subscriptions' states), and the colours are Radix's."""
    from iam_console.commerce.ui.subscriptions import SUBSCRIPTIONS
    from iam_console.core import kinds

    badges = [c for s in SCREENS.values() for c in s.columns if c.kind == "badge"]
    assert badges, "no badge column to check"
    radix = {"gray", "blue", "green", "amber", "orange", "red", "crimson", "cyan", "violet", "yellow", "teal"}
    for column in badges:
        colored = [value for value, _ in column.colors]
        assert len(set(colored)) == len(colored) and {color for _, color in column.colors} <= radix
        assert set(column.filters) <= set(colored)
    state = next(c for c in SUBSCRIPTIONS.columns if c.key == "state")
    assert [value for value, _ in state.colors] == list(kinds.choices("subscription", "state"))


def test_a_plans_product_is_locked_on_screen_as_the_kind_keeps_it():
    """The product page locks exactly the fields a plan's product keeps (commerce/kinds/product.py PLAN_LOCKED)."""
    from iam_console import models as m
    from iam_console.commerce.kinds.product import PLAN_LOCKED, PLAN_TAG
    from iam_console.commerce.tables import Product
    from iam_console.commerce.ui.products import PRODUCTS

    record = {"owner": "acme", "name": "product_1", "tag": PLAN_TAG}
    locked = {f.key for f in PRODUCTS.fields if f.locked_for and f.locked_for(record)}
    locked |= {"owner"} if PRODUCTS.owner_locked(record) else set()
    locked |= {"name"} if PRODUCTS.name_locked(record) else set()
    assert locked == {m.wire_name(Product, attribute) for attribute in PLAN_LOCKED}
    assert PRODUCTS.protected(record, "acme/boss")
    plain = {"owner": "acme", "name": "product_2", "tag": ""}
    assert not any(f.locked_for(plain) for f in PRODUCTS.fields if f.locked_for)
    assert not PRODUCTS.protected(plain, "acme/boss")
