"""The state of every list page: one
class serves all screens, since a browser tab shows one list at a time. It
holds only the visible page, as display strings; the rows come from the
service layer with the viewer's own rights."""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import quote, unquote

import reflex as rx

from ...db import session_scope
from ...services import crud, defaults, policy, uploads
from ...services.errors import ServiceError
from ...services.resources import Ownership
from ..screens import SCREENS, Screen, cell, link
from .account import viewer
from .prefs import ALL_ORGANIZATIONS, Prefs

PAGE_SIZES = ["10", "20", "50", "100"]


class Paging(rx.State, mixin=True):
    """The pager of a table (total, previous/next, quick jumper, size changer),
    for any state that reloads its page in `_turned`."""

    total: int = 0
    page: int = 1
    page_size: int = 10
    jump_to: str = ""

    @rx.var
    def page_count(self) -> int:
        return max(1, -(-self.total // max(self.page_size, 1)))

    async def _turned(self) -> Any:
        """Load the page now shown; what it returns, the events return."""
        raise NotImplementedError

    @rx.event
    async def go_to(self, page: int):
        self.page = max(1, min(int(page), self.page_count))
        return await self._turned()

    @rx.event
    async def jump(self, key: str):
        if key == "Enter" and self.jump_to.strip().isdigit():
            page, self.jump_to = int(self.jump_to.strip()), ""
            return await self.go_to(page)

    @rx.event
    def set_jump_to(self, value: str):
        self.jump_to = value[:9]

    @rx.event
    async def set_page_size(self, size: str):
        if size in PAGE_SIZES:
            self.page_size, self.page = int(size), 1
            return await self._turned()


class Listing(Paging, rx.State):
    screen_key: str = ""
    rows: list[dict[str, str]] = []
    sort_field: str = ""
    sort_order: str = ""  # "ascend", "descend" or "" (the default order)
    search_field: str = ""
    search_value: str = ""
    scope_organization: str = ""  # /organizations/{org}/users, /trees/{org}: the route's organization
    scope_group: str = ""  # /trees/{org}/{group}: the users of that group
    error: str = ""
    not_authorized: bool = False
    deleting: str = ""  # the row key waiting for the confirmation
    deleting_label: str = ""

    @property
    def _screen(self) -> Screen:
        return SCREENS[self.screen_key]

    @rx.event
    async def open(self, screen_key: str):
        """on_load: a fresh list (the organization of /organizations/{org}/... from the route)."""
        screen = SCREENS[screen_key]
        organization, group = _route_scope(self.router.url.path, screen)
        if screen_key != self.screen_key:
            self.sort_field, self.sort_order = "", ""
            self.page_size = screen.page_size
        # a visit (or a new organization in the header) starts at the first page, unfiltered
        self.page, self.search_field, self.search_value = 1, "", ""
        self.screen_key = screen_key
        self.scope_organization, self.scope_group = organization, group
        return await self._load()

    async def _owner(self, actor) -> str:
        """Whose records: the route's organization, else the global admin's chosen one."""
        if self.scope_organization:
            return self.scope_organization
        if actor.is_global_admin:
            prefs = await self.get_state(Prefs)
            return "" if prefs.organization == ALL_ORGANIZATIONS else prefs.organization
        return actor.organization

    def _params(self) -> dict[str, str]:
        params = {"p": str(self.page), "pageSize": str(self.page_size)}
        if self.sort_field and self.sort_order:
            params |= {"sortField": self.sort_field, "sortOrder": self.sort_order}
        if self.search_field and self.search_value:
            params |= {"field": self.search_field, "value": self.search_value}
        if self.scope_group:
            params["groupName"] = self.scope_group
        return params

    async def _load(self):
        screen = self._screen
        prefs = await self.get_state(Prefs)
        self.error, self.not_authorized = "", False
        try:
            with session_scope() as db:
                actor = viewer(db, self.router)
                owner = await self._owner(actor)
                filters = ({"owner": "", "organization": owner} if screen.kind.ownership is Ownership.ADMIN
                           else {"owner": owner, "organization": ""})
                if screen.key == "organization" and not actor.is_global_admin:
                    filters = {"owner": "", "organization": actor.organization}
                page = crud.list_records(db, actor, screen.kind, self._params(), **filters)
        except ServiceError as exc:
            self.rows, self.total = [], 0
            if exc.template in (policy.UNAUTHORIZED, "Please login first"):
                self.not_authorized = True
            else:
                self.error = prefs.say(exc.template, *exc.args_)
            return
        self.rows = [_display(screen, row, actor.id) for row in page.rows]
        self.total = page.total or 0
        self.page = page.page or self.page

    async def _turned(self):
        return await self._load()

    @rx.event
    async def sort(self, field: str):
        """Click on a header: ascend, descend, then the default order."""
        if self.sort_field != field:
            self.sort_field, self.sort_order = field, "ascend"
        elif self.sort_order == "ascend":
            self.sort_order = "descend"
        else:
            self.sort_field, self.sort_order = "", ""
        self.page = 1
        return await self._load()

    @rx.event
    def set_search_field(self, field: str):
        self.search_field = field

    @rx.event
    async def search(self, value: str):
        self.search_value, self.page = value[:100], 1
        if not self.search_field and self._screen.columns:
            self.search_field = next(c.key for c in self._screen.columns if c.searchable)
        return await self._load()

    @rx.event
    async def filter(self, field: str, value: str):
        self.search_field, self.page = field, 1
        self.search_value = "" if value == ALL_ORGANIZATIONS else value
        return await self._load()

    @rx.event
    async def add(self):
        """Add: a record with generated defaults, opened in add mode."""
        screen = self._screen
        prefs = await self.get_state(Prefs)
        try:
            with session_scope() as db:
                actor = viewer(db, self.router)
                owner = await self._owner(actor) or actor.organization
                record = defaults.new_record(db, actor, screen.key, owner)
                if self.scope_group and screen.key == "user":
                    record["groups"] = [f"{owner}/{self.scope_group}"]  # added from a group's view
                crud.add_record(db, actor, screen.kind, record)
        except ServiceError as exc:
            return rx.toast.error(prefs.say("Failed to add: %s", prefs.say(exc.template, *exc.args_)))
        path = self.router.url.path.rstrip("/")
        back = f"&returnUrl={quote(path, safe='/')}" if path and path != screen.list_route else ""
        return [rx.toast.success(prefs.say("Successfully added")),
                rx.redirect(f"{screen.edit_url(record)}?mode=add{back}")]

    @rx.event
    async def upload(self, files: list[rx.UploadFile]):
        """Upload (.xlsx): every row through add-X's rules, all or none (services/uploads.py);
        then the list again. Messages: "{title} uploaded successfully, refreshing the page",
        "{title} failed to upload: %s" (for users), or "File failed to upload"."""
        screen, prefs = self._screen, await self.get_state(Prefs)
        if not files:
            return None  # the picker refused the file: upload_rejected says so
        if not screen.upload or len(files) != 1 or (files[0].size or 0) > uploads.MAX_UPLOAD_BYTES:
            return rx.toast.error(prefs.say("File failed to upload"))
        upload, router = files[0], self.router

        def run() -> None:  # on a worker thread: a large file takes a while
            with session_scope() as db:
                uploads.import_workbook(db, viewer(db, router), uploads.uploadable(screen.key), upload.file,
                                        upload.filename or "")

        try:
            await asyncio.to_thread(run)
        except ServiceError as exc:
            return rx.toast.error(prefs.say(f"{screen.title} failed to upload: %s", prefs.say(exc.template,
                                                                                              *exc.args_)))
        except OSError:
            return rx.toast.error(prefs.say("File failed to upload"))
        await self._load()
        return rx.toast.success(prefs.say(f"{screen.title} uploaded successfully, refreshing the page"))

    @rx.event
    async def upload_rejected(self, rejected: list[dict]):
        """A file the picker refused (not .xlsx, or more than one)."""
        prefs = await self.get_state(Prefs)
        return rx.toast.error(prefs.say("File failed to upload"))

    @rx.event
    def ask_delete(self, key: str, label: str):
        self.deleting, self.deleting_label = key, label

    @rx.event
    def cancel_delete(self):
        self.deleting = self.deleting_label = ""

    @rx.event
    async def confirm_delete(self):
        screen, key = self._screen, self.deleting
        self.deleting = self.deleting_label = ""
        prefs = await self.get_state(Prefs)
        owner, _, name = key.partition("/")
        try:
            with session_scope() as db:
                crud.delete_record(db, viewer(db, self.router), screen.kind, owner, name)
        except ServiceError as exc:
            return rx.toast.error(prefs.say("Failed to delete: %s", prefs.say(exc.template, *exc.args_)))
        await self._reload_after_removal()
        return rx.toast.success(prefs.say("Successfully deleted"))

    async def _reload_after_removal(self):
        """After a row went (deleted, or taken out of the group shown)."""
        if len(self.rows) == 1 and self.page > 1:
            self.page -= 1  # the last row of a page above the first: step back a page
        await self._load()


def _route_organization(path: str, screen: Screen) -> str:
    return _route_scope(path, screen)[0]


def _route_scope(path: str, screen: Screen) -> tuple[str, str]:
    """(organization, group) a list route is nested in: /organizations/{org}/users →
    (org, ""); the group tree's users, /trees/{org} and /trees/{org}/{group}."""
    parts = [unquote(p) for p in path.split("/") if p]
    if len(parts) == 3 and parts[0] == "organizations" and f"/{parts[2]}" == screen.list_route:
        return parts[1], ""
    if parts[:1] == ["trees"] and len(parts) in (2, 3) and screen.key == "user":
        return parts[1], parts[2] if len(parts) == 3 else ""
    return "", ""


def _display(screen: Screen, record: dict[str, Any], me: str) -> dict[str, str]:
    row = {c.key: cell(c, record.get(c.key)) for c in screen.columns}
    for c in screen.columns:
        if c.link:
            row[f"{c.key}__href"] = link(c.link, record)
    row["__key"] = f"{record.get('owner', '')}/{record.get('name', '')}"
    row["__edit"] = screen.edit_url(record)
    row["__protected"] = "true" if screen.protected(record, me) else "false"
    return row
