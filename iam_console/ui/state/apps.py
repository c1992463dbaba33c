"""The apps page: one page of the organization's
applications as cards, from services/applications.py."""

from __future__ import annotations

import reflex as rx

from ...db import session_scope
from ...services import applications
from ...services.errors import ServiceError
from .account import viewer
from .prefs import Prefs


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
        prefs = await self.get_state(Prefs)
        self.error = ""
        try:
            with session_scope() as db:
                actor = viewer(db, self.router)
                if actor.is_anonymous:
                    return  # the guard sends the visitor to /login
                found = applications.apps_of(db, actor, self.page)
        except ServiceError as exc:
            self.cards, self.total = [], 0
            self.error = prefs.say(exc.template, *exc.args_)
            return
        self.cards, self.total, self.page = found.rows, found.total or 0, found.page or 1
