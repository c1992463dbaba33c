"""The contract every screen declaration keeps (iam_console/ui/screens.py): its
columns and fields are wire fields of its kind (or declared virtual), its labels
are in both catalogs, and it has its pages and its menu entry. A new screen is
checked by being declared: nothing here names one."""

from __future__ import annotations

import pytest

from iam_console.i18n import catalog
from iam_console.models.base import wire_names
from iam_console.services.navigation import MENU
from iam_console.ui import pages  # noqa: F401  (declares the screens and registers their pages)
from iam_console.ui.routes import PAGES
from iam_console.ui.screens import SCREENS, Screen

MENU_ROUTES = {item.key for group in MENU for item in group.items}
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
            | {key for c in screen.columns for _, key in c.shown_as})  # values shown as catalog texts


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
