"""The WebAuthn credentials section of the user pages (state: signin/ui/webauthn_state.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.signin.ui.webauthn_state import ITEM, WebauthnSection
from iam_console.ui.components.dialogs import confirm
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def _row(row: rx.Var) -> rx.Component:
    return rx.table.row(
        rx.table.cell(row["name"], class_name="webauthn-name"),
        rx.table.cell(row["createdTime"]),
        rx.cond(WebauthnSection.is_self, rx.table.cell(rx.icon_button(
            rx.icon("trash-2", size=14), on_click=WebauthnSection.ask_delete(row["id"], row["name"]),
            size="1", color_scheme="red", variant="soft", class_name="webauthn-delete", aria_label=t("Delete")))),
        class_name="webauthn-row",
    )


def webauthn_section() -> rx.Component:
    """A row of the user form, as its other account items are laid out."""
    table = rx.table.root(
        rx.table.header(rx.table.row(
            rx.table.column_header_cell(t("Name")), rx.table.column_header_cell(t("Created time")),
            rx.cond(WebauthnSection.is_self, rx.table.column_header_cell(t("Action"))))),
        rx.table.body(rx.foreach(WebauthnSection.rows, _row)),
        width="100%", size="1", variant="surface", id="webauthn-table",
    )
    adding = rx.hstack(
        rx.input(value=WebauthnSection.new_name, on_change=WebauthnSection.set_new_name, placeholder=t("Name"),
                 id="webauthn-new-name", size="1", max_length=100, aria_label=t("Name")),
        rx.button(rx.icon("plus", size=14), t("Add"), on_click=WebauthnSection.add, loading=WebauthnSection.busy,
                  size="1", variant="soft", id="webauthn-add"),
        align="center", spacing="2",
    )
    body = rx.vstack(rx.cond(WebauthnSection.is_self, adding), table, spacing="2", width="100%")
    row = rx.grid(
        rx.text(t(ITEM), size="2", weight="medium", padding_top="0.4em"),
        rx.box(body, width="100%"),
        columns="12em 1fr", spacing="3", width="100%", id="webauthn-section",
    )
    question = Prefs.tr["Sure to delete: %s ?"].replace("%s", WebauthnSection.deleting_name)
    return rx.cond(WebauthnSection.shown, rx.fragment(
        row,
        confirm(question, on_ok=WebauthnSection.confirm_delete, on_cancel=WebauthnSection.cancel_delete,
                open_=WebauthnSection.deleting != "", ident="webauthn-delete"),
    ))
