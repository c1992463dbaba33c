"""Organizations: list and edit, with the edit page's own sections:
account items, MFA items, theme, navigation items and LDAP servers (their
states are in ui/state/organization.py)."""

from __future__ import annotations

import reflex as rx

from ...services import builtin as b
from ...services.kinds import choices
from ...services.kinds.organization import obfuscator_key
from ...services.navigation import MENU
from ..components.listing import sublist
from ..screens import Column, Field, Screen, screen
from ..state.organization import AccountItems, LdapServers, MfaItems, NavItems, Theme
from ..state.prefs import Prefs
from ..text import t
from .ldap import LDAP


def _built_in(record) -> bool:
    return record.get("name") == b.BUILT_IN_ORG


ORGANIZATIONS = screen(Screen(
    key="organization", title="Organizations", list_route="/organizations", edit_route="/organizations/{name}",
    add_global_admin_only=True, delete_global_admin_only=True, name_locked=_built_in,
    protected=lambda record, me: _built_in(record),
    # an organization admin's list holds their own organization only
    list_scope=lambda actor, owner: {"owner": "", "organization": owner if actor.is_global_admin
                                     else actor.organization},
    sections=(AccountItems, MfaItems, Theme, NavItems, LdapServers), edit_title="Organization",
    parts=lambda: (_navigation(), _account_items(), _mfa_items(), _theme(),
                   sublist(LDAP, LdapServers, "LDAP servers", "ldap")),
    columns=(
        Column("name", "Name", link="/organizations/{name}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("favicon", "Favicon", "avatar", sortable=False, searchable=False),
        Column("websiteUrl", "Website URL"),
        Column("passwordType", "Password type", filters=choices("organization", "passwordType")),
        Column("defaultApplication", "Default application"),
        Column("enableSoftDeletion", "Soft deletion", "bool", searchable=False),
        # the organization's users and its group tree
        Column("users", "Users", caption="View users", link="/organizations/{name}/users", sortable=False,
               searchable=False),
        Column("groups", "Groups", caption="Groups", link="/trees/{name}", sortable=False, searchable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        # disabling the dark logo clears its URL (the service does it again on save)
        Field("enableDarkLogo", "Enable dark logo", "switch", then=lambda on: {} if on else {"logoDark": ""}),
        Field("logo", "Logo"),
        Field("logoDark", "Logo dark", shown_when=lambda values, flags: flags["enableDarkLogo"]),
        Field("favicon", "Favicon"),
        Field("websiteUrl", "Website URL"),
        Field("passwordType", "Password type", "select", options=choices("organization", "passwordType")),
        Field("passwordSalt", "Password salt"),
        Field("passwordOptions", "Password complexity options", "list"),
        # an empty type is Plain; choosing a type resets the key to the type's default
        Field("passwordObfuscatorType", "Password obfuscator", "select",
              options=choices("organization", "passwordObfuscatorType"), empty="Plain",
              then=lambda kind: {"passwordObfuscatorKey": obfuscator_key(kind)}),
        Field("passwordObfuscatorKey", "Password obfuscator key",
              shown_when=lambda values, flags: (values["passwordObfuscatorType"] != "Plain")
              & (values["passwordObfuscatorType"] != "")),
        Field("passwordExpireDays", "Password expire days", "number", minimum=0),
        Field("countryCodes", "Supported country codes", "list"),
        Field("languages", "Languages", "list"),
        Field("defaultAvatar", "Default avatar"),
        Field("defaultApplication", "Default application"),
        Field("tags", "Tags", "list"),
        Field("masterPassword", "Master password", "password"),
        Field("defaultPassword", "Default password", "password"),
        Field("masterVerificationCode", "Master verification code"),
        Field("ipWhitelist", "IP whitelist"),
        Field("initScore", "Init score", "number"),
        Field("enableSoftDeletion", "Soft deletion", "switch"),
        Field("isProfilePublic", "Is profile public", "switch"),
        Field("useEmailAsUsername", "Use email as username", "switch"),
        Field("enableTour", "Enable tour", "switch"),
    ),
))


# --- helpers ---

def _label(value: rx.Var | str) -> rx.Var:
    """A value the catalog may translate (an item name, a rule), shown as is otherwise."""
    return Prefs.tr.get(value, value)


THEME_TYPE_LABELS = {"default": "Default", "dark": "Dark", "lark": "Lark", "comic": "Comic"}


def _choice(options, value, on_change, class_name: str, disabled=False) -> rx.Component:
    """A select of fixed options: values, or {value: catalog key}."""
    labels = options if isinstance(options, dict) else {option: option for option in options}
    return rx.select.root(
        rx.select.trigger(class_name=class_name, width="100%"),
        rx.select.content(*[rx.select.item(t(label), value=value) for value, label in labels.items()]),
        value=value, on_change=on_change, disabled=disabled, size="1",
    )


def _section(title: str, ident: str, *children: rx.Component, action: rx.Component | None = None) -> rx.Component:
    return rx.vstack(
        rx.hstack(rx.heading(t(title), size="3"), rx.spacer(), action or rx.fragment(), width="100%",
                  align="center"),
        *children,
        spacing="2", width="100%", padding_top="1em", border_top="1px solid var(--gray-a4)", id=ident,
    )


def _icon(icon: str, on_click, label: str, disabled=False, color_scheme: str = "gray") -> rx.Component:
    return rx.icon_button(rx.icon(icon, size=14), on_click=on_click, size="1", variant="soft", disabled=disabled,
                          color_scheme=color_scheme, aria_label=t(label), title=t(label))


# --- account items ---

def _account_row(row: rx.Var, index: rx.Var) -> rx.Component:
    name = rx.cond(
        row["__placeholder"] == "true",
        rx.select.root(
            rx.select.trigger(placeholder=t(b.ACCOUNT_ITEM_PLACEHOLDER), class_name="account-name", width="100%"),
            rx.select.content(rx.foreach(AccountItems.free_names,
                                         lambda n: rx.select.item(_label(n), value=n))),
            value="", on_change=lambda v: AccountItems.set_name(index, v), size="1",
        ),
        rx.text(_label(row["name"]), size="2", class_name="account-name"),
    )
    modify = rx.cond(
        row["__admin_only"] == "true",
        _choice(("Admin", "Immutable"), row["modifyRule"], lambda v: AccountItems.set_modify_rule(index, v),
                "account-modify"),
        _choice(b.MODIFY_RULES, row["modifyRule"], lambda v: AccountItems.set_modify_rule(index, v),
                "account-modify"),
    )
    return rx.table.row(
        rx.table.cell(name),
        rx.table.cell(rx.switch(checked=row["visible"] == "true", size="1", class_name="account-visible",
                                on_change=lambda v: AccountItems.set_visible(index, v))),
        rx.table.cell(_choice(b.VIEW_RULES, row["viewRule"], lambda v: AccountItems.set_view_rule(index, v),
                              "account-view")),
        rx.table.cell(modify),
        rx.table.cell(rx.input(value=row["regex"], on_change=lambda v: AccountItems.set_regex(index, v),
                               disabled=row["__pattern"] != "true", size="1", class_name="account-regex")),
        rx.table.cell(rx.hstack(
            _icon("arrow-up", AccountItems.move_row(index, -1), "Up", disabled=index == 0),
            _icon("arrow-down", AccountItems.move_row(index, 1), "Down",
                  disabled=index == AccountItems.rows.length() - 1),
            _icon("trash-2", AccountItems.delete_row(index), "Delete", color_scheme="red"),
            spacing="1",
        )),
    )


def _account_items() -> rx.Component:
    return _section(
        "Account items", "account-items",
        rx.box(rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(h)) for h in
                                           ("Name", "Visible", "View rule", "Modify rule", "Regex", "Action")])),
            rx.table.body(rx.foreach(AccountItems.rows, _account_row)),
            size="1", variant="surface", width="100%", id="account-items-table",
        ), max_height="32em", overflow_y="auto", width="100%"),
        action=rx.button(rx.icon("plus", size=14), t("Add"), on_click=AccountItems.add_row, size="1",
                         id="account-items-add"),
    )


