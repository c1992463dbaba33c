"""Casbin adapters: list and edit, the global admin's alone (as the menu shows them).

- useSameDb: on, the policies live in the server's own database and the connection fields are
  cleared and hidden; off, they are filled to start from (authorization/kinds/adapter.py).
- Database types and the port range are the kind's rules, checked on every write.
- Test DB connection reads the saved adapter's table as get-policies?adapterId= does (one path,
  authorization/enforcement.py and policy_store.py), on a worker thread: 'Connect successfully' or
  'Failed to connect: {msg}'. It is enabled only while the form's organization is the one in the
  page's address (the saved adapter's).
- The password is masked in every answer (the kind's secret); the built-in adapters are read-only
  and cannot be deleted."""

from __future__ import annotations

import reflex as rx

from iam_console.authorization import enforcement
from iam_console.authorization.kinds.adapter import same_db_switched
from iam_console.authorization.ui.models import built_in, read_only_when_built_in
from iam_console.core.kinds import choices
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import in_thread, message, say
from iam_console.ui.text import t

CONNECTED, FAILED = "Connect successfully", "Failed to connect: %s"


def _connection(values, flags):
    return ~flags["useSameDb"]


ADAPTERS = screen(Screen(
    key="adapter", title="Adapters", list_route="/adapters", edit_route="/adapters/{owner}/{name}",
    edit_title="Adapter", global_admins_only=True, owner_picker=True, name_locked=built_in, owner_locked=built_in,
    protected=lambda record, me: built_in(record),
    restrictions=read_only_when_built_in(lambda: ADAPTERS.fields),
    parts=lambda: (_test_button(),),
    columns=(
        Column("name", "Name", link="/adapters/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("table", "Table"),
        Column("useSameDb", "Use same DB", "bool", searchable=False),
        Column("type", "Type", filters=choices("adapter", "type")),
        Column("databaseType", "Database type", filters=choices("adapter", "databaseType")),
        Column("host", "Host"),
        Column("port", "Port", searchable=False),
        Column("user", "User"),
        Column("database", "Database"),
    ),
    fields=(
        Field("table", "Table"),
        Field("useSameDb", "Use same DB", "switch", then=same_db_switched),
        Field("type", "Type", "select", options=choices("adapter", "type"), shown_when=_connection),
        Field("databaseType", "Database type", "select", options=choices("adapter", "databaseType"),
              shown_when=_connection),
        Field("host", "Host", shown_when=_connection),
        Field("port", "Port", "number", minimum=0, maximum=65535, shown_when=_connection),
        Field("user", "User", shown_when=_connection),
        Field("password", "Password", "password", shown_when=_connection),
        Field("database", "Database", shown_when=_connection),
    ),
))


class AdapterTest(rx.State):
    testing: bool = False

    @rx.event(background=True)
    async def run(self):
        """The saved adapter's database, reached as get-policies?adapterId= reaches it."""
        async with self:
            editing = await self.get_state(Editing)
            if self.testing or editing.screen_key != ADAPTERS.key or editing.values.get("owner") != editing.saved_owner:
                return
            adapter_id, router, self.testing = f"{editing.saved_owner}/{editing.saved_name}", self.router, True
        done = await in_thread(router, lambda db, actor: enforcement.policies(db, actor, "", adapter_id))
        async with self:
            self.testing = False
            if not done.failed:
                toast = rx.toast.success(await say(self, CONNECTED))
            elif done.error.template == FAILED:  # the connection's own failure, already worded so
                toast = rx.toast.error(await message(self, done.error))
            else:
                toast = rx.toast.error(await say(self, FAILED, await message(self, done.error)))
        yield toast


def _test_button() -> rx.Component:
    return rx.box(rx.button(
        rx.icon("database", size=14), t("Test DB connection"), on_click=AdapterTest.run, variant="outline",
        loading=AdapterTest.testing, id="adapter-test", type="button",
        disabled=rx.cond(Editing.values.contains("owner"), Editing.values["owner"], "") != Editing.saved_owner),
        margin_top="1em")
