"""The navigation shell: menu groups, user dropdown, theme,
language and organization selectors, and a drawer on narrow screens."""

from __future__ import annotations

import reflex as rx
from reflex.style import set_color_mode
from reflex_components_core.core.banner import connection_error, connection_pulser, has_too_many_connection_errors

from iam_console.core.navigation import MenuGroup, menu
from iam_console.i18n import LANGUAGE_NAMES
from iam_console.ui.routes import EXTERNAL_ROUTES, LINKABLE
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import ALL_ORGANIZATIONS, Prefs
from iam_console.ui.text import t


def themed(*children: rx.Component) -> rx.Component:
    """The viewer's Compact choice, and the accent, radius and compactness of their
    organization's own theme (ui/theme.py); Default/Dark is the color mode."""
    return rx.theme(
        *children,
        scaling=rx.cond(Prefs.is_compact | Account.compact_theme, "90%", "100%"),
        has_background=True,
        accent_color=Account.accent,
        radius=Account.radius,
    )


def _item_link(key: str, label: str) -> rx.Component:
    return rx.link(t(label), href=key, underline="none", width="100%", id=f"menu-item{key.replace('/', '-')}",
                   is_external=key in EXTERNAL_ROUTES)


def _group_menu(group: MenuGroup) -> rx.Component:
    items = [
        rx.cond(Account.menu_keys.contains(item.key), rx.menu.item(_item_link(item.key, item.label)))
        for item in group.items
    ]
    return rx.cond(
        Account.menu_groups.contains(group.key),
        rx.menu.root(
            rx.menu.trigger(rx.button(t(group.label), rx.icon("chevron-down", size=14), variant="ghost",
                                      id=f"menu-group{group.key.replace('/', '-')}")),
            rx.menu.content(*items),
        ),
    )


def _drawer_group(group: MenuGroup) -> rx.Component:
    return rx.cond(
        Account.menu_groups.contains(group.key),
        rx.vstack(
            rx.text(t(group.label), weight="bold", size="2", color_scheme="gray"),
            *[rx.cond(Account.menu_keys.contains(item.key),
                      rx.drawer.close(rx.box(_item_link(item.key, item.label), padding_left="0.75em")))
              for item in group.items],
            spacing="1", width="100%",
        ),
    )


def _drawer() -> rx.Component:
    return rx.drawer.root(
        rx.drawer.trigger(rx.icon_button(rx.icon("menu"), variant="ghost", aria_label=t("Menu"), id="menu-drawer")),
        rx.drawer.overlay(z_index="5"),
        rx.drawer.portal(
            rx.drawer.content(
                themed(rx.vstack(*[_drawer_group(group) for group in menu()], spacing="4", padding="1.5em",
                                 width="100%", height="100%")),
                width="16em", height="100%", top="0", left="0",
            )
        ),
        direction="left",
    )


def _choice(label: str, checked: rx.Var, on_click, id_: str) -> rx.Component:
    mark = rx.cond(checked, rx.icon("check", size=14), rx.box(width="14px"))
    return rx.menu.item(rx.hstack(mark, t(label), align="center"), on_click=on_click, id=id_,
                        data_checked=rx.cond(checked, "true", "false"))


def _theme_menu() -> rx.Component:
    return rx.menu.root(
        rx.menu.trigger(rx.icon_button(rx.icon("palette"), variant="ghost", aria_label=t("Theme"), id="theme-menu")),
        rx.menu.content(
            # Default and Dark set the color mode in the browser; Compact is a preference
            _choice("Default", rx.color_mode_cond(True, False), set_color_mode("light"), "theme-default"),
            _choice("Dark", rx.color_mode_cond(False, True), set_color_mode("dark"), "theme-dark"),
            _choice("Compact", Prefs.is_compact, Prefs.toggle_compact, "theme-compact"),
        ),
    )


def _language_item(code: str, name: str) -> rx.Component:
    return rx.menu.item(name, on_click=Account.choose_language(code), id=f"language-{code}",
                        custom_attrs={"lang": code})


def language_menu(every: bool = False) -> rx.Component:
    """The languages of the viewer's organization, or `every` language (pages before sign-in)."""
    return rx.menu.root(
        rx.menu.trigger(rx.icon_button(rx.icon("languages"), variant="ghost", aria_label=t("Language"),
                                       id="language-menu")),
        rx.menu.content(*[
            # each language in its own name, marked as such for screen readers
            _language_item(code, name) if every
            else rx.cond(Account.languages.contains(code), _language_item(code, name))
            for code, name in LANGUAGE_NAMES.items()
        ]),
    )


