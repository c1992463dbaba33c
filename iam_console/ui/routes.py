"""The page registry: a page module declares its route once; the app adds the
pages and the menu lists only routes that have a screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import reflex as rx


@dataclass(frozen=True)
class Page:
    route: str
    title: str
    component: Callable[[], rx.Component]
    guarded: bool


PAGES: list[Page] = []
SCREENS: set[str] = set()  # static routes with a screen: what the menu may link to


def page(route: str, title: str, *, guarded: bool = True):
    def register(component: Callable[[], rx.Component]) -> Callable[[], rx.Component]:
        PAGES.append(Page(route, title, component, guarded))
        if "[" not in route:
            SCREENS.add(route)
        return component

    return register
