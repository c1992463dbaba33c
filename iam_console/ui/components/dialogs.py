"""The console's dialog parts, written once: the Cancel/OK row and the
confirmation asked before a delete or a removal."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.text import t


def cancel_ok(on_cancel, on_ok, *, cancel_id: str, ok_id: str) -> rx.Component:
    return rx.hstack(
        rx.button(t("Cancel"), on_click=on_cancel, variant="soft", color_scheme="gray", id=cancel_id),
        rx.button(t("OK"), on_click=on_ok, id=ok_id),
        justify="end", spacing="2", width="100%", margin_top="0.5em",
    )


def confirm(question: rx.Var, *, on_ok, on_cancel, open_: rx.Var, ident: str) -> rx.Component:
    """'Sure to delete: {name} ?' and the like; ids {ident}-question and {ident}-confirm."""
    return rx.alert_dialog.root(
        rx.alert_dialog.content(
            rx.alert_dialog.title(question, id=f"{ident}-question"),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button(t("Cancel"), variant="soft", on_click=on_cancel)),
                rx.alert_dialog.action(rx.button(t("OK"), color_scheme="red", on_click=on_ok,
                                                 id=f"{ident}-confirm")),
                justify="end", spacing="2", margin_top="1em",
            ),
        ),
        open=open_,
    )