# --- MFA items ---

def _mfa_row(row: rx.Var, index: rx.Var) -> rx.Component:
    return rx.table.row(
        rx.table.cell(rx.select.root(
            rx.select.trigger(class_name="mfa-name", width="100%"),
            rx.select.content(
                rx.select.item(_label(row["name"]), value=row["name"]),
                rx.foreach(MfaItems.free_methods, lambda n: rx.select.item(_label(n), value=n)),
            ),
            value=row["name"], on_change=lambda v: MfaItems.set_name(index, v), size="1",
        )),
        rx.table.cell(_choice(b.MFA_RULES, row["rule"], lambda v: MfaItems.set_rule(index, v), "mfa-rule")),
        rx.table.cell(_icon("trash-2", MfaItems.delete_row(index), "Delete", color_scheme="red")),
    )


def _mfa_items() -> rx.Component:
    return _section(
        "MFA items", "mfa-items",
        rx.table.root(
            rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(h)) for h in ("Name", "Rule", "Action")])),
            rx.table.body(rx.foreach(MfaItems.rows, _mfa_row)),
            size="1", variant="surface", width="100%", id="mfa-items-table",
        ),
        action=rx.button(rx.icon("plus", size=14), t("Add"), on_click=MfaItems.add_row, disabled=MfaItems.full,
                         size="1", id="mfa-items-add"),
    )


