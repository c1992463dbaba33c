"""Organizations: list and edit; the account items and MFA items are row table fields, and the
edit page has its own sections: theme, navigation items and LDAP servers (their states are in
identity/ui/organization_state.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.applications.ui.applications_parts import logo_preview
from iam_console.core import builtin as b
from iam_console.core.kinds import choices
from iam_console.core.navigation import menu
from iam_console.identity import accounts
from iam_console.identity.kinds.organization import (
    COUNTRY_CODE_CHOICES,
    DCR_DISABLED,
    DCR_POLICIES,
    LANGUAGE_CHOICES,
    mfa_items_problem,
    obfuscator_key,
)
from iam_console.identity.ui.ldap import LDAP
from iam_console.identity.ui.organization_state import LdapServers, NavItems, Theme
from iam_console.identity.users import PASSWORD_OPTIONS
from iam_console.ui.components.listing import sublist
from iam_console.ui.components.section import section
from iam_console.ui.screens import Cell, Column, Field, Screen, screen
from iam_console.ui.text import t


def _built_in(record) -> bool:
    return record.get("name") == b.BUILT_IN_ORG


NEW_ACCOUNT_ITEM = {"name": b.ACCOUNT_ITEM_PLACEHOLDER, "visible": True, "viewRule": "Public", "modifyRule": "Self",
                    "regex": ""}


def _settle_account_item(item: dict) -> dict:
    """The regex applies to the listed items only; a modify rule the item's view rule no longer
    allows (Self, once only admins see it) becomes Admin."""
    if item["name"] not in accounts.PATTERN_ITEMS:
        item["regex"] = ""
    if item["modifyRule"] not in accounts.modify_rules(item["name"], item["viewRule"]):
        item["modifyRule"] = "Admin"
    return item


def _new_mfa_item(rows: list[dict]) -> dict | None:
    """The first method no row has; None once every method has its row."""
    free = [name for name in b.MFA_METHODS if name not in {row.get("name") for row in rows}]
    return {"name": free[0], "rule": "Optional"} if free else None


ORGANIZATIONS = screen(Screen(
    key="organization", title="Organizations", list_route="/organizations", edit_route="/organizations/{name}",
    add_global_admin_only=True, delete_global_admin_only=True, name_locked=_built_in,
    protected=lambda record, me: _built_in(record),
    # an organization admin's list holds their own organization only
    list_scope=lambda actor, owner: {"owner": "", "organization": owner if actor.is_global_admin
                                     else actor.organization},
    sections=(Theme, NavItems, LdapServers), edit_title="Organization",
    parts=lambda: (_navigation(), theme_section(), sublist(LDAP, LdapServers, "LDAP servers", "ldap")),
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
               searchable=False, virtual=True),
        Column("groups", "Groups", caption="Groups", link="/trees/{name}", sortable=False, searchable=False,
               virtual=True),
    ),
    fields=(
        Field("displayName", "Display name"),
        # disabling the dark logo clears its URL (the service does it again on save)
        Field("enableDarkLogo", "Enable dark logo", "switch", then=lambda on: {} if on else {"logoDark": ""}),
        Field("logo", "Logo", addon=logo_preview),
        Field("logoDark", "Logo dark", shown_when=lambda values, flags: flags["enableDarkLogo"]),
        Field("favicon", "Favicon"),
        Field("websiteUrl", "Website URL"),
        Field("passwordType", "Password type", "select", options=choices("organization", "passwordType")),
        Field("passwordSalt", "Password salt"),
        Field("passwordOptions", "Password complexity options", "pick", multiple=True,
              options=tuple(PASSWORD_OPTIONS)),
        # an empty type is Plain; choosing a type resets the key to the type's default
        Field("passwordObfuscatorType", "Password obfuscator", "select",
              options=choices("organization", "passwordObfuscatorType"), empty="Plain",
              then=lambda kind: {"passwordObfuscatorKey": obfuscator_key(kind)}),
        Field("passwordObfuscatorKey", "Password obfuscator key",
              shown_when=lambda values, flags: (values["passwordObfuscatorType"] != "Plain")
              & (values["passwordObfuscatorType"] != "")),
        Field("passwordExpireDays", "Password expire days", "number", minimum=0),
        Field("countryCodes", "Supported country codes", "pick", multiple=True, options=COUNTRY_CODE_CHOICES),
        Field("languages", "Languages", "pick", multiple=True, options=LANGUAGE_CHOICES),
        Field("defaultAvatar", "Default avatar"),
        Field("defaultApplication", "Default application", "pick", kind="application"),
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
        # dynamic client registration (RFC 7591) and the resources tokens are for (RFC 8707, RFC 9728)
        Field("dcrPolicy", "Dynamic client registration", "select", options=DCR_POLICIES, empty=DCR_DISABLED),
        Field("protectedResources", "Protected resources", "list"),
        Field("clientMetadataDocuments", "Client metadata documents", "switch"),
        Field("accountItems", "Account items", "rows", movable=True, initial=b.default_account_items,
              new_row=lambda rows: dict(NEW_ACCOUNT_ITEM), settle=_settle_account_item, columns=(
                  # a new row is named once, from the names no other row uses
                  Cell("name", "Name", "select", options=b.ACCOUNT_ITEM_NAMES, unique=True, translate=True,
                       placeholder=b.ACCOUNT_ITEM_PLACEHOLDER,
                       disabled_when=lambda row: row["name"] != b.ACCOUNT_ITEM_PLACEHOLDER),
                  Cell("visible", "Visible", "switch", default=True),
                  Cell("viewRule", "View rule", "select", options=b.VIEW_RULES, translate=True),
                  Cell("modifyRule", "Modify rule", "select", translate=True,
                       options_for=lambda row: accounts.modify_rules(row["name"], row["viewRule"])),
                  Cell("regex", "Regex", disabled_when=lambda row: row["name"] not in accounts.PATTERN_ITEMS),
              )),
        # a method at most once, and one Required at most
        Field("mfaItems", "MFA items", "rows", new_row=_new_mfa_item, refuse=mfa_items_problem, columns=(
            Cell("name", "Name", "select", options=b.MFA_METHODS, unique=True, translate=True),
            Cell("rule", "Rule", "select", options=b.MFA_RULES, translate=True, default="Optional"),
        )),
    ),
))


# --- theme ---

def _swatch(color: str) -> rx.Component:
    return rx.box(
        width="1.6em", height="1.6em", border_radius="4px", background=color, cursor="pointer",
        outline=rx.cond(Theme.color == color, "2px solid var(--gray-12)", "none"), outline_offset="2px",
        on_click=Theme.set_color(color), id=f"theme-color-{color[1:].lower()}", title=color,
        custom_attrs={"data-selected": rx.cond(Theme.color == color, "true", "false")},
    )


THEME_LABELS = {"default": "Default", "dark": "Dark", "lark": "Lark", "comic": "Comic"}  # catalog keys


def theme_section(follow: str = "Follow global theme") -> rx.Component:
    """themeData's editor (the `Theme` section state): `follow` labels the choice of no theme of
    its own (an application follows its organization's)."""
    row = lambda label, widget: rx.grid(  # noqa: E731
        rx.text(t(label), size="2", weight="medium", padding_top="0.3em"), widget, columns="12em 1fr", spacing="3",
        width="100%")
    custom = rx.vstack(
        row("Theme type", rx.select.root(
            rx.select.trigger(class_name="theme-type", width="100%", aria_label=t("Theme type")),
            rx.select.content(*[rx.select.item(t(THEME_LABELS[kind]), value=kind) for kind in b.THEME_TYPES]),
            value=Theme.theme_type, on_change=Theme.set_type, size="1")),
        row("Primary color", rx.hstack(*[_swatch(c) for c in b.THEME_COLORS], spacing="2", id="theme-colors")),
        row("Border radius", rx.hstack(
            rx.box(rx.slider(value=[Theme.radius], min=0, max=b.THEME_RADIUS_MAX, step=1,
                             on_change=Theme.set_radius, size="1", id="theme-radius-slider",
                             aria_label=t("Border radius")), width="14em"),
            rx.input(value=Theme.radius.to_string(), on_change=Theme.set_radius.debounce(300), type="number",
                     min=0, max=b.THEME_RADIUS_MAX, width="5em", size="1", id="theme-radius",
                     aria_label=t("Border radius")),
            align="center", spacing="3")),
        row("Compact", rx.switch(checked=Theme.compact, on_change=Theme.set_compact, id="theme-compact",
                                 aria_label=t("Compact"))),
        row("Preview", rx.box(t("Save"), background=Theme.color, color="white", padding_x="1em", padding_y="0.3em",
                              border_radius=Theme.radius.to_string() + "px", width="fit-content",
                              font_size=rx.cond(Theme.compact, "12px", "14px"), id="theme-preview")),
        spacing="2", width="100%",
    )
    return section(
        "Theme", "theme",
        rx.segmented_control.root(
            rx.segmented_control.item(t(follow), value="global"),
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
        for group in menu()
    ]
    return section(
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
