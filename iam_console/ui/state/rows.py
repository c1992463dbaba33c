"""Row tables: a field holding a list of objects (an organization's account items, its MFA
items), edited as a table whose columns are `Cell`s (ui/screens.py). The `Rows` mixin holds
every table of a state, as `Paging` holds a pager: add, delete, move up and down, a cell's
change, the per-row rules (a row that cannot be deleted, a cell disabled or hidden by the row's
other values, the select values no two rows share, exactly one key row) and the
one-row-at-a-time mode. The browser holds display strings only; every rule is applied here
again, so an event sent by hand cannot break one.

A host state provides `_row_fields()` ({wire key: Field}) and may override `_row_locked(key)`;
it loads a table with `_load_rows(key, items)` and reads it back with `_rows_value(key)`. A table
whose rows are records of their own rather than a field (an enforcer's policies) overrides
`_row_commit` and `_row_drop`, which write each row as it is saved or deleted and may refuse it,
`_row_options` for select values read with the data, and names its columns from the data with
`_set_heads`."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.ui.screens import Cell, Field
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call

MAX_TEXT = 1000  # a cell's text
OPTION_SEPARATOR = "\n"  # a row's own select options travel as one string


def flag(value: bool) -> str:
    return "true" if value else "false"


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return flag(value)
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _out(field: Field, column: Cell, value: Any) -> Any:
    """A cell as the record stores it: the texts typed into number and tags cells are read here."""
    if column.widget == "number" and isinstance(value, str):
        try:
            return int(value.strip() or "0")
        except ValueError:
            raise ValueError(f"{field.key}: {column.key} must be a number") from None
    if column.widget == "tags" and isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    if column.widget == "switch":
        return bool(value)
    return value


def options(column: Cell, items: list[dict[str, Any]], index: int) -> list[str]:
    """The values row `index` may choose in a select column: its own options, and for a
    unique column its own value and those no other row uses."""
    item = items[index]
    if not column.unique:
        return list(column.options_for(item) if column.options_for else column.options)
    offered = list(column.options)
    own = item.get(column.key)
    used = {other.get(column.key) for i, other in enumerate(items) if i != index}
    mine = [own] if own in offered else []
    return mine + [value for value in offered if value not in used and value != own]


def _plain(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if k != "__id"}


class Rows(rx.State, mixin=True):
    tables: dict[str, list[dict[str, str]]] = {}  # wire key -> rows of display strings
    table_full: dict[str, bool] = {}  # Add is disabled
    # "{wire key}.{column}" -> the values of a unique select no row uses (each row also offers its own)
    table_free: dict[str, list[str]] = {}
    row_editing: dict[str, str] = {}  # one-row-at-a-time: the id of the row being edited, or ""
    # the rows as objects, each with its "__id"; keys no column shows are kept
    _row_items: dict[str, list[dict[str, Any]]] = {}
    _row_loaded: dict[str, list[dict[str, Any]]] = {}
    # one-row-at-a-time: the table as it was before the row's edit (a key switched on changed others)
    _row_backup: dict[str, list[dict[str, Any]]] = {}
    _row_next: int = 0
    # headings read with the data, per table: {column: heading} (an enforcer's policy columns are
    # named by its model); a table with headings shows only the columns they name
    table_heads: dict[str, dict[str, str]] = {}
    table_hidden: dict[str, list[str]] = {}

    def _row_fields(self) -> dict[str, Field]:
        raise NotImplementedError

    def _row_locked(self, key: str) -> bool:
        return False

    async def _row_commit(self, key: str, before: dict[str, Any] | None, after: dict[str, Any]) -> tuple[bool, Any]:
        """One-row-at-a-time: the edited row is saved (`before` is None for a row being added).
        (taken, the events to return: a toast); not taken, the row stays being edited."""
        return True, None

    async def _row_drop(self, key: str, item: dict[str, Any]) -> tuple[bool, Any]:
        """A row is deleted: (taken, the events to return); not taken, the row stays."""
        return True, None

    def _row_options(self, key: str, column: Cell, items: list[dict[str, Any]], index: int) -> list[str]:
        """The values a select cell of row `index` offers."""
        return options(column, items, index)

    def _set_heads(self, key: str, heads: dict[str, str]) -> None:
        """Headings from the data, {column: heading}; the columns they leave out are not shown
        ({}: every column, with its catalog label)."""
        field = self._row_fields()[key]
        self.table_heads = {**self.table_heads, key: heads}
        self.table_hidden = {**self.table_hidden, key: [c.key for c in field.columns if heads and c.key not in heads]}

    # --- loading and saving ---

    def _new_id(self) -> str:
        self._row_next += 1
        return str(self._row_next)

    def _load_rows(self, key: str, stored: Any) -> None:
        field = self._row_fields()[key]
        items = [i for i in stored if isinstance(i, dict)] if isinstance(stored, list) else []
        if not items and field.initial is not None:
            items = field.initial()
        # a missing value reads as the column's default (an account item without `visible` is visible)
        with_ids = [{**item, **{c.key: c.default for c in field.columns if item.get(c.key) is None},
                     "__id": self._new_id()} for item in items]
        self.row_editing = {**self.row_editing, key: ""}
        self._put(key, with_ids)
        self._row_loaded = {**self._row_loaded, key: self._rows_value(key)}

    def _rows_value(self, key: str) -> list[dict[str, Any]]:
        """The table as the record stores it."""
        field = self._row_fields()[key]
        return [{**{k: v for k, v in item.items() if k != "__id"},
                 **{c.key: _out(field, c, item.get(c.key)) for c in field.columns}}
                for item in self._row_items.get(key, [])]

    def _rows_changes(self) -> dict[str, Any]:
        """The tables that changed since they were read (an untouched one is not sent back)."""
        changes = {}
        for key in self._row_fields():
            if key in self._row_items and not self._row_locked(key):
                value = self._rows_value(key)
                if value != self._row_loaded.get(key):
                    changes[key] = value
        return changes

    def _put(self, key: str, items: list[dict[str, Any]]) -> None:
        """The rows as the browser shows them: display strings and each row's rules."""
        field = self._row_fields()[key]
        keyed = next((c.key for c in field.columns if c.key_row), "")
        rows = []
        for index, item in enumerate(items):
            row = {c.key: _text(item.get(c.key)) for c in field.columns}
            # the key row stays while other rows exist: it is neither switched off nor deleted
            holds_key = bool(keyed and item.get(keyed) and len(items) > 1)
            row["__id"] = item["__id"]
            row["__fixed"] = flag(holds_key or bool(field.fixed_row and field.fixed_row(item))
                                  or len(items) <= field.min_rows)
            for column in field.columns:
                row[f"__off_{column.key}"] = flag(self._cell_disabled(field, column, items, index))
                row[f"__hide_{column.key}"] = flag(bool(column.hidden_when and column.hidden_when(item)))
                if column.widget == "select" and not column.unique:
                    row[f"__opts_{column.key}"] = OPTION_SEPARATOR.join(self._row_options(key, column, items, index))
            rows.append(row)
        for column in field.columns:
            if column.widget == "select" and column.unique:
                used = {item.get(column.key) for item in items}
                self.table_free = {**self.table_free, f"{key}.{column.key}": [
                    v for v in column.options if v not in used]}
        self._row_items = {**self._row_items, key: items}
        self.tables = {**self.tables, key: rows}
        plain = [{k: v for k, v in i.items() if k != "__id"} for i in items]
        self.table_full = {**self.table_full, key: field.new_row is not None and field.new_row(plain) is None}

    def _cell_disabled(self, field: Field, column: Cell, items: list[dict[str, Any]], index: int) -> bool:
        item = items[index]
        if column.disabled_when and column.disabled_when(item):
            return True
        return column.key_row and bool(item.get(column.key)) and len(items) > 1

    # --- events ---

    def _table(self, key: str) -> tuple[Field, list[dict[str, Any]]] | None:
        field = self._row_fields().get(key)
        if field is None or self._row_locked(key) or key not in self._row_items:
            return None
        return field, [dict(i) for i in self._row_items[key]]

    def _busy_elsewhere(self, key: str, items: list[dict[str, Any]], index: int) -> bool:
        """One-row-at-a-time: another row is being edited."""
        editing = self.row_editing.get(key, "")
        return bool(editing) and items[index]["__id"] != editing

    @rx.event
    def add_row(self, key: str):
        found = self._table(key)
        if found is None or self.row_editing.get(key):
            return
        field, items = found
        plain = [{k: v for k, v in i.items() if k != "__id"} for i in items]
        new = field.new_row(plain) if field.new_row else {c.key: c.default for c in field.columns}
        if new is None:
            return  # the table is full
        new = {**new, "__id": self._new_id()}
        keyed = next((c.key for c in field.columns if c.key_row), "")
        if keyed:
            new[keyed] = not any(i.get(keyed) for i in items)  # the first row is the key
        if field.one_at_a_time:
            self._row_backup = {**self._row_backup, key: items}
            self.row_editing = {**self.row_editing, key: new["__id"]}
            self._put(key, [new, *items])
        else:
            self._put(key, [*items, new])

    @rx.event
    async def delete_row(self, key: str, index: int):
        found = self._table(key)
        if found is None:
            return
        items = found[1]
        if not 0 <= index < len(items) or self._busy_elsewhere(key, items, index) \
                or self.tables[key][index]["__fixed"] == "true":
            return
        if self.row_editing.get(key) == items[index]["__id"]:
            # the row as it was before the edit goes (a row being added was never written)
            before = next((i for i in self._row_backup.get(key, []) if i["__id"] == items[index]["__id"]), None)
            taken, events = await self._row_drop(key, _plain(before)) if before is not None else (True, None)
        else:
            taken, events = await self._row_drop(key, _plain(items[index]))
        if not taken:
            return events
        if self.row_editing.get(key) == items[index]["__id"]:
            self.row_editing = {**self.row_editing, key: ""}
        self._put(key, items[:index] + items[index + 1:])
        return events

    @rx.event
    def move_row(self, key: str, index: int, step: int):
        found = self._table(key)
        if found is None or not found[0].movable or self.row_editing.get(key):
            return
        items, target = found[1], index + step
        if 0 <= index < len(items) and 0 <= target < len(items):
            items[index], items[target] = items[target], items[index]
            self._put(key, items)

    @rx.event
    async def set_cell(self, key: str, index: int, column_key: str, value: str | bool | list):
        found = self._table(key)
        if found is None:
            return
        field, items = found
        column = next((c for c in field.columns if c.key == column_key), None)
        if column is None or column.widget == "text" or not 0 <= index < len(items):
            return
        if self._busy_elsewhere(key, items, index) or (field.one_at_a_time and not self.row_editing.get(key)):
            return
        if self._cell_disabled(field, column, items, index) or (
                column.hidden_when and column.hidden_when(items[index])) or not self._column_shown(column):
            return
        if column.widget == "switch":
            value = bool(value)
        elif isinstance(value, list):
            value = ", ".join(str(v) for v in value)[:MAX_TEXT]
        else:
            value = str(value)[:MAX_TEXT]
        if column.widget == "select" and value not in self._row_options(key, column, items, index):
            return
        if column.key in self.table_hidden.get(key, []):
            return
        changed = {**items[index], column.key: value}
        if column.then is not None:
            changed |= column.then(value)
        if column.fill is not None and value:
            filled = await self._filled(column, str(value))
            if filled is None:
                return None
            changed |= filled
        if field.settle:
            changed = {**field.settle(changed), "__id": changed["__id"]}
        items[index] = changed
        if column.key_row and value:
            for i, item in enumerate(items):
                if i != index:
                    item[column.key] = False
        if field.refuse:
            message = field.refuse([{k: v for k, v in i.items() if k != "__id"} for i in items])
            if message:
                prefs = await self.get_state(Prefs)
                return rx.toast.error(prefs.say(message))
        self._put(key, items)

    def _column_shown(self, column: Cell) -> bool:
        """A column's `shown_when`, of the host's values and flags (an edit page's)."""
        if column.shown_when is None:
            return True
        return bool(column.shown_when(getattr(self, "values", {}), getattr(self, "flags", {})))

    async def _filled(self, column: Cell, value: str) -> dict[str, Any] | None:
        """What a pick cell's chosen record fills in its row (`Cell.fill`), read with the
        viewer's rights in the edited record's organization; None when it cannot be read."""
        organization = self._pick_organization()
        done = await call(self, lambda db, actor: column.fill(db, actor, organization, value))
        return None if done.failed else dict(done.value or {})

    @rx.event
    def edit_row(self, key: str, index: int):
        """One-row-at-a-time: this row's cells become editable."""
        found = self._table(key)
        if found is None or not found[0].one_at_a_time or self.row_editing.get(key):
            return
        items = found[1]
        if 0 <= index < len(items):
            self._row_backup = {**self._row_backup, key: items}
            self.row_editing = {**self.row_editing, key: items[index]["__id"]}

    @rx.event
    async def keep_row(self, key: str):
        """One-row-at-a-time: the edited row stays as it is now (once `_row_commit` took it)."""
        editing = self.row_editing.get(key, "")
        found = self._table(key)
        if found is None or not editing:
            return
        after = next((i for i in found[1] if i["__id"] == editing), None)
        before = next((i for i in self._row_backup.get(key, []) if i["__id"] == editing), None)
        if after is None:
            return
        taken, events = await self._row_commit(key, _plain(before) if before else None, _plain(after))
        if taken:
            self.row_editing = {**self.row_editing, key: ""}
        return events

    @rx.event
    def cancel_row(self, key: str):
        """One-row-at-a-time: the table as it was before the edit (a row being added goes)."""
        if self._table(key) is None or not self.row_editing.get(key):
            return
        self.row_editing = {**self.row_editing, key: ""}
        self._put(key, [dict(i) for i in self._row_backup.get(key, [])])
