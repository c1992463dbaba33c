"""A titled section of an edit page under the fields (an organization's theme, navigation
items, LDAP servers): a heading with an optional action, a rule above it."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.text import t


def section(title: str, ident: str, *children: rx.Component, action: rx.Component | None = None) -> rx.Component:
    return rx.vstack(
        rx.hstack(rx.heading(t(title), size="3"), rx.spacer(), action or rx.fragment(), width="100%",
                  align="center"),
        *children,
        spacing="2", width="100%", padding_top="1em", border_top="1px solid var(--gray-a4)", id=ident,
    )
