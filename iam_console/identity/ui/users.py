"""Users: the list at /users and /organizations/{org}/users, with its
.xlsx upload; the user edit page and /account, with its own sections:
the avatar cropper, the password dialog, the email and phone reset dialogs,
the API key, groups, roles, permissions and properties.
Which fields a viewer sees and may change comes from the organization's
account items (identity/accounts.py)."""

from __future__ import annotations

import reflex as rx

from iam_console.core import builtin as b
from iam_console.core.kinds import choices
from iam_console.federation.ui.linked_parts import linked_section
from iam_console.identity.ui.users_state import ContactReset, Properties, UserEdit, account_item_restrictions
from iam_console.signin.ui.mfa_state import MfaSection
from iam_console.signin.ui.webauthn_parts import webauthn_section
from iam_console.ui.components.avatar import avatar_cropper
from iam_console.ui.components.dialogs import cancel_ok
from iam_console.ui.components.listing import pager
from iam_console.ui.routes import LINKABLE
from iam_console.ui.screens import Cell, Column, Field, Route, Screen, screen, workbook_upload
from iam_console.ui.state.account import Account
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def _untouchable(record, me: str) -> bool:
    """Delete is disabled for the viewer's own account and the built-in admin."""
    user_id = f"{record.get('owner')}/{record.get('name')}"
    return user_id in (me, f"{b.BUILT_IN_ORG}/{b.ADMIN_USER}")


