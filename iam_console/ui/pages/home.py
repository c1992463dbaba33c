"""/: a signed-in landing until the dashboard arrives (issue 5)."""

from __future__ import annotations

import reflex as rx

from ..routes import page
from ..state.account import Account
from ..state.prefs import Prefs
from ..text import t


@page("/", "Dashboard")
def home() -> rx.Component:
    role = rx.cond(Account.is_global_admin, t("Global administrator"),
                   rx.cond(Account.is_admin, t("Organization administrator"), t("User")))
    return rx.vstack(
        rx.heading(Prefs.tr["Welcome, %s"].replace("%s", Account.display_name), size="6", id="welcome"),
        rx.text(Prefs.tr["You are signed in to the %s organization."].replace("%s", Account.owner)),
        rx.badge(role, size="2", id="role-badge"),
        rx.text(t("The other screens of the console arrive with the coming releases; the menu lists those that "
                  "exist."), color_scheme="gray", size="2"),
        spacing="3",
    )
