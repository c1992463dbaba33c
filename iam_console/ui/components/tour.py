"""The dashboard's guided tour: a few steps naming the
menu groups, in a card at the bottom right that leaves the page usable; Next
and Skip; the last step goes on to the next page. Desktop widths only."""

from __future__ import annotations

import reflex as rx

from ..state.account import Account
from ..state.dashboard import TOUR_STEPS, Dashboard
from ..text import t

STEPS = (
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
assert len(STEPS) == TOUR_STEPS


def _next_page() -> rx.Var:
    """Where the tour goes on to: the organizations if the viewer has that screen, else the apps."""
    return rx.cond(Account.menu_keys.contains("/organizations"), "/organizations", "/apps")


def _step(index: int, title: str, body: str) -> rx.Component:
    last = index == len(STEPS) - 1
    next_button = rx.button(t("Next"), size="1", id="tour-next",
                            on_click=Dashboard.finish_tour(_next_page()) if last else Dashboard.next_step)
    return rx.cond(
        Dashboard.tour_step == index,
        rx.vstack(
            rx.hstack(rx.icon("map", size=16), rx.text(t(title), weight="bold", id="tour-title"),
                      rx.spacer(), rx.text(f"{index + 1} / {len(STEPS)}", size="1", color_scheme="gray",
                                           id="tour-count"),
                      align="center", width="100%"),
            rx.text(t(body), size="2"),
            rx.hstack(rx.button(t("Skip"), size="1", variant="soft", color_scheme="gray",
                                on_click=Dashboard.skip_tour, id="tour-skip"),
                      next_button, justify="end", width="100%", spacing="2"),
            spacing="2", width="100%",
        ),
    )


def tour() -> rx.Component:
    return rx.cond(
        Dashboard.tour_visible,
        rx.desktop_only(rx.card(
            *[_step(i, title, body) for i, (title, body) in enumerate(STEPS)],
            position="fixed", bottom="1.5em", right="1.5em", width="22em", z_index="20",
            box_shadow="var(--shadow-5)", id="tour",
        )),
    )


def tour_button() -> rx.Component:
    """Opens the tour again (it is shown once per browser on its own)."""
    return rx.cond(
        Dashboard.tour_enabled,
        rx.tooltip(rx.icon_button(rx.icon("map"), variant="soft", size="2", on_click=Dashboard.open_tour,
                                  aria_label=t("Tour"), id="tour-open"), content=t("Tour")),
    )