USERS = screen(Screen(
    key="user", title="Users", list_route="/users", edit_route="/users/{owner}/{name}",
    protected=_untouchable, page_size=20, reverts_owner=True, upload=workbook_upload(
        "user", "Users uploaded successfully, refreshing the page", "Users failed to upload: %s"),
    after_read=UserEdit.load,
    restrictions=account_item_restrictions, edit_title="User", list_routes=("/organizations/[p0]/users",),
    routes=(Route("/account", "My Account", on_load=Editing.open_account),), parts=lambda: _user_parts(),
    actions=lambda: (_impersonate_button(),),
    name_locked=lambda record: (record.get("owner"), record.get("name")) == (b.BUILT_IN_ORG, b.ADMIN_USER),
    columns=(
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("signupApplication", "Application"),
        Column("name", "Name", link="/users/{owner}/{name}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("avatar", "Avatar", "avatar", sortable=False, searchable=False),
        Column("email", "Email"),
        Column("phone", "Phone"),
        Column("affiliation", "Affiliation"),
        Column("region", "Country/Region"),
        Column("tag", "Tag", "tags"),
        Column("isAdmin", "Is admin", "bool", searchable=False),
        Column("isForbidden", "Is forbidden", "bool", searchable=False),
        Column("isDeleted", "Is deleted", "bool", searchable=False),
    ),
    fields=(
        Field("id", "ID"),
        Field("displayName", "Display name"),
        Field("avatar", "Avatar", addon=lambda: _avatar()),
        Field("type", "User type", "select", options=choices("user", "type")),
        Field("email", "Email", addon=lambda: _reset_button("email")),
        Field("phone", "Phone", addon=lambda: _reset_button("phone")),
        Field("countryCode", "Country code"),
        Field("region", "Country/Region"),
        Field("location", "Location"),
        Field("address", "Address", "list"),
        Field("affiliation", "Affiliation"),
        Field("title", "Title"),
        Field("idCardType", "ID card type"),
        Field("idCard", "ID card"),
        Field("homepage", "Homepage"),
        Field("bio", "Bio", "textarea"),
        Field("tag", "Tag"),
        Field("language", "Language"),
        Field("gender", "Gender"),
        Field("birthday", "Birthday"),
        Field("education", "Education"),
        # what the server keeps (the balance moves with transactions, the online flag with sign-ins,
        # the accounts with their own flows): shown, never sent
        Field("balance", "Balance", "number", derived=True),
        Field("score", "Score", "number"),
        Field("karma", "Karma", "number"),
        Field("ranking", "Ranking", "number"),
        Field("signupApplication", "Signup application", "pick", kind="application"),
        Field("ipWhitelist", "IP whitelist"),
        Field("isOnline", "Is online", "switch", derived=True),
        Field("isAdmin", "Is admin", "switch"),
        Field("isForbidden", "Is forbidden", "switch"),
        Field("isDeleted", "Is deleted", "switch"),
        Field("deletedTime", "Deleted time", locked_for=lambda record: True,
              shown_when=lambda values, flags: values["deletedTime"] != ""),
        Field("needUpdatePassword", "Need update password", "switch"),
        # the accounts this user signs in to elsewhere, their face IDs and their authenticator
        # accounts: names only (passwords, face data and secret keys stay on the server)
        Field("managedAccounts", "Managed accounts", "rows", derived=True, columns=(
            Cell("application", "Application", "text"), Cell("username", "Username", "text"),
            Cell("signinUrl", "Signin URL", "text"))),
        Field("faceIds", "Face ID", "rows", derived=True, columns=(Cell("name", "Name", "text"),)),
        Field("mfaAccounts", "MFA accounts", "rows", derived=True, columns=(
            Cell("issuer", "Issuer", "text"), Cell("accountName", "Account name", "text"),
            Cell("origin", "Origin", "text"))),
    ),
))


def _labelled(label: str, item: str, *children: rx.Component) -> rx.Component:
    """A row of the form for an account item, left out when the viewer may not see the item."""
    row = rx.grid(
        rx.text(t(label), size="2", weight="medium", padding_top="0.4em"),
        rx.box(*children, width="100%"),
        columns="12em 1fr", spacing="3", width="100%",
    )
    return rx.cond(UserEdit.hidden_items.contains(item), rx.fragment(), row)


def _password_input(label: str, ident: str) -> rx.Component:
    """A password of the dialog: it stays in the page (read by assets/iam.js), each keystroke
    asks the browser for the live hints."""
    return rx.vstack(
        rx.text(rx.el.label(t(label), html_for=ident), size="2", weight="medium"),
        rx.input(type="password", on_change=rx.call_script("window.iamPasswordHints()", callback=UserEdit.hinted),
                 id=ident, width="100%", auto_complete="new-password"),
        spacing="1", width="100%",
    )


def _hint(text: rx.Var, ident: str) -> rx.Component:
    return rx.cond(text != "", rx.text(text, color_scheme="red", size="2", id=ident))


def _password() -> rx.Component:
    """The password change: disabled while the name is edited and not saved."""
    renamed = (Editing.values["name"] != Editing.saved_name) | (Editing.values["owner"] != Editing.saved_owner)
    dialog = rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("Password")),
            rx.vstack(
                rx.cond(UserEdit.asks_old_password,
                        _password_input("Old Password", "password-old")),
                _password_input("New Password", "password-new"),
                _hint(UserEdit.password_hint, "password-hint"),
                _password_input("Re-enter New", "password-confirm"),
                _hint(UserEdit.confirm_hint, "confirm-hint"),
                cancel_ok(UserEdit.set_password_open(False), UserEdit.submit_password,
                          cancel_id="password-cancel", ok_id="password-ok"),
                spacing="2", width="100%",
            ),
            max_width="28em", id="password-dialog", custom_attrs={"data-rules": UserEdit.password_rules},
        ),
        open=UserEdit.password_open, on_open_change=UserEdit.set_password_open,
    )
    return _labelled("Password", "Password",
                     rx.button(t("Modify password..."), on_click=UserEdit.open_password, disabled=renamed,
                               variant="soft", id="password-open"),
                     dialog)


