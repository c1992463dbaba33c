"""LDAP servers: the edit page, a Screen over the generic
edit machinery, and the sync page. Both are reached from the
organization page's LDAP table, not from the menu."""

from __future__ import annotations

import reflex as rx

from iam_console.core.kinds import choices
from iam_console.identity import groups
from iam_console.identity.ui.ldap_state import ALL_GROUPS, LdapSync
from iam_console.ui.components.dialogs import confirm
from iam_console.ui.components.listing import pager
from iam_console.ui.routes import page
from iam_console.ui.screens import Column, Field, Messages, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t


def _default_groups(db, actor, record) -> list[tuple[str, str, str]]:
    """Empty (the default), or a group of the server's organization, with its type's icon."""
    owner = record["owner"]
    return [("", "Default", "")] + [(f"{owner}/{node.name}", f"{owner}/{node.name}", node.type)
                                    for node in groups.tree(db, actor, owner)]


def _auto_sync_warning() -> rx.Component:
    # the browser compares the typed text as a number ("5" > 0); "" and "0" show nothing
    return rx.cond(Editing.values["autoSync"].to(int) > 0, rx.callout(
        t("The Auto Sync option will sync all users to specify organization"), icon="triangle-alert",
        color_scheme="orange", size="1", margin_top="0.5em", id="ldap-auto-sync-warning"))


LDAP = screen(Screen(
    key="ldap", title="LDAP server", list_route="/organizations", edit_route="/ldap/{owner}/{id}",
    exit_route="/organizations/{owner}", name_label="ID", name_locked=lambda record: True,
    # the LDAP pages' own messages; a server deleted meanwhile fails its delete
    messages=Messages(saved="Update LDAP server success", save_failed="Update LDAP server failed: %s",
                      add_failed="Add LDAP server failed", delete_failed="Delete LDAP server failed",
                      unaffected_delete_fails=True),
    edit_title="LDAP server", list_page=False, actions=lambda: (_sync_button(),),
    page_size=100,  # no list page of its own: its organization's page lists its handful of servers
    columns=(
        Column("serverName", "Server name", sortable=False, searchable=False),
        Column("host", "Server host", sortable=False, searchable=False),
        Column("port", "Server port", sortable=False, searchable=False),
        Column("baseDn", "Base DN", sortable=False, searchable=False),
        Column("autoSync", "Auto sync", sortable=False, searchable=False),
        Column("lastSync", "Last sync", "time", sortable=False, searchable=False),
    ),
    fields=(
        Field("serverName", "Server name"),
        Field("host", "Server host"),
        Field("port", "Server port", "number", minimum=0, maximum=65535),
        Field("enableSsl", "Enable SSL", "switch"),
        Field("allowSelfSignedCert", "Allow self-signed certificate", "switch",
              shown_when=lambda values, flags: flags["enableSsl"]),
        Field("baseDn", "Base DN"),
        Field("filter", "Search filter"),
        Field("filterFields", "Filter fields", "checks", options=choices("ldap", "filterFields")),
        Field("username", "Admin"),
        Field("password", "Admin password", "password"),
        Field("passwordType", "Password type", "select", options=choices("ldap", "passwordType")),
        Field("defaultGroup", "Default group", "select", choices=_default_groups),
        Field("autoSync", "Auto sync", "number", minimum=0, addon=_auto_sync_warning),  # minutes; 0 disables
    ),
))


def _sync_button() -> rx.Component:
    return rx.link(rx.button(rx.icon("refresh-cw", size=14), t("Sync LDAP"), variant="outline", id="ldap-sync-open"),
                   href="/ldap/sync/" + Editing.saved_owner + "/" + Editing.saved_name)



# --- the sync page ---

COLUMNS = (("cn", "CN"), ("uid", "Uid"), ("uidNumber", "UidNumber"), ("groupId", "Group ID"), ("email", "Email"),
           ("mobile", "Phone"), ("address", "Address"))


