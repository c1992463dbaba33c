"""A picker: a button showing the chosen name (or the chosen names as badges) that opens a search
box and one page of matching names, bound to a state that uses the `Picking` mixin
(ui/state/picking.py). `ident` names the picker in that state (which holds nothing for it until
it is first opened: hence the defaults)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.ui.text import t


def _option(label: Any, on_click: Any) -> rx.Component:
    return rx.popover.close(rx.button(label, on_click=on_click, variant="ghost", size="1", class_name="pick-option",
                                      width="100%", justify="start"))


def _options(state: Any, ident: str, choose: Any, also: tuple[tuple[str, str], ...]) -> rx.Component:
    found = state.pick_found.get(ident, [])
    return rx.vstack(
        *[_option(t(label), choose(value)) for value, label in also],
        rx.input(placeholder=t("Search"), value=state.pick_typed.get(ident, ""), aria_label=t("Search"), size="1",
                 on_change=lambda typed: state.pick_search(ident, typed), debounce_timeout=300,
                 class_name="pick-search", width="100%"),
        rx.vstack(rx.foreach(found, lambda name: _option(name, choose(name))), spacing="1", width="100%",
                  max_height="16em", overflow_y="auto"),
        rx.cond(found.length() == 0, rx.text(t("No data"), size="1", color_scheme="gray")),
        rx.hstack(
            rx.button(t("Previous page"), on_click=state.pick_turn(ident, -1), size="1", variant="soft",
                      disabled=state.pick_page.get(ident, 1) <= 1, class_name="pick-previous"),
            rx.button(t("Next page"), on_click=state.pick_turn(ident, 1), size="1", variant="soft",
                      disabled=~state.pick_more.get(ident, False), class_name="pick-next"),
            spacing="2",
        ),
        spacing="2", width="18em",
    )


def picker(state: Any, ident: str, value: rx.Var, on_change: Any, *, label: rx.Var, disabled: rx.Var | bool,
           multiple: bool = False, also: tuple[tuple[str, str], ...] = (), class_name: str = "",
           id: str = "", **_: Any) -> rx.Component:
    """`value`: the chosen name, or for `multiple` the chosen names joined by ", ";
    `on_change(name)` sets a single picker's value (a multiple one goes through the state's
    pick_add and pick_drop); `also`: values naming no record, offered first, (value, catalog key)."""
    choose = (lambda name: state.pick_add(ident, name)) if multiple else on_change
    shown = rx.cond(value == "", rx.text("—", color_scheme="gray"), rx.text(value))
    for fixed, label in also:
        shown = rx.cond(value == fixed, rx.text(t(label)), shown)
    trigger = rx.button(
        shown if not multiple else rx.icon("plus", size=14),
        rx.icon("chevron-down", size=14) if not multiple else rx.fragment(),
        variant="surface", color_scheme="gray", size="1", disabled=disabled, aria_label=label, id=id or None,
        class_name=class_name, type="button",
    )
    popover = rx.popover.root(
        rx.popover.trigger(trigger),
        rx.popover.content(_options(state, ident, choose, also)),
        on_open_change=lambda _open: state.pick_search(ident, ""),
    )
    if not multiple:
        return popover
    chosen = rx.foreach(rx.cond(value == "", [], value.split(", ")), lambda name: rx.badge(
        name, rx.icon_button(rx.icon("x", size=10), size="1", variant="ghost", disabled=disabled,
                             on_click=state.pick_drop(ident, name), aria_label=t("Remove") + " " + name),
        variant="soft", class_name="pick-chosen"))
    return rx.hstack(chosen, popover, spacing="2", wrap="wrap", align="center")
