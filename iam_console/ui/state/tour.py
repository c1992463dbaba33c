"""A page's guided tour (components/tour.py): which step shows, and whether this browser
has seen it. A page's state mixes this in, sets `tour_enabled` when it loads (the viewer's
organization has enableTour) and names its own local-storage key for `tour_done`."""

from __future__ import annotations

from typing import ClassVar

import reflex as rx


class Tour(rx.State, mixin=True):
    TOUR_STEPS: ClassVar[int] = 1  # how many steps the page's tour has
    tour_enabled: bool = False
    tour_step: int = 0
    # once per browser: set when the tour is skipped or finished; the tour button clears it
    # (each page's state declares it again with a key of its own)
    tour_done: str = "0"

    @rx.var
    def tour_visible(self) -> bool:
        return self.tour_enabled and self.tour_done != "1"

    @rx.event
    def next_step(self):
        self.tour_step = min(self.tour_step + 1, self.TOUR_STEPS - 1)

    @rx.event
    def skip_tour(self):
        self.tour_done, self.tour_step = "1", 0

    @rx.event
    def finish_tour(self, next_page: str):
        """The last step: the tour is done, and goes on to `next_page` if one is named."""
        self.tour_done, self.tour_step = "1", 0
        return rx.redirect(next_page) if next_page else None

    @rx.event
    def open_tour(self):
        self.tour_done, self.tour_step = "0", 0