def _header(key: str, label: str) -> rx.Component:
    arrow = rx.cond(
        LdapSync.sort_field == key,
        rx.cond(LdapSync.sort_order == "ascend", rx.icon("arrow-up", size=12), rx.icon("arrow-down", size=12)),
        rx.icon("arrow-up-down", size=12, opacity="0.35"),
    )
    title = rx.hstack(t(label), arrow, align="center", spacing="1", cursor="pointer", on_click=LdapSync.sort(key),
                      id=f"ldap-sort-{key}")
    if key != "groupId":
        return rx.table.column_header_cell(title)
    return rx.table.column_header_cell(rx.hstack(title, rx.select.root(
        rx.select.trigger(placeholder=t("All"), id="ldap-filter-group", aria_label=t("Group")),
        rx.select.content(rx.select.item(t("All"), value=ALL_GROUPS),
                          rx.foreach(LdapSync.group_ids, lambda g: rx.select.item(g, value=g))),
        value=rx.cond(LdapSync.group_id == "", ALL_GROUPS, LdapSync.group_id), on_change=LdapSync.filter_group,
        size="1"), align="center", spacing="2"))


def _row(row: rx.Var) -> rx.Component:
    synced = row["__synced"] == "true"
    tag = rx.cond(synced, rx.badge(t("synced"), color_scheme="green", class_name="ldap-synced"),
                  rx.badge(t("unsynced"), color_scheme="red", class_name="ldap-unsynced"))
    uid = rx.cond(synced, rx.link(row["uid"], href=row["__href"], class_name="ldap-user-link"), rx.text(row["uid"]))
    return rx.table.row(
        rx.table.cell(rx.checkbox(checked=LdapSync.selected.contains(row["uuid"]), disabled=synced,
                                  on_change=lambda on: LdapSync.toggle(row["uuid"], on), class_name="ldap-select",
                                  aria_label=row["uid"])),
        rx.table.cell(rx.hstack(rx.text(row["cn"]), tag, spacing="2", align="center")),
        rx.table.cell(uid),
        *[rx.table.cell(rx.text(row[key])) for key, _ in COLUMNS[2:]],
        custom_attrs={"data-uid": row["uid"]}, class_name="ldap-row",
    )


def _sync_page() -> rx.Component:
    table = rx.table.root(
        rx.table.header(rx.table.row(
            rx.table.column_header_cell(rx.checkbox(checked=LdapSync.page_all_selected,
                                                    disabled=LdapSync.selectable_on_page.length() == 0,
                                                    on_change=LdapSync.toggle_page, id="ldap-select-page",
                                                    aria_label=t("All"))),
            *[_header(key, label) for key, label in COLUMNS])),
        rx.table.body(rx.foreach(LdapSync.rows, _row)),
        width="100%", size="1", variant="surface", id="ldap-users",
    )
    return rx.vstack(
        rx.hstack(
            rx.heading(t("LDAP sync") + ": " + LdapSync.server_name, size="5", id="ldap-sync-heading"), rx.spacer(),
            rx.button(rx.icon("refresh-cw", size=14), t("Sync"), on_click=LdapSync.ask_sync,
                      disabled=LdapSync.selected.length() == 0, loading=LdapSync.syncing, id="ldap-sync"),
            rx.link(rx.button(t("Edit LDAP"), variant="soft"), href="/ldap/" + LdapSync.organization + "/"
                    + LdapSync.ldap_id, id="ldap-edit"),
            rx.link(rx.button(t("Save & Exit"), variant="soft"), href="/organizations/" + LdapSync.organization,
                    id="ldap-exit"),
            width="100%", align="center", spacing="2",
        ),
        rx.text(LdapSync.selected_text, size="2",
                id="ldap-selected"),
        rx.cond(LdapSync.error != "", rx.callout(LdapSync.error, icon="triangle-alert", color_scheme="red",
                                                 id="ldap-error")),
        rx.cond(LdapSync.loading & (LdapSync.rows.length() == 0), rx.spinner(id="ldap-loading")),
        rx.box(table, overflow_x="auto", width="100%"),
        pager(LdapSync, prefix="ldap-"),
        confirm(t("Please confirm to sync selected users"), on_ok=LdapSync.confirm_sync,
                on_cancel=LdapSync.cancel_sync, open_=LdapSync.confirming, ident="ldap-sync"),
        spacing="3", width="100%",
    )


page("/ldap/sync/[p0]/[p1]", "LDAP sync", on_load=LdapSync.open)(_sync_page)