def _avatar() -> rx.Component:
    """The avatar's preview and its upload with a 1:1 cropper (under the Avatar field)."""
    dialog = rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(t("Upload a photo...")),
            avatar_cropper(owner=Editing.saved_owner, user=Editing.saved_name, choose_label=t("Select a picture"),
                           upload_label=t("Upload"), empty_message=t("You must select a picture first!"),
                           failed_message=t("File failed to upload"), on_done=UserEdit.avatar_uploaded,
                           on_fail=UserEdit.avatar_failed),
            max_width="32em",
        ),
        open=UserEdit.avatar_open, on_open_change=UserEdit.set_avatar_open,
    )
    return rx.hstack(
        rx.cond(Editing.values["avatar"] != "",
                rx.avatar(src=Editing.values["avatar"], fallback="?", size="5", radius="full", id="avatar-preview")),
        rx.button(t("Upload a photo..."), on_click=UserEdit.set_avatar_open(True), variant="soft",
                  disabled=Editing.locked.contains("avatar"), id="avatar-open"),
        dialog,
        align="center", spacing="3", margin_top="0.5em",
    )


def _reset_button(kind: str) -> rx.Component:
    """Under the viewer's own email or phone (their input is for admins): the reset dialog."""
    allowed = ContactReset.can_email if kind == "email" else ContactReset.can_phone
    label = "Reset Email..." if kind == "email" else "Reset Phone..."
    return rx.cond(allowed, rx.button(t(label), on_click=ContactReset.open(kind), variant="soft",
                                      margin_top="0.5em", id=f"reset-{kind}-open"))


def _reset_dialog() -> rx.Component:
    """The new address, Send code (then a 60 s countdown before another), the code, OK."""
    is_email = ContactReset.kind == "email"
    waiting = ContactReset.countdown > 0
    return rx.dialog.root(
        rx.dialog.content(
            rx.dialog.title(rx.cond(is_email, t("Reset Email..."), t("Reset Phone..."))),
            rx.vstack(
                rx.text(rx.el.label(rx.cond(is_email, t("New Email"), t("New Phone")), html_for="reset-dest"),
                        size="2", weight="medium"),
                rx.input(on_change=ContactReset.set_dest, id="reset-dest", width="100%",
                         type=rx.cond(is_email, "email", "tel"), auto_complete="off"),
                rx.text(rx.el.label(t("Code"), html_for="reset-code"), size="2", weight="medium"),
                rx.hstack(
                    rx.input(on_change=ContactReset.set_code, id="reset-code", width="100%",
                             auto_complete="one-time-code", input_mode="numeric"),
                    rx.button(rx.cond(waiting, ContactReset.countdown.to_string() + " s", t("Send code")),
                              on_click=ContactReset.send_code, disabled=waiting, loading=ContactReset.sending,
                              variant="soft", id="reset-send", min_width="7em"),
                    width="100%", spacing="2",
                ),
                cancel_ok(ContactReset.set_open(False), ContactReset.submit, cancel_id="reset-cancel",
                          ok_id="reset-ok"),
                spacing="2", width="100%",
            ),
            max_width="28em",
        ),
        open=ContactReset.kind != "", on_open_change=ContactReset.set_open,
    )


def _api_key() -> rx.Component:
    """Generated or updated by anyone who may change the user's API key item."""
    return _labelled(
        "API key", "API key",
        rx.vstack(
            rx.hstack(rx.text(rx.el.label(t("Access key"), html_for="access-key"), size="2", width="8em"),
                      rx.input(value=UserEdit.access_key, read_only=True, id="access-key", width="100%"),
                      align="center", width="100%"),
            rx.hstack(rx.text(rx.el.label(t("Access secret"), html_for="access-secret"), size="2", width="8em"),
                      rx.input(value=UserEdit.access_secret, read_only=True, id="access-secret", width="100%"),
                      align="center", width="100%"),
            rx.button(rx.cond(UserEdit.access_key == "", t("Generate"), t("Update")),
                      on_click=UserEdit.generate_keys, disabled=Editing.locked.contains("accessKey"),
                      variant="soft", id="keys-generate"),
            spacing="2", width="100%",
        ),
    )


def _group_icon(kind: rx.Var) -> rx.Component:
    return rx.cond(kind == "Physical", rx.icon("building", size=14), rx.icon("users", size=14))


