"""The states of lists: `Lists` is a mixin that any state uses to show a
Screen's records, scoped (the list pages' `Listing`; the users of a group on the
tree page; the LDAP servers on their organization's page). A list holds only the
visible page, as display strings; the rows come from the service layer with the
viewer's own rights."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, unquote, urlencode

import reflex as rx

from iam_console.core import builtin as b
from iam_console.core import crud, defaults, policy, wire
from iam_console.core.errors import ServiceError
from iam_console.core.resources import Kind, Ownership
from iam_console.i18n import DEFAULT_LANGUAGE
from iam_console.i18n.formats import count_text
from iam_console.models.base import Named, wire_name
from iam_console.ui.screens import SCREENS, Screen, cell, link
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.prefs import ALL_ORGANIZATIONS, Prefs
from iam_console.ui.state.service import REFUSALS, audit_request, call, failure, in_thread, message, say

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


class Lists(Paging, mixin=True):
    total_text: str = "0"  # the total as the viewer's language writes it (i18n/formats.py)
    """A Screen's records, a page at a time, with sorting, search, Add and Delete.
    A state using it says which screen (`screen_key`) and may narrow the list with the
    hooks below: `scope_organization` (whose records), `_scope_params` (more filters of
    the list call), `_new_fields` (what a record added from it holds) and `_opens_added`."""

    screen_key: str = ""
    rows: list[dict[str, str]] = []
    sort_field: str = ""
    sort_order: str = ""  # "ascend", "descend" or "" (the default order)
    search_field: str = ""
    search_value: str = ""
    column_filters: dict[str, str] = {}  # the filters chosen above the list (column key: value), on top of the search
    scope_organization: str = ""  # the records of this organization (else the viewer's, or the header's)
    error: str = ""
    not_authorized: bool = False
    deleting: str = ""  # the row key waiting for the confirmation
    deleting_label: str = ""
    hidden_columns: list[str] = []  # the columns this viewer is not shown (Column.hidden_for)
    may_add: bool = False  # the viewer may add a record here (policy.allows): Add is shown
    export_href: str = ""  # the screen's CSV export of the list as it is filtered now

    @property
    def _screen(self) -> Screen:
        return SCREENS[self.screen_key]

    def _scope_params(self) -> dict[str, str]:
        """More parameters of the list call (a group's users: groupName)."""
        return {}

    def _new_fields(self, owner: str) -> dict[str, Any]:
        """Fields a record added from this list starts with, over the kind's defaults."""
        return {}

    def _opens_added(self) -> bool:
        """Add opens the new record's edit page in add mode; a list inside another page
        may keep the new record in place instead."""
        return True

    def _start(self, screen_key: str, organization: str) -> None:
        """A fresh list of that screen: the first page, unfiltered."""
        screen = SCREENS[screen_key]
        if screen_key != self.screen_key:
            self.sort_field, self.sort_order = "", ""
            self.page_size = screen.page_size
        self.page, self.search_field, self.search_value, self.column_filters = 1, "", "", {}
        self.screen_key, self.scope_organization = screen_key, organization

    async def _chosen(self) -> str:
        """The organization the header's selector shows ("" for all)."""
        prefs = await self.get_state(Prefs)
        return "" if prefs.organization == ALL_ORGANIZATIONS else prefs.organization

    def _owner(self, actor, chosen: str) -> str:
        """Whose records: the scope's organization, else the global admin's chosen one."""
        if self.scope_organization:
            return self.scope_organization
        return chosen if actor.is_global_admin else actor.organization

    def _params(self) -> dict[str, str]:
        params = {"p": str(self.page), "pageSize": str(self.page_size)}
        if self.sort_field and self.sort_order:
            params |= {"sortField": self.sort_field, "sortOrder": self.sort_order}
        if self.search_field and self.search_value:
            params |= {"field": self.search_field, "value": self.search_value}
        return params | self._scope_params()

    def _fetch(self, db, actor, owner: str, language: str = DEFAULT_LANGUAGE) -> None:
        """The page now shown, read with the viewer's rights; a ServiceError passes through."""
        screen = self._screen
        if screen.global_admins_only and not actor.is_global_admin:
            raise ServiceError(policy.UNAUTHORIZED)
        filters = (screen.list_scope(actor, owner) if screen.list_scope
                   else {"owner": "", "organization": owner} if screen.kind.ownership is Ownership.ADMIN
                   else {"owner": owner, "organization": ""})
        self.error, self.not_authorized = "", False
        params = self._params()
        if screen.reads:  # a kind with a service of its own (the webhook event log)
            page = screen.reads(db, actor, params | {k: v for k, v in filters.items() if v} | self.column_filters)
        else:
            page = crud.list_records(db, actor, screen.kind, params, equal=self.column_filters, **filters)
        self.hidden_columns = [c.key for c in screen.columns if c.hidden_for and c.hidden_for(actor)]
        self.rows = [_display(screen, row, actor.id, policy.allows(actor, screen.kind, _probe(screen.kind, row), None),
                              language) for row in page.rows]
        self.may_add = policy.allows(actor, screen.kind, None, _new_probe(screen.kind, owner or actor.organization))
        if screen.export:
            scope = {"organizationName": filters.get("owner") or filters.get("organization") or ""}
            # the export reads the filters as parameters of their own (get-records' method, action...)
            shown = params | self.column_filters | scope
            unpaged = {k: v for k, v in shown.items() if v and k not in ("p", "pageSize")}
            self.export_href = f"{screen.export}?{urlencode(unpaged)}" if unpaged else screen.export
        self.total = page.total or 0
        self.total_text = count_text(self.total, language)
        self.page = page.page or self.page

    async def _refresh(self):
        chosen, language = await self._chosen(), (await self.get_state(Prefs)).lang
        read = await call(self, lambda db, actor: self._fetch(db, actor, self._owner(actor, chosen), language),
                          quiet=True)
        if read.failed:
            self.rows, self.total = [], 0
            if read.error.template in REFUSALS:
                self.not_authorized = True
            else:
                self.error = await message(self, read.error)

    async def _turned(self):
        return await self._refresh()

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
        return await self._refresh()

    @rx.event
    def set_search_field(self, field: str):
        self.search_field = field

    @rx.event
    async def search(self, value: str):
        self.search_value, self.page = value[:100], 1
        if not self.search_field and self._screen.columns:
            self.search_field = next(c.key for c in self._screen.columns if c.searchable)
        return await self._refresh()

    @rx.event
    async def filter(self, field: str, value: str):
        """A column's filter: rows holding exactly that value, together with the search and
        the other filters ("All" lifts it)."""
        chosen = {key: v for key, v in self.column_filters.items() if key != field}
        self.column_filters = chosen if value == ALL_ORGANIZATIONS else chosen | {field: value[:100]}
        self.page = 1
        return await self._refresh()

    @rx.event
    async def add(self):
        """Add: a record with generated defaults, opened in add mode (or kept in the list)."""
        screen, chosen, request = self._screen, await self._chosen(), await audit_request(self)

        def add(db, actor):
            owner = self._owner(actor, chosen) or actor.organization
            return add_new(db, actor, screen, owner, self._new_fields(owner), request)

        added = await call(self, add, failed=screen.messages.add_failed)
        if added.failed:
            return added.event
        record, once = added.value
        if once:  # shown by the edit page it opens, and nowhere else
            prefs = await self.get_state(Prefs)
            (await self.get_state(Editing)).hand_over(
                screen.edit_url(record), [[key, prefs.say(label), value] for key, label, value in once])
        toast = rx.toast.success(await say(self, "Successfully added"))
        if not self._opens_added():
            await self._refresh()
            return toast
        path = self.router.url.path.rstrip("/")
        back = f"&returnUrl={quote(path, safe='/')}" if path and path != screen.list_route else ""
        return [toast, rx.redirect(f"{screen.edit_url(record)}?mode=add{back}")]

    @rx.event
    async def upload(self, files: list[rx.UploadFile]):
        """The screen's Upload: one file, through the service (`Screen.upload.run`); then the list
        again. A refusal shows the service's message (`Upload.failed`); a file the picker or the
        size limit refuses, "File failed to upload"."""
        spec = self._screen.upload
        if not files:
            return None  # the picker refused the file: upload_rejected says so
        if spec is None or len(files) != 1 or (files[0].size or 0) > spec.max_bytes:
            return rx.toast.error(await say(self, "File failed to upload"))
        upload, chosen = files[0], await self._chosen()

        def run(db, actor):
            return spec.run(db, actor, self._owner(actor, chosen) or actor.organization, upload.filename or "",
                            upload.file)

        try:  # on a worker thread: a large import, or a bucket far away, takes a while
            done = await in_thread(self.router, run)
        except OSError:
            return rx.toast.error(await say(self, "File failed to upload"))
        if done.failed:
            return await failure(self, done.error, spec.failed)
        await self._refresh()
        return rx.toast.success(await say(self, spec.uploaded))

    @rx.event
    async def upload_rejected(self, rejected: list[dict]):
        """A file the picker refused (not .xlsx, or more than one)."""
        return rx.toast.error(await say(self, "File failed to upload"))

    @rx.event
    async def press(self, action: str, key: str):
        """A row's declared button that calls the service (Screen.row_buttons: a webhook event's
        Replay): its answer is the toast, and the list is read again."""
        spec = next((a for a in self._screen.row_buttons if a.key == action and a.run), None)
        if spec is None:
            return None
        done = await call(self, lambda db, actor: spec.run(db, actor, key), failed=spec.failed)
        if done.failed:
            return done.event
        await self._refresh()
        return rx.toast.success(await say(self, done.value))

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
        owner, _, name = key.partition("/")
        request = await audit_request(self)
        done = await call(self, lambda db, actor: screen.remove(db, actor, key) if screen.remove
                          else crud.delete_record(db, actor, screen.kind, owner, name, request),
                          failed=screen.messages.delete_failed)
        if not done.failed and done.value != crud.AFFECTED and screen.messages.unaffected_delete_fails:
            await self._refresh()
            return rx.toast.error(await say(self, screen.messages.delete_failed.replace(": %s", "")))
        if done.failed:
            return done.event
        await self._reload_after_removal()
        return rx.toast.success(await say(self, "Successfully deleted"))

    async def _reload_after_removal(self):
        """After a row went (deleted, or taken out of the group shown)."""
        if len(self.rows) == 1 and self.page > 1:
            self.page -= 1  # the last row of a page above the first: step back a page
        await self._refresh()


class Listing(Lists, rx.State):
    """The list pages (one at a time in a browser tab, so one state serves every screen)."""

    @rx.event
    async def open(self, screen_key: str):
        """on_load: a fresh list (the organization of /organizations/{org}/... from the route);
        a visit (or a new organization in the header) starts at the first page, unfiltered."""
        self._start(screen_key, _route_organization(self.router.url.path, SCREENS[screen_key]))
        return await self._refresh()


def add_new(db, actor, screen: Screen, owner: str, fields: dict[str, Any],
            request: crud.Request = crud.NO_REQUEST) -> tuple[dict[str, Any], list[list[str]]]:
    """The list's Add: a record of `owner` with generated defaults (and `fields`), added as add-X
    adds it; and what its answer holds that is shown once (Screen.shown_once), [key, label, value]."""
    record = defaults.new_record(db, actor, screen.key, owner) | fields
    _, answered = crud.add_answer(db, actor, screen.kind, record, request)
    once = answered if isinstance(answered, dict) else {}
    return record, [[key, label, str(once[key])] for key, label in screen.shown_once
                    if once.get(key) and once[key] != wire.MASK]


def _route_organization(path: str, screen: Screen) -> str:
    """The organization a list route is nested in: /organizations/{org}/users → org."""
    parts = [unquote(p) for p in path.split("/") if p]
    if len(parts) == 3 and parts[0] == "organizations" and f"/{parts[2]}" == screen.list_route:
        return parts[1]
    return ""


def _probe(kind: Kind, record: dict[str, Any]) -> Named:
    """A listed record as a row the access policy judges (never saved)."""
    row = kind.model()
    try:
        wire.apply(row, record)
    except ServiceError:  # a field shown masked: the policy reads only owner, name and organization
        row = kind.model(owner=record.get("owner", ""), name=record.get(wire_name(kind.model, "name"), ""))
        setattr(row, kind.organization_attr, record.get(wire_name(kind.model, kind.organization_attr), ""))
    return row


def _new_probe(kind: Kind, organization: str) -> Named:
    """A record the list's Add would make in that organization, as the access policy judges it."""
    row = kind.model(owner=b.ADMIN_OWNER if kind.ownership is Ownership.ADMIN else organization, name="")
    setattr(row, kind.organization_attr, organization)
    return row


def _display(screen: Screen, record: dict[str, Any], me: str, deletable: bool = True,
             language: str = DEFAULT_LANGUAGE) -> dict[str, str]:
    name = str(record.get(wire_name(screen.kind.model, "name"), ""))
    row = {c.key: cell(c, c.value(record) if c.value else record.get(c.key), language) for c in screen.columns}
    for c in screen.columns:
        if c.link and c.kind == "links":  # each entry's href is this and the entry
            row[f"{c.key}__href"] = link(c.link, {**record, "item": ""}) if isinstance(c.link, str) else ""
        elif c.link:
            row[f"{c.key}__href"] = link(c.link, record)
        if c.shown_when:
            row[f"{c.key}__shown"] = "true" if c.shown_when(record) else "false"
        if c.link and any(row[c.key] == raw for raw, _ in c.shown_as):
            row[f"{c.key}__href"] = ""  # a value shown as a catalog text names no record to link to
        if c.kind == "media":  # what the URL holds: the record's fileType (image, video, ...)
            row[f"{c.key}__media"] = str(record.get("fileType", ""))
    for action in screen.row_buttons:
        row[f"__{action.key}"] = "true" if action.shown_for is None or action.shown_for(record) else "false"
        if action.link:
            row[f"__{action.key}__href"] = link(action.link, record)
    row["__key"] = screen.row_key(record) if screen.row_key else f"{record.get('owner', '')}/{name}"
    row["__name"] = name
    row["__edit"] = screen.edit_url(record)
    # Delete is disabled where the server would refuse it (a shared record to an organization admin)
    row["__protected"] = "true" if screen.protected(record, me) or not deletable else "false"
    return row
