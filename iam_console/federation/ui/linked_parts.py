"""The linked accounts section of the user pages (state: federation/ui/linked_state.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.federation.ui.linked_state import LinkedSection
from iam_console.federation.ui.provider_buttons import full_load
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def _row(row: rx.Var) -> rx.Component:
    name = row["name"].to(str)
    link = rx.el.a(t("Link"), href=row["href"], custom_attrs=full_load(), id="linked-link-" + name,
                   class_name="linked-link",
                   aria_label=Prefs.tr["Link"] + " " + row["label"].to(str),
                   style={"color": "var(--accent-11)", "font_size": "var(--font-size-2)"})
    unlink = rx.button(t("Unlink"), size="1", variant="soft", color_scheme="red", id="linked-unlink-" + name,
                       aria_label=Prefs.tr["Unlink"] + " " + row["label"].to(str),
                       on_click=LinkedSection.unlink(row["type"], row["name"]))
    action = rx.cond(row["linked"] != "", rx.cond(row["canUnlink"] != "", unlink), link)
    return rx.table.row(
        rx.table.cell(rx.hstack(rx.el.img(src=row["icon"], alt="", width="18", height="18"),
                                rx.text(row["label"], size="2"), align="center", spacing="2")),
        rx.table.cell(rx.cond(row["linked"] != "", rx.text(row["username"], size="2", class_name="linked-username"),
                              rx.text(t("Not linked"), size="2", color_scheme="gray"))),
        rx.cond(LinkedSection.is_self, rx.table.cell(action)),
        class_name="linked-row", id="linked-row-" + name,
    )


def linked_section() -> rx.Component:
    table = rx.table.root(
        rx.table.header(rx.table.row(
            rx.table.column_header_cell(t("Provider")), rx.table.column_header_cell(t("Name")),
            rx.cond(LinkedSection.is_self, rx.table.column_header_cell(t("Action"))))),
        rx.table.body(rx.foreach(LinkedSection.rows, _row)),
        width="100%", size="1", variant="surface", id="linked-table")
    none = rx.text(t("No data"), size="2", color_scheme="gray", id="linked-none", padding_top="0.4em")
    return rx.cond(LinkedSection.shown, rx.grid(
        rx.text(t("3rd-party logins"), size="2", weight="medium", padding_top="0.4em"),
        rx.box(rx.cond(LinkedSection.rows.length() > 0, table, none), width="100%"), columns="12em 1fr",
        spacing="3", width="100%", id="linked-section"))
