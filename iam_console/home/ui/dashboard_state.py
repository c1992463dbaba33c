"""The dashboard: the user cards, the 30-day chart and the
guided tour (state/tour.py). The figures come from home/dashboard.py, counted in SQL; the
state keeps 4 numbers and 31 chart points."""

from __future__ import annotations

from datetime import date
from typing import ClassVar

import reflex as rx

from iam_console.core import lookup
from iam_console.core.resources import REGISTRY
from iam_console.home import dashboard
from iam_console.i18n.formats import count_text, day_text
from iam_console.models.base import utcnow
from iam_console.ui.state.prefs import ALL_ORGANIZATIONS, Prefs
from iam_console.ui.state.service import call, message
from iam_console.ui.state.tour import Tour


def series_labels() -> dict[str, str]:
    """The chart's series: the service's key, and the line's label (the menu's: "Users")."""
    return {name: REGISTRY[name].plural_name.capitalize() for name in dashboard.series()}


class Dashboard(Tour, rx.State):
    TOUR_STEPS: ClassVar[int] = 6  # the steps components/tour.py's DASHBOARD_TOUR shows
    ready: bool = False
    scope: str = ""  # the organization the figures are for; "" = every organization
    figures: dict[str, str] = {}  # total, today, week, month, as the viewer's language writes counts
    chart: list[dict[str, str | int]] = []  # 31 points: day, then one count per series
    error: str = ""
    tour_done: str = rx.LocalStorage("0", name="iam_tour_done", sync=True)

    @rx.event
    async def load(self):
        """on_load (after the guard), and again when the header's organization changes."""
        prefs = await self.get_state(Prefs)
        chosen, language = prefs.organization, prefs.lang
        self.error = ""
        now = utcnow()

        def read(db, actor):
            if actor.is_anonymous:
                return None  # the guard sends the visitor to /login
            if not actor.is_admin:
                return "/apps"
            scope = actor.organization
            if actor.is_global_admin:
                scope = "" if chosen == ALL_ORGANIZATIONS else chosen
            organization = lookup.organization(db, actor.organization)
            return scope, dashboard.counts(db, actor, scope, now=now), bool(organization and organization.enable_tour)

        found = await call(self, read, quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return None
        if not isinstance(found.value, tuple):
            return rx.redirect(found.value) if found.value else None
        scope, series, self.tour_enabled = found.value
        self.scope = scope
        self.figures = {key: count_text(value, language) for key, value in dashboard.user_figures(series).items()}
        labels = [day_text(date.fromisoformat(day), language) for day in dashboard.days(now)]  # 11/29, 29.11.
        self.chart = [{"day": label, **{key: series[f"{key}Counts"][i] for key in dashboard.series()}}
                      for i, label in enumerate(labels)]
        self.ready = True
        return None