def _organization_selector() -> rx.Component:
    """The global admin's; not on the group tree, which has its own."""
    return rx.cond(
        Account.is_global_admin & ~rx.State.router.url.path.startswith("/trees/"),
        rx.select.root(
            rx.select.trigger(placeholder=t("Organization"), id="organization-selector",
                              aria_label=t("Organization")),
            rx.select.content(
                rx.select.item(t("All"), value=ALL_ORGANIZATIONS),
                rx.foreach(Account.organization_names, lambda name: rx.select.item(name, value=name)),
            ),
            value=Prefs.organization,
            on_change=Prefs.set_organization,
            size="1",
        ),
    )


def _user_menu() -> rx.Component:
    # hidden while MFA setup is required
    account_item = (
        [rx.cond(Account.mfa_rule != "Required",
                 rx.menu.item(rx.link(t("My Account"), href="/account", underline="none", id="my-account")))]
        if "/account" in LINKABLE else []
    )
    return rx.menu.root(
        rx.menu.trigger(
            rx.button(rx.avatar(src=Account.avatar, fallback=Account.display_name[:1], size="1", radius="full"),
                      rx.text(Account.display_name, id="account-name"), variant="ghost", id="user-menu"),
        ),
        rx.menu.content(
            *account_item,
            rx.menu.item(rx.hstack(rx.icon("log-out", size=14), t("Logout")), on_click=Account.logout,
                         id="logout"),
        ),
    )


def header() -> rx.Component:
    return rx.hstack(
        rx.mobile_only(_drawer()),
        rx.link(rx.hstack(rx.icon("shield-check"), rx.heading("IAM", size="4"), align="center"),
                href="/", underline="none"),
        rx.tablet_and_desktop(rx.hstack(*[_group_menu(group) for group in menu()], spacing="1", wrap="wrap")),
        rx.spacer(),
        _organization_selector(),
        language_menu(),
        _theme_menu(),
        _user_menu(),
        align="center",
        spacing="3",
        padding_x="1.5em",
        padding_y="0.6em",
        border_bottom="1px solid var(--gray-a5)",
        width="100%",
        id="shell-header",
    )


def _mfa_notice() -> rx.Component:
    """After sign-in: MFA must be enabled (Required), or may be (Prompt: 'Later' or 'Go to enable')."""
    setup = "/mfa/setup?mfaType=" + Account.mfa_setup_type
    required = rx.callout(t("Your organization requires multi-factor authentication: please enable it"),
                          icon="shield-alert", color_scheme="orange", id="mfa-required", margin="1em 1.5em 0")
    prompt = rx.callout(
        rx.hstack(
            rx.text(t("Enable multi-factor authentication to protect your account")),
            rx.spacer(),
            rx.button(t("Later"), on_click=Account.later, variant="soft", size="1", id="mfa-later"),
            rx.link(rx.button(t("Go to enable"), size="1", id="mfa-go"), href=setup),
            align="center", width="100%",
        ),
        icon="shield", id="mfa-prompt", margin="1em 1.5em 0",
    )
    on_setup = rx.State.router.url.path.startswith("/mfa/setup")
    return rx.cond(
        Account.mfa_rule == "Required", required,
        rx.cond((Account.mfa_rule == "Prompt") & ~Account.mfa_prompt_dismissed & ~on_setup, prompt, rx.fragment()),
    )


def _impersonation_notice() -> rx.Component:
    """While a global admin acts as this account: who is acting as whom, and the way back."""
    return rx.cond(
        Account.impersonator != "",
        rx.callout(
            rx.hstack(
                rx.text(t("Acting as"), " ", rx.text.strong(Account.owner + "/" + Account.user_name), " ",
                        t("on behalf of"), " ", rx.text.strong(Account.impersonator)),
                rx.spacer(),
                rx.button(t("Stop acting as this user"), on_click=Account.exit_impersonation, size="1",
                          color_scheme="amber", id="exit-impersonation"),
                align="center", width="100%",
            ),
            icon="venetian-mask", color_scheme="amber", id="impersonation", margin="1em 1.5em 0",
        ),
    )


def guarded(content: rx.Component) -> rx.Component:
    """Nothing until the account is known, then the shell around the page."""
    return themed(
        rx.cond(
            Account.show_page,
            rx.box(header(), _impersonation_notice(), _mfa_notice(), rx.box(content, padding="1.5em"),
                   min_height="100vh"),
            rx.fragment(),
        )
    )


def connection_notice() -> rx.Component:
    """The app's overlay: while the websocket cannot reach the server,
    'Failed to connect to server: {error}' (instead of Reflex's own toast)."""
    notice = rx.callout(
        Prefs.tr["Failed to connect to server: %s"].replace("%s", connection_error.to(str)),
        icon="wifi-off", color_scheme="red", id="connection-error",
    )
    return rx.fragment(
        connection_pulser(),
        rx.cond(has_too_many_connection_errors,
                rx.box(notice, position="fixed", top="1em", left="50%", transform="translateX(-50%)",
                       z_index="9999")),
    )
