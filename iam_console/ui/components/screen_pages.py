"""The pages of a Screen, registered from its declaration: the list page at its
list route (and `list_routes`), the edit page at its edit route, and its own
`routes`. ui/pages/__init__.py calls `register` for every declared screen, once
every page module is imported."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.components.editing import edit_page
from iam_console.ui.components.listing import list_page
from iam_console.ui.routes import page
from iam_console.ui.screens import Screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.listing import Listing


def register(screen: Screen) -> None:
    def edit() -> rx.Component:
        return edit_page(screen, *(screen.parts() if screen.parts else ()),
                         actions=screen.actions() if screen.actions else ())

    if screen.list_page:
        # the header's organization selector reloads the list; a nested route has its own organization
        page(screen.list_route, screen.title, on_load=Listing.open(screen.key),
             follows_organization=True)(lambda: list_page(screen, screen.row_actions))
        for route in screen.list_routes:
            page(route, screen.title, on_load=Listing.open(screen.key))(lambda: list_page(screen, screen.row_actions))
    if screen.has_edit_page:
        page(screen.edit_pattern, screen.edit_title or screen.title, on_load=Editing.open(screen.key))(edit)
    for extra in screen.routes:
        page(extra.path, extra.title, on_load=extra.on_load)(extra.component or edit)
