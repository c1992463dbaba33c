"""/: the dashboard, for admins; others go to /apps."""

from __future__ import annotations

import reflex as rx

from iam_console.home.ui.dashboard_state import Dashboard, series_labels
from iam_console.ui.components.greeting import greeting
from iam_console.ui.components.tour import tour, tour_button
from iam_console.ui.routes import page
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t

# 14 series, 14 colours
COLOURS = ("#5470c6", "#91cc75", "#fac858", "#ee6666", "#73c0de", "#3ba272", "#fc8452", "#9a60b4", "#ea7ccc",
           "#1f77b4", "#8c564b", "#7f7f7f", "#bcbd22", "#17becf")
CARDS = (("total", "Total users"), ("today", "New users today"), ("week", "New users past 7 days"),
         ("month", "New users past 30 days"))

# the guided tour names the menu groups, then goes on to the first management screen
DASHBOARD_TOUR = (
    ("Welcome to the console",
     "This short tour shows where things are. The dashboard counts the users and how the records grew over the "
     "last 30 days."),
    ("Home", "The dashboard, shortcuts to the main screens, and the apps of your organization."),
    ("User Management", "Organizations, their groups and users, and invitations to sign up."),
    ("Identity", "Applications, the providers they sign in with, resources and certificates."),
    ("Authorization", "Roles and permissions, and the Casbin models, adapters and enforcers behind them."),
    ("Logs, business and administration",
     "Sessions, records and tokens; products, payments and subscriptions; syncers and webhooks. Next comes the "
     "first management screen."),
)


def dashboard_next_page() -> rx.Var:
    """Where the dashboard's tour goes on to: the organizations if the viewer has that screen, else the apps."""
    return rx.cond(Account.menu_keys.contains("/organizations"), "/organizations", "/apps")


def _card(key: str, label: str) -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.text(t(label), size="2", color_scheme="gray"),
            rx.heading(Dashboard.figures[key], size="8", id=f"card-{key}-value"),
            spacing="1",
        ),
        id=f"card-{key}", flex="1", min_width="12em",
    )


def _chart() -> rx.Component:
    return rx.recharts.line_chart(
        *[rx.recharts.line(data_key=key, name=t(label), stroke=COLOURS[i % len(COLOURS)], dot=False, type_="monotone",
                           is_animation_active=False)
          for i, (key, label) in enumerate(series_labels().items())],
        rx.recharts.cartesian_grid(stroke_dasharray="3 3"),
        rx.recharts.x_axis(data_key="day"),
        rx.recharts.y_axis(allow_decimals=False),
        rx.recharts.graphing_tooltip(),
        rx.recharts.legend(),
        data=Dashboard.chart,
        width="100%",
        height=400,
    )


@page("/", "Dashboard", on_load=Dashboard.load, follows_organization=True)
def home() -> rx.Component:
    scope = rx.cond(Dashboard.scope == "", t("All organizations"),
                    Prefs.tr["Organization: %s"].replace("%s", Dashboard.scope))
    dashboard = rx.vstack(
        rx.hstack(greeting(), rx.spacer(), rx.text(scope, size="2", color_scheme="gray", id="dashboard-scope"),
                  tour_button(Dashboard), align="center", width="100%", wrap="wrap"),
        rx.cond(Dashboard.error != "", rx.callout(Dashboard.error, icon="triangle-alert", color_scheme="red",
                                                  id="dashboard-error")),
        rx.flex(*[_card(key, label) for key, label in CARDS], gap="1em", wrap="wrap", width="100%"),
        rx.card(
            rx.text(t("The last 30 days"), weight="bold", size="3"),
            rx.box(_chart(), width="100%", id="dashboard-chart"),
            width="100%",
        ),
        tour(Dashboard, DASHBOARD_TOUR, dashboard_next_page()),
        spacing="4", width="100%",
    )
    return rx.cond(Account.is_admin & Dashboard.ready, dashboard, rx.fragment())
