"""The apps page: one page of the organization's
applications as cards, from applications/applications.py."""

from __future__ import annotations

import reflex as rx

from iam_console.applications import applications
from iam_console.ui.state.service import call, message


class Apps(rx.State):
    cards: list[dict[str, str]] = []  # name, displayName, logo, description, link ('' = disabled)
    total: int = 0
    page: int = 1
    error: str = ""

    @rx.var
    def page_count(self) -> int:
        return max(1, -(-self.total // applications.APPS_PAGE_SIZE))

    @rx.event
    async def load(self):
        self.page = 1
        return await self._load()

    @rx.event
    async def go_to(self, page: int):
        self.page = max(1, min(int(page), self.page_count))
        return await self._load()

    async def _load(self):
        self.error = ""
        page = self.page
        found = await call(self, lambda db, actor: None if actor.is_anonymous  # the guard sends it to /login
                           else applications.apps_of(db, actor, page), quiet=True)
        if found.failed:
            self.cards, self.total = [], 0
            self.error = await message(self, found.error)
        elif found.value is not None:
            self.cards, self.total, self.page = found.value.rows, found.value.total or 0, found.value.page or 1