def _groups() -> rx.Component:
    """The user's groups (owner/name), and the organization's groups to add, found by name."""
    locked = Editing.locked.contains("groups")
    chosen = rx.hstack(
        rx.foreach(UserEdit.groups, lambda g: rx.badge(
            _group_icon(g["type"]), g["id"],
            rx.cond(locked, rx.fragment(),
                    rx.icon("x", size=12, cursor="pointer", on_click=UserEdit.remove_group(g["id"]),
                            aria_label=t("Remove"))),
            variant="soft", size="2", class_name="user-group")),
        wrap="wrap", spacing="2", id="user-groups",
    )
    picker = rx.vstack(
        rx.input(placeholder=t("Search groups"), on_change=UserEdit.search_groups.debounce(300),
                 on_focus=UserEdit.search_groups(""), id="groups-search", width="100%",
                 aria_label=t("Search groups")),
        rx.hstack(
            rx.foreach(UserEdit.group_options, lambda g: rx.button(
                _group_icon(g["type"]), g["id"], size="1", variant="outline", class_name="group-option",
                on_click=UserEdit.add_group(g["id"], g["type"]))),
            wrap="wrap", spacing="2", id="group-options",
        ),
        spacing="2", width="100%",
    )
    return _labelled("Groups", "Groups", rx.vstack(chosen, rx.cond(locked, rx.fragment(), picker),
                                                   spacing="2", width="100%"))


def _names(label: str, item: str, names: rx.Var, route: str, ident: str) -> rx.Component:
    """Read-only names (roles, permissions), linked when their screen exists."""
    def one(name: rx.Var) -> rx.Component:
        badge = rx.badge(name, variant="soft", size="2")
        if route in LINKABLE:
            return rx.link(badge, href=route + "/" + Editing.saved_owner + "/" + name)
        return badge
    return _labelled(label, item, rx.hstack(rx.foreach(names, one), wrap="wrap", spacing="2", id=ident,
                                            min_height="1.5em"))


def _properties() -> rx.Component:
    """Key/value rows, ten a page, saved with the form."""
    locked = Editing.locked.contains("properties")

    def row(r: rx.Var) -> rx.Component:
        return rx.table.row(
            rx.table.cell(rx.input(value=r["key"], on_change=lambda v: Properties.edit(r["index"], "key", v),
                                   disabled=locked, size="1", class_name="property-key", aria_label=t("Key"))),
            rx.table.cell(rx.input(value=r["value"],
                                   on_change=lambda v: Properties.edit(r["index"], "value", v),
                                   disabled=locked, size="1", class_name="property-value", aria_label=t("Value"))),
            rx.table.cell(rx.icon_button(rx.icon("trash-2", size=14), on_click=Properties.delete(r["index"]),
                                         disabled=locked, size="1", color_scheme="red", variant="soft",
                                         class_name="property-delete", aria_label=t("Delete"))),
        )

    table = rx.table.root(
        rx.table.header(rx.table.row(rx.table.column_header_cell(t("Key")),
                                     rx.table.column_header_cell(t("Value")),
                                     rx.table.column_header_cell(t("Action")))),
        rx.table.body(rx.foreach(Properties.page_rows, row)),
        width="100%", size="1", variant="surface", id="properties-table",
    )
    add = rx.button(rx.icon("plus", size=14), t("Add"), on_click=Properties.add, disabled=locked, size="1",
                    variant="soft", id="properties-add")
    return _labelled("Properties", "Properties", rx.vstack(table, add, pager(Properties, prefix="properties-"),
                                                           spacing="2", width="100%"))


