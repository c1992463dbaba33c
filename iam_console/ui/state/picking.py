"""Pickers (`Field(widget="pick")`, and `Cell(widget="pick")` in a row table): a searchable
select of records' names, or of fixed values (`_pick_values`). The `Picking` mixin asks the
service (core/choices.py) for one page of the names matching what was typed, through the
list's access rules, and keeps that page only. A host state provides `_pick_spec(ident)` ->
(kind, category, form) for each picker it shows (the browser names the picker, never the
kind), `_pick_organization()`, and for pickers of several values `_pick_get(ident)` /
`_pick_set(ident, values)`."""

from __future__ import annotations

import reflex as rx

from iam_console.core import choices
from iam_console.ui.state.service import call


class Picking(rx.State, mixin=True):
    pick_found: dict[str, list[str]] = {}  # picker -> the names of the page shown
    pick_typed: dict[str, str] = {}
    pick_page: dict[str, int] = {}
    pick_more: dict[str, bool] = {}

    def _pick_spec(self, ident: str) -> tuple[str, str, str] | None:
        raise NotImplementedError

    def _pick_organization(self) -> str:
        raise NotImplementedError

    def _pick_get(self, ident: str) -> list[str]:
        raise NotImplementedError

    def _pick_values(self, ident: str) -> tuple[str, ...] | None:
        """Fixed values the picker offers instead of records (None: it offers records)."""
        return None

    def _pick_exclude(self, ident: str) -> str:
        """The owner/name of a record the picker never offers (none by default)."""
        return ""

    def _pick_set(self, ident: str, values: list[str]) -> None:
        raise NotImplementedError

    async def _pick_fetch(self, ident: str) -> None:
        fixed = self._pick_values(ident)
        if fixed is not None:  # the values containing what was typed, a page of them
            typed, page = self.pick_typed.get(ident, "").lower(), self.pick_page.get(ident, 1)
            matching = [value for value in fixed if typed in value.lower()]
            size = choices.PAGE_SIZE
            self.pick_found = {**self.pick_found, ident: matching[(page - 1) * size:page * size]}
            self.pick_more = {**self.pick_more, ident: len(matching) > page * size}
            return
        spec = self._pick_spec(ident)
        if spec is None:
            return
        kind, category, form = spec
        # organizations are in no organization: a picker of them offers every one the viewer may read
        organization = "" if kind == "organization" else self._pick_organization()
        typed = self.pick_typed.get(ident, "")
        page, exclude = self.pick_page.get(ident, 1), self._pick_exclude(ident)
        found = await call(self, lambda db, actor: choices.names(db, actor, kind, organization, typed, page=page,
                                                                 category=category, form=form, exclude=exclude))
        # a viewer who may not read the kind is offered nothing (no toast while they type)
        names = found.value if not found.failed and found.value else choices.Choices([], False)
        self.pick_found = {**self.pick_found, ident: names.names}
        self.pick_more = {**self.pick_more, ident: names.more}

    @rx.event
    async def pick_search(self, ident: str, typed: str):
        """The picker opened (typed "") or its search text changed: the first page of matches."""
        self.pick_typed = {**self.pick_typed, ident: str(typed)[:choices.MAX_TYPED]}
        self.pick_page = {**self.pick_page, ident: 1}
        await self._pick_fetch(ident)

    @rx.event
    async def pick_turn(self, ident: str, step: int):
        """The next or previous page of matches."""
        page = self.pick_page.get(ident, 1) + (1 if step > 0 else -1)
        if page < 1 or (step > 0 and not self.pick_more.get(ident)):
            return
        self.pick_page = {**self.pick_page, ident: page}
        await self._pick_fetch(ident)

    @rx.event
    def pick_add(self, ident: str, value: str):
        """A picker of several values: one more (only a name the viewer was offered)."""
        chosen = self._pick_get(ident)
        if value in self.pick_found.get(ident, []) and value not in chosen:
            self._pick_set(ident, [*chosen, value])

    @rx.event
    def pick_drop(self, ident: str, value: str):
        self._pick_set(ident, [v for v in self._pick_get(ident) if v != value])
