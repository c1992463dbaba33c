"""Syncers: list and edit (owner always admin; the organization is the global admin's to change).
The type Keycloak fills Keycloak's column mapping and user table, another type clears the columns;
postgres sets the SSL mode; the SSH options are for mysql, mssql and postgres. The list's Sync
runs the syncer now (operations/syncers.py) in a worker thread."""

from __future__ import annotations

from functools import reduce
from typing import Any

import reflex as rx

from iam_console.operations import syncers
from iam_console.operations.kinds import syncer as kind
from iam_console.ui.screens import Cell, Column, Field, Screen, screen
from iam_console.ui.state.service import in_thread, message, say
from iam_console.ui.text import t


def _is(key: str, *values: str):
    return lambda v, f: reduce(lambda a, c: a | c, [v[key] == value for value in values])


def _type_change(value: str, values: dict[str, str]) -> dict[str, Any]:
    """Keycloak: its preset columns and user table; any other type: no columns."""
    if value == "Keycloak":
        return {"tableColumns": [dict(c) for c in syncers.KEYCLOAK_COLUMNS], "table": syncers.KEYCLOAK_TABLE}
    return {"tableColumns": []}


def _database_change(value: str) -> dict[str, Any]:
    changes: dict[str, Any] = {"sslMode": "disable" if value == "postgres" else ""}
    if value not in kind.SSH_DATABASES:
        changes["sshType"] = ""
    return changes


SSH = _is("databaseType", *kind.SSH_DATABASES)


def SSH_ON(v, f):
    return SSH(v, f) & _is("sshType", "password", "cert")(v, f)

COLUMNS = Field("tableColumns", "Table columns", "rows", movable=True, columns=(
    Cell("name", "Name"),
    Cell("type", "Type", "select", options=kind.COLUMN_TYPES, default="string"),
    Cell("casdoorName", "Casdoor column"),
    Cell("isKey", "Is key", "switch", key_row=True, default=False),
    Cell("isHashed", "Is hashed", "switch", default=True),
    Cell("values", "Values", "tags", default=[]),
))

SYNCERS = screen(Screen(
    key="syncer", title="Syncers", list_route="/syncers", edit_route="/syncers/{name}", edit_title="Syncer",
    row_actions=lambda row: _sync(row),
    columns=(
        Column("name", "Name", link="/syncers/{name}"),
        Column("organization", "Organization", link="/organizations/{organization}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("type", "Type", filters=kind.LIST_TYPES),
        Column("host", "Host"),
        Column("port", "Port", searchable=False),
        Column("user", "User"),
        Column("databaseType", "Database type", filters=kind.DATABASE_TYPES),
        Column("database", "Database"),
        Column("table", "Table"),
        Column("syncInterval", "Sync interval", searchable=False),
        Column("isReadOnly", "Read only", "bool", searchable=False),
        Column("isEnabled", "Enabled", "bool", searchable=False),
    ),
    fields=(
        Field("organization", "Organization", "pick", kind="organization", global_admin_only=True),
        Field("type", "Type", "select", options=kind.EDITOR_TYPES, then=_type_change),
        Field("databaseType", "Database type", "select", options=kind.DATABASE_TYPES, then=_database_change),
        Field("sslMode", "SSL mode", "select", options=kind.SSL_MODES, shown_when=_is("databaseType", "postgres")),
        Field("host", "Host"),
        Field("port", "Port", "number", minimum=0, maximum=65535),
        Field("user", "User"),
        Field("password", "Password", "password"),
        Field("sshType", "SSH type", "select", options=kind.SSH_TYPES, shown_when=SSH),
        Field("sshHost", "SSH host", shown_when=SSH_ON),
        Field("sshPort", "SSH port", "number", minimum=0, maximum=65535, shown_when=SSH_ON),
        Field("sshUser", "SSH user", shown_when=SSH_ON),
        Field("sshPassword", "SSH password", "password",
              shown_when=lambda v, f: SSH(v, f) & (v["sshType"] == "password")),
        Field("cert", "Cert", "pick", kind="cert", shown_when=lambda v, f: SSH(v, f) & (v["sshType"] == "cert")),
        Field("database", "Database"),
        Field("table", "Table"),
        COLUMNS,
        Field("affiliationTable", "Affiliation table"),
        Field("avatarBaseUrl", "Avatar base URL"),
        Field("errorText", "Error text", "textarea", locked_for=lambda record: True, rows=6),
        Field("syncInterval", "Sync interval", "number", minimum=0, help="Minutes between two automatic runs"),
        Field("isReadOnly", "Read only", "switch"),
        Field("isEnabled", "Enabled", "switch"),
    ),
))


class SyncerRows(rx.State):
    running: str = ""  # the key of the syncer being synced

    @rx.event(background=True)
    async def sync(self, key: str):
        owner, _, name = key.partition("/")
        async with self:
            if self.running:
                return
            self.running, router = key, self.router
        # a large table takes a while: the page stays live meanwhile
        done = await in_thread(router, lambda db, actor: syncers.run(db, actor, owner, name))
        async with self:
            self.running = ""
            if done.failed:
                reason = await message(self, done.error)
                return rx.toast.error(await say(self, "Syncer failed to sync users: %s", reason))
            return rx.toast.success(await say(self, "Successfully synced"))


def _sync(row: rx.Var) -> list[rx.Component]:
    return [rx.button(t("Sync"), size="1", variant="soft", class_name="syncer-sync",
                      loading=SyncerRows.running == row["__key"], disabled=SyncerRows.running != "",
                      on_click=SyncerRows.sync(row["__key"]))]

