"""The 404 and 403 pages."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.routes import page
from iam_console.ui.shell import themed
from iam_console.ui.text import t


def _result(code: str, message: str) -> rx.Component:
    return themed(rx.center(
        rx.vstack(
            rx.heading(code, size="9", color_scheme="gray"),
            rx.text(t(message), size="4", id="result-message"),
            rx.link(rx.button(t("Back Home")), href="/", id="back-home"),
            align="center", spacing="4",
        ),
        min_height="100vh",
    ))


@page("/404", "404", guarded=False)
def not_found() -> rx.Component:
    return _result("404", "Sorry, the page you visited does not exist.")


@page("/403", "403", guarded=False)
def forbidden() -> rx.Component:
    return _result("403", "Sorry, you do not have permission to access this page or logged in status invalid.")
