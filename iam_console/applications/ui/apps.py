"""/apps: cards of the organization's applications, each
opening its homepage in a new tab; one without a homepage is shown disabled."""

from __future__ import annotations

import reflex as rx

from iam_console.applications.ui.apps_state import Apps
from iam_console.ui.components.greeting import greeting
from iam_console.ui.routes import page
from iam_console.ui.text import t


def _card(app: rx.Var) -> rx.Component:
    body = rx.hstack(
        rx.cond(app["logo"] != "", rx.image(src=app["logo"], height="2.5em", max_width="6em", object_fit="contain"),
                rx.icon("app-window", size=32)),
        rx.vstack(
            rx.text(app["displayName"], weight="bold", class_name="app-title"),
            rx.text(app["description"], size="2", color_scheme="gray"),
            rx.cond(app["link"] == "", rx.text(t("No homepage"), size="1", color_scheme="gray")),
            spacing="1",
        ),
        align="center", spacing="3",
    )
    enabled = rx.link(rx.card(body, width="100%", class_name="app-card", data_app=app["name"]),
                      href=app["link"], is_external=True, underline="none", width="100%")
    disabled = rx.card(body, width="100%", opacity="0.5", cursor="not-allowed", class_name="app-card",
                       data_app=app["name"], data_disabled="true")
    return rx.box(rx.cond(app["link"] != "", enabled, disabled), width="20em")


@page("/apps", "Apps", on_load=Apps.load)
def apps() -> rx.Component:
    return rx.vstack(
        greeting(),
        rx.heading(t("Apps"), size="5"),
        rx.cond(Apps.error != "", rx.callout(Apps.error, icon="triangle-alert", color_scheme="red", id="apps-error")),
        rx.cond(Apps.total == 0, rx.text(t("No applications"), color_scheme="gray", id="apps-empty")),
        rx.flex(rx.foreach(Apps.cards, _card), gap="1em", wrap="wrap", width="100%", id="apps"),
        rx.cond(
            Apps.page_count > 1,
            rx.hstack(
                rx.icon_button(rx.icon("chevron-left"), size="1", variant="soft", disabled=Apps.page <= 1,
                               on_click=Apps.go_to(Apps.page - 1), id="apps-prev",
                               aria_label=t("Previous page")),
                rx.text(Apps.page.to_string() + " / " + Apps.page_count.to_string(), size="2"),
                rx.icon_button(rx.icon("chevron-right"), size="1", variant="soft",
                               disabled=Apps.page >= Apps.page_count,
                               on_click=Apps.go_to(Apps.page + 1), id="apps-next",
                               aria_label=t("Next page")),
                align="center", spacing="2",
            ),
        ),
        spacing="4", width="100%",
    )
