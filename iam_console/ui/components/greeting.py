"""Who is signed in, and as what: the dashboard and the apps page open with it."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def greeting() -> rx.Component:
    role = rx.cond(Account.is_global_admin, t("Global administrator"),
                   rx.cond(Account.is_admin, t("Organization administrator"), t("User")))
    return rx.hstack(
        rx.heading(Prefs.tr["Welcome, %s"].replace("%s", Account.display_name), size="6", id="welcome"),
        rx.badge(role, size="2", id="role-badge"),
        align="center", spacing="3", wrap="wrap",
    )
