"""The row tables' rules without a browser: the values a select offers a row, a cell read back as
the record stores it, and the organization's account and MFA items declared on them (the browser
behaviour is tests/e2e/test_organization_edit.py and tests/e2e/test_field_widgets.py)."""

from __future__ import annotations

import pytest

from iam_console.core import builtin as b
from iam_console.identity.kinds.organization import mfa_items_problem
from iam_console.ui import pages  # noqa: F401  (declares the screens)
from iam_console.ui.screens import SCREENS, Cell, Field
from iam_console.ui.state.rows import _out, options

NAME = Cell("name", "Name", "select", options=("Phone", "Email", "App"), unique=True)


def _field(key: str) -> Field:
    return next(f for f in SCREENS["organization"].fields if f.key == key)


def test_a_unique_select_offers_a_row_its_own_value_and_the_free_ones():
    rows = [{"name": "Email"}, {"name": "Phone"}]
    assert options(NAME, rows, 0) == ["Email", "App"]
    assert options(NAME, rows, 1) == ["Phone", "App"]
    placeholder = [{"name": "Please pick"}, {"name": "App"}]  # a value outside the options: the free ones only
    assert options(NAME, placeholder, 0) == ["Phone", "Email"]
    per_row = Cell("rule", "Rule", "select", options_for=lambda row: ("A",) if row["x"] else ("A", "B"))
    assert options(per_row, [{"x": True}, {"x": False}], 0) == ["A"]
    assert options(per_row, [{"x": True}, {"x": False}], 1) == ["A", "B"]


def test_cells_are_read_back_in_the_records_types():
    field = Field("items", "Items", "rows")
    assert _out(field, Cell("n", "N", "number"), " 12 ") == 12
    assert _out(field, Cell("n", "N", "number"), "") == 0
    with pytest.raises(ValueError, match="items: n must be a number"):
        _out(field, Cell("n", "N", "number"), "twelve")
    assert _out(field, Cell("t", "T", "tags"), "a, b,, c ") == ["a", "b", "c"]
    assert _out(field, Cell("t", "T", "tags"), ["kept"]) == ["kept"]
    assert _out(field, Cell("s", "S", "switch"), 1) is True


def test_the_account_items_rules():
    items = _field("accountItems")
    assert items.initial() == b.default_account_items()
    new = items.new_row([])
    assert new["name"] == b.ACCOUNT_ITEM_PLACEHOLDER and new["modifyRule"] == "Self"
    # Self is not allowed once only admins see the item; the regex applies to listed items only
    settled = items.settle({"name": "Bio", "visible": True, "viewRule": "Admin", "modifyRule": "Self", "regex": "x"})
    assert (settled["modifyRule"], settled["regex"]) == ("Admin", "x")
    settled = items.settle({"name": "Karma", "visible": True, "viewRule": "Public", "modifyRule": "Self",
                            "regex": "x"})
    assert (settled["modifyRule"], settled["regex"]) == ("Self", "")
    modify = next(c for c in items.columns if c.key == "modifyRule")
    assert tuple(modify.options_for({"name": "Is admin", "viewRule": "Public"})) == ("Admin", "Immutable")
    regex = next(c for c in items.columns if c.key == "regex")
    assert regex.disabled_when({"name": "Tag"}) and not regex.disabled_when({"name": "Bio"})


def test_the_mfa_items_rules():
    items = _field("mfaItems")
    assert items.new_row([]) == {"name": "Phone", "rule": "Optional"}
    assert items.new_row([{"name": "Phone"}, {"name": "Email"}]) == {"name": "App", "rule": "Optional"}
    assert items.new_row([{"name": m} for m in b.MFA_METHODS]) is None  # full: Add is disabled
    assert mfa_items_problem([{"name": "Phone", "rule": "Required"}, {"name": "App", "rule": "Prompt"}]) == ""
    assert mfa_items_problem([{"name": "Phone", "rule": "Required"}, {"name": "App", "rule": "Required"}]) \
        == "Only 1 MFA methods can be required"
