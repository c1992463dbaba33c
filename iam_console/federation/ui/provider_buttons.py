"""The upstream identity providers' buttons of the sign-in, authorize and sign-up pages
(federation/upstream.buttons): big buttons with the provider's icon and name, or small icon
buttons; each a plain link to the start of the flow (the server redirects to the provider)."""

from __future__ import annotations

import reflex as rx

from iam_console.ui.state.prefs import Prefs


def full_load() -> dict:
    """Reflex renders an anchor as the router's Link: the start is a server route, loaded as a
    document. A new dict each time: the component keeps (and adds to) the one it is given."""
    return {"reloadDocument": True}


def provider_buttons(buttons: rx.Var, prefix: str, phrase: str = "Sign in with %s") -> rx.Component:
    """`buttons`: a list var of services.upstream.buttons' dicts; ids `prefix`-provider-<name>."""
    def one(button: rx.Var) -> rx.Component:
        name = Prefs.tr[phrase].replace("%s", button["label"].to(str))
        icon = rx.el.img(src=button["icon"], alt="", width="20", height="20", style={"display": "block"})
        big = rx.el.a(icon, rx.text(name, size="2", weight="medium"), href=button["href"], custom_attrs=full_load(),
                      id=f"{prefix}-provider-" + button["name"].to(str), class_name="provider-button",
                      style={"display": "flex", "align_items": "center", "gap": "0.6em", "width": "100%",
                             "padding": "0.45em 0.8em", "border": "1px solid var(--gray-7)", "border_radius": "6px",
                             "color": "var(--gray-12)", "text_decoration": "none"})
        small = rx.el.a(icon, href=button["href"], custom_attrs=full_load(), aria_label=name, title=name,
                        id=f"{prefix}-provider-" + button["name"].to(str), class_name="provider-button",
                        style={"display": "inline-flex", "padding": "0.35em", "border": "1px solid var(--gray-7)",
                               "border_radius": "6px"})
        return rx.cond(button["size"] == "small", small, big)

    return rx.cond(buttons.length() > 0, rx.flex(rx.foreach(buttons, one), wrap="wrap", gap="0.5em", width="100%",
                                                 id=f"{prefix}-providers"))