# --- theme ---

def _swatch(color: str) -> rx.Component:
    return rx.box(
        width="1.6em", height="1.6em", border_radius="4px", background=color, cursor="pointer",
        outline=rx.cond(Theme.color == color, "2px solid var(--gray-12)", "none"), outline_offset="2px",
        on_click=Theme.set_color(color), id=f"theme-color-{color[1:].lower()}", title=color,
        custom_attrs={"data-selected": rx.cond(Theme.color == color, "true", "false")},
    )


def _theme() -> rx.Component:
    row = lambda label, widget: rx.grid(  # noqa: E731
        rx.text(t(label), size="2", weight="medium", padding_top="0.3em"), widget, columns="12em 1fr", spacing="3",
        width="100%")
    custom = rx.vstack(
        row("Theme type", _choice({k: THEME_TYPE_LABELS[k] for k in b.THEME_TYPES}, Theme.theme_type,
                                  Theme.set_type, "theme-type")),
        row("Primary color", rx.hstack(*[_swatch(c) for c in b.THEME_COLORS], spacing="2", id="theme-colors")),
        row("Border radius", rx.hstack(
            rx.box(rx.slider(value=[Theme.radius], min=0, max=b.THEME_RADIUS_MAX, step=1,
                             on_change=Theme.set_radius, size="1", id="theme-radius-slider"), width="14em"),
            rx.input(value=Theme.radius.to_string(), on_change=Theme.set_radius.debounce(300), type="number",
                     min=0, max=b.THEME_RADIUS_MAX, width="5em", size="1", id="theme-radius"),
            align="center", spacing="3")),
        row("Compact", rx.switch(checked=Theme.compact, on_change=Theme.set_compact, id="theme-compact")),
        row("Preview", rx.box(t("Save"), background=Theme.color, color="white", padding_x="1em", padding_y="0.3em",
                              border_radius=Theme.radius.to_string() + "px", width="fit-content",
                              font_size=rx.cond(Theme.compact, "12px", "14px"), id="theme-preview")),
        spacing="2", width="100%",
    )
    return _section(
        "Theme", "theme",
        rx.segmented_control.root(
            rx.segmented_control.item(t("Follow global theme"), value="global"),
            rx.segmented_control.item(t("Customize"), value="custom"),
            value=rx.cond(Theme.custom, "custom", "global"), on_change=Theme.set_mode, size="1", id="theme-mode",
        ),
        rx.cond(Theme.custom, custom, rx.fragment()),
    )


# --- navigation items ---

def _navigation() -> rx.Component:
    read_only = ~NavItems.editable
    groups = [
        rx.vstack(
            rx.checkbox(t(group.label), checked=NavItems.groups_checked.contains(group.key),
                        on_change=lambda on, key=group.key: NavItems.toggle_group(key, on), disabled=read_only,
                        id=f"nav-group{group.key.replace('/', '-')}"),
            rx.vstack(*[
                rx.checkbox(t(item.label), checked=NavItems.checked.contains(item.key),
                            on_change=lambda on, key=item.key: NavItems.toggle_item(key, on), disabled=read_only,
                            id="nav-item" + (item.key.replace("/", "-") if item.key != "/" else "-home"))
                for item in group.items
            ], spacing="1", padding_left="1.5em"),
            spacing="1",
        )
        for group in MENU
    ]
    return _section(
        "Navigation items", "nav-items",
        rx.cond(read_only, rx.text(t("Only the global admin can change the navigation items"), size="1",
                                   color_scheme="gray", id="nav-items-read-only")),
        rx.checkbox(t("All"), checked=NavItems.all_checked, on_change=NavItems.toggle_all, disabled=read_only,
                    id="nav-all"),
        rx.grid(*groups, columns="repeat(auto-fill, minmax(14em, 1fr))", spacing="3", width="100%",
                padding_left="1.5em"),
        rx.cond(NavItems.checked.length() == 0,
                rx.text(t("Nothing checked: the organization's admins see every item"), size="1",
                        color_scheme="orange")),
    )