def _mfa_row(row: rx.Var) -> rx.Component:
    kind, on = row["mfaType"], row["enabled"] == "1"
    setup = rx.link(rx.button(t("Setup"), size="1", variant="soft", id="mfa-setup-" + kind),
                    href="/mfa/setup?mfaType=" + kind)
    # an admin of another user: email and sms may be enabled, never set up, the app type not at all
    admin_enable = rx.button(t("Enable"), size="1", variant="soft", on_click=MfaSection.enable(kind),
                             id="mfa-enable-" + kind)
    action = rx.cond(
        on,
        rx.cond(row["preferred"] == "1",
                rx.badge(t("Preferred"), color_scheme="green", id="mfa-preferred-" + kind),
                rx.button(t("Set preferred"), size="1", variant="outline", on_click=MfaSection.set_preferred(kind),
                          disabled=~MfaSection.may_manage, id="mfa-prefer-" + kind)),
        rx.cond(MfaSection.is_self, setup,
                rx.cond(MfaSection.may_manage & (kind != "app"), admin_enable, rx.fragment())),
    )
    return rx.table.row(
        rx.table.cell(Prefs.tr[row["label"]]),
        rx.table.cell(rx.cond(on, rx.badge(t("Enabled"), id="mfa-enabled-" + kind),
                              rx.badge(t("Not enabled"), color_scheme="gray"))),
        rx.table.cell(action),
    )


def _mfa() -> rx.Component:
    """The methods, and Disable (removes all) after a confirmation."""
    disable = rx.alert_dialog.root(
        rx.alert_dialog.trigger(rx.button(t("Disable"), color_scheme="red", variant="soft", size="1",
                                          id="mfa-disable")),
        rx.alert_dialog.content(
            rx.alert_dialog.title(t("Disable multi-factor authentication")),
            rx.alert_dialog.description(t("Every method and the recovery codes will be removed.")),
            rx.hstack(
                rx.alert_dialog.cancel(rx.button(t("Cancel"), variant="soft", color_scheme="gray")),
                rx.alert_dialog.action(rx.button(t("Disable"), color_scheme="red", on_click=MfaSection.disable,
                                                 id="mfa-disable-confirm")),
                justify="end", spacing="3",
            ),
        ),
    )
    section = _labelled("Multi-factor authentication", "Multi-factor authentication", rx.vstack(
        rx.table.root(rx.table.body(rx.foreach(MfaSection.rows, _mfa_row)), size="1", id="mfa-methods"),
        rx.cond(MfaSection.any_enabled & MfaSection.may_manage, disable),
        spacing="2", width="100%",
    ))
    return rx.cond(MfaSection.visible, section, rx.fragment())


def _id_card_info() -> rx.Component:
    """The ID card's pictures (the user's properties idCardFront, idCardBack, idCardWithPerson)."""
    def picture(image: rx.Var) -> rx.Component:
        return rx.vstack(rx.text(Prefs.tr[image["label"]], size="1", color_scheme="gray"),
                         rx.cond(image["url"] != "",
                                 rx.image(src=image["url"], alt=Prefs.tr[image["label"]], height="90px",
                                          class_name="id-card-picture"),
                                 rx.text("—", color_scheme="gray")),
                         spacing="1")
    return _labelled("ID card info", "ID card info", rx.hstack(rx.foreach(UserEdit.id_card_images, picture),
                                                               spacing="4", wrap="wrap", id="id-card-info"))


def _user_parts() -> tuple[rx.Component, ...]:
    return (_password(), _reset_dialog(), _id_card_info(), _api_key(), _mfa(), _groups(),
            _names("Roles", "Roles", UserEdit.roles, "/roles", "user-roles"),
            _names("Permissions", "Permissions", UserEdit.permissions, "/permissions", "user-permissions"),
            _properties(), webauthn_section(), linked_section())


def _impersonate_button() -> rx.Component:
    """A global admin acts as this user (never from /account, never as another global admin)."""
    return rx.cond(
        UserEdit.impersonable & (Editing.saved_name != "") & ~rx.State.router.url.path.startswith("/account"),
        rx.button(rx.icon("venetian-mask", size=14), t("Impersonate"), variant="outline", id="impersonate",
                  on_click=Account.impersonate(Editing.saved_owner, Editing.saved_name)),
    )
