"""A row table field (`Field(widget="rows", columns=(Cell(...), ...))`), bound to a state that
uses the `Rows` mixin (ui/state/rows.py). Ids and classes come from the wire keys: the table is
`#{field}-table` and Add `#{field}-add` (accountItems: `#account-items-table`), and each cell's
widget has the class `{field}-{column}` (`.account-items-modify-rule`)."""

from __future__ import annotations

import re
from typing import Any

import reflex as rx

from iam_console.ui.components.picker import picker
from iam_console.ui.screens import Cell, Field
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.rows import OPTION_SEPARATOR
from iam_console.ui.text import t


def kebab(key: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"-\1", key).lower()


def _label(value: rx.Var) -> rx.Var:
    """A value the catalog may translate, shown as is otherwise."""
    return Prefs.tr.get(value, value)


def _option(column: Cell, value: rx.Var) -> rx.Var:
    """A select's value as shown: its label (Cell.labels, through the catalog), else as `translate` says."""
    if column.labels:
        labelled = rx.Var.create(dict(column.labels)).to(dict).get(value, value).to(str)
        return _label(labelled)
    return _label(value) if column.translate else value


def _shown(column: Cell, value: rx.Var) -> rx.Component:
    return rx.text(_option(column, value), size="2")


def _select(field: Field, column: Cell, state: Any, row: rx.Var, index: rx.Var, disabled: rx.Var,
            cls: str) -> rx.Component:
    value = row[column.key]
    unset = value == column.placeholder if column.placeholder else value == ""
    item = lambda option: rx.select.item(_option(column, option), value=option)  # noqa: E731
    if column.unique:
        # the row's own value and those no row uses (the same for every row: sent once)
        offered = rx.fragment(rx.cond(unset, rx.fragment(), item(value)),
                              rx.foreach(state.table_free.get(f"{field.key}.{column.key}", []), item))
    else:
        choices = row[f"__opts_{column.key}"]
        offered = rx.cond(choices == "", rx.fragment(), rx.foreach(choices.split(OPTION_SEPARATOR), item))
    select = rx.select.root(
        rx.select.trigger(placeholder=t(column.placeholder) if column.placeholder else "", class_name=cls,
                          width="100%", aria_label=_heading(field, column, state)),
        rx.select.content(offered),
        value=rx.cond(unset, "", value), size="1",
        on_change=lambda v: state.set_cell(field.key, index, column.key, v),
    )
    # a select that cannot change shows its value as text
    return rx.cond(disabled, rx.text(_option(column, value), size="2", class_name=cls),
                   select)


def _cell(field: Field, column: Cell, state: Any, row: rx.Var, index: rx.Var, locked: rx.Var) -> rx.Component:
    cls = f"{kebab(field.key)}-{kebab(column.key)}"
    disabled = locked | (row[f"__off_{column.key}"] == "true")
    on_change = lambda v: state.set_cell(field.key, index, column.key, v)  # noqa: E731
    label = _heading(field, column, state)
    if column.widget == "text":
        widget = rx.text(_label(row[column.key]) if column.translate else row[column.key], size="2", class_name=cls)
    elif column.widget == "select":
        widget = _select(field, column, state, row, index, disabled, cls)
    elif column.widget == "switch":
        widget = rx.switch(checked=row[column.key] == "true", on_change=on_change, disabled=disabled, size="1",
                           class_name=cls, aria_label=label)
    elif column.widget == "pick":
        widget = picker(state, f"{field.key}.{column.key}", row[column.key], on_change, kind=column.kind,
                        category=column.category, form=column.form, label=label, disabled=disabled,
                        class_name=cls)
    else:
        kind = "number" if column.widget == "number" else "text"
        widget = rx.input(value=row[column.key], on_change=on_change, disabled=disabled, size="1", type=kind,
                          class_name=cls, aria_label=label)
    if field.one_at_a_time:
        # only the row being edited shows its widgets
        read = rx.switch(checked=row[column.key] == "true", disabled=True, size="1", class_name=cls,
                         aria_label=label) if column.widget == "switch" else _shown(column, row[column.key])
        widget = rx.cond(state.row_editing.get(field.key, "") == row["__id"], widget, rx.box(read, class_name=cls))
    return rx.cond(row[f"__hide_{column.key}"] == "true", rx.fragment(), widget)


