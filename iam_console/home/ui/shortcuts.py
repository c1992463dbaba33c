"""/shortcuts: four cards leading to the main screens; a
screen that is not built yet is shown disabled with a note."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.routes import LINKABLE, page
from iam_console.ui.text import t

SHORTCUTS = (("/organizations", "Organizations", "User Management", "building-2"),
             ("/users", "Users", "User Management", "users"),
             ("/providers", "Providers", "Identity", "plug"),
             ("/applications", "Applications", "Identity", "app-window"))


def _shortcut(route: str, label: str, group: str, icon: str) -> rx.Component:
    key = route.strip("/")
    body = rx.hstack(rx.icon(icon, size=28),
                     rx.vstack(rx.text(t(label), weight="bold"), rx.text(t(group), size="2", color_scheme="gray"),
                               spacing="1"),
                     align="center", spacing="3")
    if route in LINKABLE:  # known when the pages compile: every page module is imported by then
        return rx.link(rx.card(body, width="16em", id=f"shortcut-{key}"), href=route, underline="none")
    note = rx.text(t("Not available yet"), size="1", color_scheme="gray")
    return rx.card(rx.vstack(body, note, spacing="2"), width="16em", opacity="0.5", cursor="not-allowed",
                   id=f"shortcut-{key}", data_disabled="true")


@page("/shortcuts", "Shortcuts")
def shortcuts() -> rx.Component:
    return rx.vstack(
        rx.heading(t("Shortcuts"), size="5"),
        rx.flex(*[_shortcut(*shortcut) for shortcut in SHORTCUTS], gap="1em", wrap="wrap"),
        spacing="4", width="100%",
    )
