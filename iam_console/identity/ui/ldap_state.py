"""The LDAP sync page: the directory's users, ten to a page.

The state holds the visible page and the uuids selected, never the directory:
each page, sort or filter reads the directory again through
identity/ldap.directory_page (a stream), and Sync sends only the uuids, the
service reading the selected entries from the directory itself. Reading and
syncing run as background events, in a worker thread: a large directory never
holds the session's other events."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import reflex as rx

from iam_console.i18n import translate
from iam_console.identity import ldap
from iam_console.ui.state.listing import Paging
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import REFUSALS, call, in_thread, message

PAGE_SIZE = 10  # the pager's first size
ALL_GROUPS = "__all__"


def _display(user: dict[str, str], synced: dict[str, str], organization: str) -> dict[str, str]:
    name = synced.get(user["uuid"], "")
    return {**{k: user.get(k, "") for k in ("uuid", "cn", "uid", "uidNumber", "groupId", "email", "mobile",
                                            "address")},
            "__synced": "true" if name else "false",
            "__href": f"/users/{quote(organization, safe='')}/{quote(name, safe='')}" if name else ""}


def _read(owner: str, name: str, args: dict[str, Any]):
    """The work of reading one page of the directory."""
    def read(db, actor) -> ldap.DirectoryPage:
        return ldap.directory_page(db, actor, owner, name, **args)
    return read


class LdapSync(Paging, rx.State):
    organization: str = ""
    ldap_id: str = ""
    server_name: str = ""
    rows: list[dict[str, str]] = []
    sort_field: str = ""
    sort_order: str = ""  # "ascend", "descend" or "" (the directory's order)
    group_id: str = ""
    group_ids: list[str] = []
    selected: list[str] = []  # uuids, kept across pages
    loading: bool = False
    syncing: bool = False
    confirming: bool = False
    error: str = ""

    @rx.var
    def selected_text(self) -> str:
        """"3 selected" in the viewer's language (a counted message: i18n translate)."""
        return translate("%d selected", self._language, len(self.selected))

    @rx.var
    def selectable_on_page(self) -> list[str]:
        return [r["uuid"] for r in self.rows if r["__synced"] != "true"]

    @rx.var
    def page_all_selected(self) -> bool:
        mine = [r["uuid"] for r in self.rows if r["__synced"] != "true"]
        return bool(mine) and all(u in self.selected for u in mine)

    @rx.event
    async def open(self):
        """on_load: /ldap/sync/{organization}/{ldapId}. The heading names the server (its ID when it
        has no name) from the record, before and whether or not its directory answers."""
        parts = [p for p in self.router.url.path.split("/") if p]
        self.organization, self.ldap_id = (parts[-2], parts[-1]) if len(parts) >= 4 else ("", "")
        self.page, self.page_size, self.sort_field, self.sort_order, self.group_id = 1, PAGE_SIZE, "", "", ""
        self.rows, self.total, self.selected, self.error, self.server_name = [], 0, [], "", ""
        self.confirming = False
        await self._read_language()
        owner, ident = self.organization, self.ldap_id
        named = await call(self, lambda db, actor: ldap.server(db, actor, owner, ident).server_name,
                           forbidden_page=True, quiet=True)
        if named.failed:  # refused: the 403 page; missing: said in place, no directory to read
            if named.event is not None:
                return named.event
            self.error = await message(self, named.error)
            return None
        self.server_name = named.value or self.ldap_id
        return LdapSync.load

    @rx.event(background=True)
    async def load(self):
        async with self:
            self.loading = True
            target = (self.router, self.organization, self.ldap_id)
            args = {"page": self.page, "page_size": self.page_size, "sort_field": self.sort_field,
                    "sort_order": self.sort_order, "group_id": self.group_id}
        read = await in_thread(target[0], _read(target[1], target[2], args))  # a directory may be slow
        async with self:
            self.loading = False
            if read.failed and read.error.template in REFUSALS:
                return rx.redirect("/403")
            if read.failed:
                self.error = await message(self, read.error)
                self.rows, self.total = [], 0
                return
            found = read.value
            self.error = ""
            self.rows = [_display(u, found.synced, self.organization) for u in found.rows]
            self.total, self.group_ids = found.total, found.group_ids
            # a user synced meanwhile (elsewhere) cannot stay selected
            self.selected = [u for u in self.selected if u not in found.synced]

    @rx.event
    def sort(self, field: str):
        if field not in ldap.SORTABLE:
            return None
        if self.sort_field != field:
            self.sort_field, self.sort_order = field, "ascend"
        else:
            self.sort_order = {"ascend": "descend", "descend": ""}.get(self.sort_order, "ascend")
            if not self.sort_order:
                self.sort_field = ""
        self.page = 1
        return LdapSync.load

    @rx.event
    def filter_group(self, value: str):
        self.group_id = "" if value == ALL_GROUPS else value[:100]
        self.page = 1
        return LdapSync.load

    async def _turned(self):
        return LdapSync.load

    @rx.event
    def toggle(self, uuid: str, on: bool):
        if uuid not in self.selectable_on_page and uuid not in self.selected:
            return  # a synced row cannot be selected
        if on and uuid not in self.selected:
            self.selected = [*self.selected, uuid]
        elif not on:
            self.selected = [u for u in self.selected if u != uuid]

    @rx.event
    def toggle_page(self, on: bool):
        mine = set(self.selectable_on_page)
        kept = [u for u in self.selected if u not in mine]
        self.selected = kept + sorted(mine) if on else kept

    @rx.event
    async def ask_sync(self):
        if not self.selected:
            prefs = await self.get_state(Prefs)
            return rx.toast.error(prefs.say("Please select al least 1 user first"))
        self.confirming = True
        return None

    @rx.event
    def cancel_sync(self):
        self.confirming = False

    @rx.event(background=True)
    async def confirm_sync(self):
        async with self:
            self.confirming, self.syncing = False, True
            router, uuids, organization = self.router, list(self.selected), self.organization
        ldap_id = self.ldap_id
        synced = await in_thread(router, lambda db, actor: ldap.sync_selected(db, actor, organization, ldap_id, uuids))
        async with self:
            self.syncing = False
            prefs = await self.get_state(Prefs)
            if synced.failed:
                return rx.toast.error(await message(self, synced.error))
            result = synced.value
            self.selected = []
            messages = []
            if result.exist:
                messages.append(rx.toast.error(prefs.say("User [%s] is already exist",
                                                         ", ".join(u["cn"] for u in result.exist))))
            if result.failed:
                messages.append(rx.toast.error(prefs.say("Sync [%s] failed",
                                                         ", ".join(u.get("cn", "") for u in result.failed))))
            if messages:
                return [*messages, LdapSync.load]
            # all went well, on to the organization's users
            return [rx.toast.success(prefs.say("Successfully synced %d users", result.added)),
                    rx.redirect(f"/organizations/{quote(organization, safe='')}/users")]