def _button(icon: str, label: str, on_click: Any, disabled: Any = False, color_scheme: str = "gray",
            name: str = "") -> rx.Component:
    return rx.icon_button(rx.icon(icon, size=14), on_click=on_click, size="1", variant="soft", disabled=disabled,
                          color_scheme=color_scheme, aria_label=t(label), title=t(label),
                          class_name=f"row-{name or label.lower()}")


def _actions(field: Field, state: Any, row: rx.Var, index: rx.Var, locked: rx.Var) -> rx.Component:
    key = field.key
    buttons = []
    if field.movable:
        last = state.tables.get(key, []).length() - 1
        busy = state.row_editing.get(key, "") != "" if field.one_at_a_time else False
        buttons += [_button("arrow-up", "Up", state.move_row(key, index, -1), locked | (index == 0) | busy),
                    _button("arrow-down", "Down", state.move_row(key, index, 1), locked | (index == last) | busy)]
    delete_off = locked | (row["__fixed"] == "true")
    if field.one_at_a_time:
        editing = state.row_editing.get(key, "")
        # while one row is edited, the others can be neither edited nor deleted
        other = (editing != "") & (editing != row["__id"])
        buttons = [rx.cond(
            editing == row["__id"],
            rx.hstack(_button("check", "Save", state.keep_row(key), locked, "green"),
                      _button("x", "Cancel", state.cancel_row(key), locked), spacing="1"),
            _button("pencil", "Edit", state.edit_row(key, index), locked | other),
        ), *buttons]
        delete_off = delete_off | other
    buttons.append(_button("trash-2", "Delete", state.delete_row(key, index), delete_off, "red"))
    return rx.hstack(*buttons, spacing="1")


def _column_shown(field: Field, column: Cell, state: Any, part: rx.Component) -> rx.Component:
    """A column whose `shown_when` is false of the edit page's values, or that the headings read
    with the data leave out (`Rows._set_heads`), is left out."""
    if column.shown_when is not None:
        part = rx.cond(column.shown_when(state.values, state.flags), part, rx.fragment())
    return rx.cond(state.table_hidden.get(field.key, []).contains(column.key), rx.fragment(), part)


def _heading(field: Field, column: Cell, state: Any) -> rx.Var:
    """The column's heading read with the data (a model's policy tokens), else its catalog label."""
    head = state.table_heads.get(field.key, {}).get(column.key, "")
    return rx.cond(head != "", head, t(column.label))


def rows_table(field: Field, state: Any, locked: rx.Var | bool = False) -> rx.Component:
    """The table of `field` in `state` (a Rows host); `locked`: shown, never edited."""
    ident = kebab(field.key)
    locked = rx.Var.create(locked) if isinstance(locked, bool) else locked
    add_off = locked | state.table_full.get(field.key, False)
    if field.one_at_a_time:
        add_off = add_off | (state.row_editing.get(field.key, "") != "")
    return rx.vstack(
        rx.box(rx.table.root(
            rx.table.header(rx.table.row(*[_column_shown(field, c, state,
                                                         rx.table.column_header_cell(_heading(field, c, state)))
                                           for c in field.columns],
                                         rx.table.column_header_cell(t("Action")))),
            rx.table.body(rx.foreach(state.tables.get(field.key, []), lambda row, index: rx.table.row(
                *[_column_shown(field, c, state, rx.table.cell(_cell(field, c, state, row, index, locked)))
                  for c in field.columns],
                rx.table.cell(_actions(field, state, row, index, locked)),
                custom_attrs={"data-row-id": row["__id"]},
            ))),
            size="1", variant="surface", width="100%", id=f"{ident}-table",
        ), max_height="32em", overflow_y="auto", width="100%"),
        rx.button(rx.icon("plus", size=14), t("Add"), on_click=state.add_row(field.key), disabled=add_off,
                  size="1", variant="soft", id=f"{ident}-add"),
        spacing="2", width="100%",
    )
