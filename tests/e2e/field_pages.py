"""Test pages of the field widgets that no part-1 screen uses yet (registered with the other
widget pages, tests/e2e/widget_pages.py):

- /_test/rows: a row table in the one-row-at-a-time mode with a key column, a row that cannot be
  deleted, a column disabled and one hidden by the row's type, tags, a number and a picker, bound
  to a state of its own through the Rows mixin (as a syncer's table will be);

(A code field's own screen is the models' edit page, authorization/ui/models.py; the pickers' is the roles'
edit page, authorization/ui/roles.py.)"""

from __future__ import annotations

import json

import reflex as rx

from iam_console.ui.components.rows import rows_table
from iam_console.ui.routes import page
from iam_console.ui.screens import Cell, Field
from iam_console.ui.state.picking import Picking
from iam_console.ui.state.rows import Rows

TABLE = Field("tableColumns", "Table columns", "rows", one_at_a_time=True, movable=True,
              fixed_row=lambda row: row["name"] == "id", columns=(
                  Cell("name", "Name"),
                  Cell("type", "Type", "select", options=("string", "integer"), default="string"),
                  Cell("isKey", "Is key", "switch", key_row=True),
                  Cell("values", "Values", "tags", disabled_when=lambda row: row["type"] == "integer"),
                  Cell("length", "Count", "number", default=0, hidden_when=lambda row: row["type"] != "string"),
                  Cell("user", "User", "pick", kind="user", form="id"),
              ))
SAMPLE = [
    {"name": "id", "type": "integer", "isKey": True, "values": [], "length": 0, "user": "", "comment": "kept"},
    {"name": "email", "type": "string", "isKey": False, "values": ["a", "b"], "length": 100, "user": ""},
]


class RowsCheck(Rows, Picking, rx.State):
    saved: str = ""

    def _row_fields(self) -> dict[str, Field]:
        return {TABLE.key: TABLE}

    def _pick_spec(self, ident: str) -> tuple[str, str, str] | None:
        return ("user", "", "id") if ident == "tableColumns.user" else None

    def _pick_organization(self) -> str:
        return "acme"

    @rx.event
    def load(self):
        self._load_rows(TABLE.key, SAMPLE)
        self.saved = ""

    @rx.event
    def save(self):
        try:
            self.saved = json.dumps(self._rows_value(TABLE.key), sort_keys=True)
        except ValueError as exc:
            self.saved = f"error: {exc}"


@page("/_test/rows", "Rows", on_load=RowsCheck.load)
def rows_check() -> rx.Component:
    return rx.vstack(
        rows_table(TABLE, RowsCheck),
        rx.button("Save", on_click=RowsCheck.save, id="save"),
        rx.el.pre(RowsCheck.saved, id="saved"),
        width="100%", max_width="70em",
    )
