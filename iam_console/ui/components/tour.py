"""A page's guided tour (state/tour.py): a few steps in a card at the bottom right that leaves
the page usable; Next and Skip; the last step closes it or goes on to a next page. Desktop
widths only."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.state.tour import Tour
from iam_console.ui.text import t


def _step(state: type[Tour], steps: tuple, index: int, title: str, body: str, next_page) -> rx.Component:
    last = index == len(steps) - 1
    finish = state.finish_tour("" if next_page is None else next_page)
    next_button = rx.button(t("Done") if last and next_page is None else t("Next"), size="1", id="tour-next",
                            on_click=finish if last else state.next_step)
    return rx.cond(
        state.tour_step == index,
        rx.vstack(
            rx.hstack(rx.icon("map", size=16), rx.text(t(title), weight="bold", id="tour-title"),
                      rx.spacer(), rx.text(f"{index + 1} / {len(steps)}", size="1", color_scheme="gray",
                                           id="tour-count"),
                      align="center", width="100%"),
            rx.text(t(body), size="2"),
            rx.hstack(rx.button(t("Skip"), size="1", variant="soft", color_scheme="gray",
                                on_click=state.skip_tour, id="tour-skip"),
                      next_button, justify="end", width="100%", spacing="2"),
            spacing="2", width="100%",
        ),
    )


def tour(state: type[Tour], steps: tuple[tuple[str, str], ...], next_page=None) -> rx.Component:
    """`steps`: (title, body) catalog strings, as many as `state.TOUR_STEPS`; `next_page`
    (a path or a Var) is where the last step goes on to, else it closes the tour."""
    assert len(steps) == state.TOUR_STEPS
    return rx.cond(
        state.tour_visible,
        rx.desktop_only(rx.card(
            *[_step(state, steps, i, title, body, next_page) for i, (title, body) in enumerate(steps)],
            position="fixed", bottom="1.5em", right="1.5em", width="22em", z_index="20",
            box_shadow="var(--shadow-5)", id="tour",
        )),
    )


def tour_button(state: type[Tour]) -> rx.Component:
    """Opens the tour again (it is shown once per browser on its own)."""
    return rx.cond(
        state.tour_enabled,
        rx.tooltip(rx.icon_button(rx.icon("map"), variant="soft", size="2", on_click=state.open_tour,
                                  aria_label=t("Tour"), id="tour-open"), content=t("Tour")),
    )
