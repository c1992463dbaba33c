"""The page registry: a page module declares its route once; the app adds the
pages and the menu lists only routes that have a screen."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import reflex as rx


@dataclass(frozen=True)
class Page:
    route: str
    title: str
    component: Callable[[], rx.Component]
    guarded: bool
    on_load: Any = None  # the page's own load event(s), after the guard's
    follows_organization: bool = False  # its on_load runs again when the header's organization changes


PAGES: list[Page] = []
# Routes served by the HTTP API rather than Reflex: linked with a full page load.
EXTERNAL_ROUTES = frozenset({"/swagger"})
LINKABLE: set[str] = set(EXTERNAL_ROUTES)  # static routes that have a page: what the menu may link to


def page(route: str, title: str, *, guarded: bool = True, on_load: Any = None, follows_organization: bool = False):
    def register(component: Callable[[], rx.Component]) -> Callable[[], rx.Component]:
        PAGES.append(Page(route, title, component, guarded, on_load, follows_organization))
        if "[" not in route:
            LINKABLE.add(route)
        return component

    return register


def reload_on_organization(path: str) -> list:
    """The own on_load events of the page at `path` if it follows the header's
    organization selector (static routes only), else none."""
    for spec in PAGES:
        if spec.route.rstrip("/") == path.rstrip("/") and spec.follows_organization and spec.on_load:
            return spec.on_load if isinstance(spec.on_load, list) else [spec.on_load]
    return []
