"""The edit page of a Screen: its fields in a form, Save, Save & Exit, and
Cancel in add mode."""

from __future__ import annotations

import reflex as rx

from iam_console.core import builtin as b
from iam_console.core.resources import Ownership
from iam_console.ui.components.code_editor import code_editor
from iam_console.ui.components.picker import picker
from iam_console.ui.components.rows import rows_table
from iam_console.ui.screens import Field, Screen
from iam_console.ui.state.account import Account
from iam_console.ui.state.editing import EMPTY_CHOICE, Editing
from iam_console.ui.text import t

# what a select's option may show before its label (Screen Field.choices' third element)
CHOICE_ICONS = {"Physical": "users", "Virtual": "layers"}


def _choice_label(choice: rx.Var) -> rx.Component:
    icon = rx.fragment()
    for kind, tag in CHOICE_ICONS.items():
        icon = rx.cond(choice[2] == kind, rx.icon(tag, size=14, class_name=f"choice-icon-{kind.lower()}",
                                                  aria_label=kind), icon)
    return rx.hstack(icon, rx.text(choice[1]), align="center", spacing="2")


def field_label(label: str, ident: str) -> rx.Component:
    """A field's label, bound to its widget: `for` names an input, and the buttons Radix
    draws for selects and switches name themselves after it (aria-labelledby {ident}-label)."""
    return rx.text(rx.el.label(t(label), html_for=ident, id=f"{ident}-label"), size="2", weight="medium",
                   padding_top="0.4em")


def _text(key: str) -> rx.Var:
    """A field's text, "" until the edit state holds it: a page drawn with another screen's
    values (the moment after a navigation) has no such key, and no string method may run on it."""
    return rx.cond(Editing.values.contains(key), Editing.values[key], "")


def _checks(field: Field, disabled: rx.Var) -> rx.Component:
    """A list field as one checkbox per option (a multi-select of a few fixed values)."""
    chosen = _text(field.key).split(", ")
    return rx.hstack(*[
        rx.checkbox(option, checked=chosen.contains(option), disabled=disabled, id=f"field-{field.key}-{option}",
                    on_change=lambda on, option=option: Editing.toggle_option(field.key, option, on))
        for option in field.options
    ], spacing="4", wrap="wrap", id=f"field-{field.key}", padding_top="0.4em", role="group",
        aria_labelledby=f"field-{field.key}-label")


def _ident(field: Field) -> str:
    """The widget's id: field-<key>, a dotted key's dot a dash (field-userMapping-id)."""
    return f"field-{field.key.replace('.', '-')}"


def _options_by(field: Field, ident: str, value: rx.Var, on_change, disabled: rx.Var) -> rx.Component:
    """A select whose options follow another field's edited value (a provider's types by category);
    a value not among them stays shown."""
    other, table = field.options_by
    options = rx.Var.create({k: list(v) for k, v in table.items()})
    chosen = rx.cond(options.contains(_text(other)), options[_text(other)], [])
    return rx.select.root(
        rx.select.trigger(id=ident, width="100%", aria_labelledby=f"{ident}-label"),
        rx.select.content(
            rx.foreach(chosen, lambda option: rx.select.item(option, value=option)),
            rx.cond(chosen.contains(value) | (value == ""), rx.fragment(), rx.select.item(value, value=value)),
        ),
        value=rx.cond(value == "", EMPTY_CHOICE, value), on_change=on_change, disabled=disabled,
    )


def _widget(field: Field) -> rx.Component:
    disabled = Editing.locked.contains(field.key)
    if field.enabled_when is not None:
        disabled = disabled | ~field.enabled_when(Editing.values, Editing.flags)
    ident = _ident(field)
    if field.widget == "checks":
        return _checks(field, disabled)
    if field.widget == "rows":
        return rows_table(field, Editing, disabled)
    if field.widget == "switch":
        return rx.switch(checked=Editing.flags[field.key], on_change=lambda v: Editing.set_flag(field.key, v),
                         disabled=disabled, id=ident, aria_labelledby=f"{ident}-label")
    value = _text(field.key)
    on_change = lambda v: Editing.set_value(field.key, v)  # noqa: E731
    if field.widget == "code":
        return code_editor(value, on_change, language=field.language, label=t(field.label), id=ident,
                           height=field.height, width=field.width, read_only=disabled)
    if field.widget == "pick":
        return picker(Editing, field.key, value, on_change, label=t(field.label), disabled=disabled,
                      multiple=field.multiple, also=field.also, id=ident)
    if field.widget == "select" and field.options_by is not None:
        return _options_by(field, ident, value, on_change, disabled)
    if field.widget == "select" and field.choices is not None:
        return rx.select.root(
            rx.select.trigger(id=ident, width="100%", aria_labelledby=f"{ident}-label"),
            rx.select.content(rx.foreach(rx.cond(Editing.choices.contains(field.key), Editing.choices[field.key], []),
                                         lambda choice: rx.select.item(_choice_label(choice), value=choice[0]))),
            value=rx.cond(value == "", EMPTY_CHOICE, value), on_change=on_change, disabled=disabled,
        )
    if field.widget == "select":
        return rx.select(list(field.options), value=value, on_change=on_change, disabled=disabled, id=ident,
                         custom_attrs={"aria-labelledby": f"{ident}-label"})
    if field.widget == "textarea":
        return rx.text_area(value=value, on_change=on_change, disabled=disabled, id=ident, rows=str(field.rows),
                           width="100%")
    kind = {"password": "password", "number": "number"}.get(field.widget, "text")
    bounds = {k: str(v) for k, v in (("min", field.minimum), ("max", field.maximum)) if v is not None}
    return rx.input(value=value, on_change=on_change, disabled=disabled, type=kind, id=ident, width="100%",
                    **bounds)


def _label(field: Field) -> rx.Component:
    """The field's label, or the first of its `relabel` whose condition holds for the edited values."""
    ident = _ident(field)
    label = field_label(field.label, ident)
    for condition, other in reversed(field.relabel):
        label = rx.cond(condition(Editing.values, Editing.flags), field_label(other, ident), label)
    return label


def _row(field: Field) -> rx.Component:
    row = rx.grid(
        _label(field),
        rx.box(_widget(field), field.addon() if field.addon else rx.fragment(), width="100%"),
        columns="12em 1fr", spacing="3", width="100%",
    )
    if field.shown_when is not None:
        # the condition is on the edited values, evaluated in the browser
        row = rx.cond(field.shown_when(Editing.values, Editing.flags), row, rx.fragment())
    return rx.cond(Editing.hidden.contains(field.key), rx.fragment(), row)


def _identity(screen: Screen) -> list[rx.Component]:
    on_owner = lambda v: Editing.set_value("owner", v)  # noqa: E731
    owner_input = rx.input(value=Editing.values["owner"], on_change=on_owner, disabled=Editing.locked.contains("owner"),
                           id="field-owner", width="100%")
    if screen.owner_picker:
        # the organizations, for those who may move the record; a fixed text for everyone else
        shared = ((b.ADMIN_OWNER, "admin (Shared)"),) if screen.kind.ownership is Ownership.SHARED else ()
        # (the viewer's rank is known before the record is read: no picker flashes for the others)
        owner_input = rx.cond(~Account.is_global_admin | Editing.locked.contains("owner"), owner_input, picker(
            Editing, "owner", _text("owner"), on_owner, label=t("Organization"), disabled=False, also=shared,
            id="field-owner"))
    owner = rx.grid(
        field_label(screen.owner_label, "field-owner"), owner_input, columns="12em 1fr", spacing="3",
        width="100%",
    )
    name = rx.grid(
        field_label(screen.name_label, "field-name"),
        rx.input(value=Editing.values["name"], on_change=lambda v: Editing.set_value("name", v),
                 disabled=Editing.locked.contains("name"), id="field-name", width="100%"),
        columns="12em 1fr", spacing="3", width="100%",
    )
    shows_owner = "owner" in screen.edit_keys
    return [owner, name] if shows_owner else [name]


def _buttons(screen: Screen, where: str, actions: tuple[rx.Component, ...] = ()) -> rx.Component:
    """The same buttons above and below the form; `where` keeps their ids apart.
    `actions`: the screen's own buttons after Save & Exit (top row only: their ids are unique).
    A view-only screen, or a record the viewer may not change, has Back instead of Save and Save & Exit."""
    suffix = "" if where == "top" else "-bottom"
    back = rx.link(rx.button(t("Back"), variant="soft"), href=screen.list_route, id=f"edit-back{suffix}")
    saving = rx.fragment(
        rx.button(t("Save"), on_click=Editing.save(False), loading=Editing.busy, id=f"edit-save{suffix}"),
        rx.button(t("Save & Exit"), on_click=Editing.save(True), variant="soft", id=f"edit-save-exit{suffix}"))
    return rx.hstack(
        back if screen.view_only else rx.cond(Editing.read_only, back, saving),
        rx.cond(Editing.mode == "add",
                rx.button(t("Cancel"), on_click=Editing.cancel, variant="soft", color_scheme="gray",
                          id=f"edit-cancel{suffix}")),
        *(actions if where == "top" else ()),
        spacing="2",
    )


def _shown_once() -> rx.Component:
    """What the list's Add was answered once (Screen.shown_once: an access key's secret), each with
    Copy; the page's next load, or another page, shows it no more."""
    def item(entry: rx.Var) -> rx.Component:
        ident = "once-" + entry[0].to(str)
        return rx.grid(
            rx.text(rx.el.label(entry[1], html_for=ident), size="2", weight="medium", padding_top="0.4em"),
            rx.hstack(rx.input(value=entry[2], read_only=True, id=ident, width="100%", font_family="monospace"),
                      rx.button(rx.icon("copy", size=14), t("Copy"), variant="soft", type="button",
                                on_click=[rx.set_clipboard(entry[2]),
                                          rx.toast.success(t("Copied to clipboard successfully"))]),
                      width="100%", spacing="2"),
            columns="12em 1fr", spacing="3", width="100%")

    return rx.cond(Editing.shown_once.length() > 0, rx.card(rx.vstack(
        rx.callout(t("Copy it now: it is shown only this once."), icon="key-round", color_scheme="orange",
                   width="100%"),
        rx.foreach(Editing.shown_once, item), spacing="3", width="100%"), width="100%", id="edit-shown-once"))


def _unsaved_marker() -> rx.Component:
    """What assets/iam.js reads before the page is left (a link, a reload, closing the tab):
    while the form holds unsaved edits it asks the question first."""
    return rx.el.div(id="edit-unsaved", hidden=True, data_dirty=rx.cond(Editing.dirty, "true", "false"),
                     data_question=t("You have unsaved changes. Leave this page?"))


def edit_page(screen: Screen, *extra: rx.Component, actions: tuple[rx.Component, ...] = ()) -> rx.Component:
    """`extra`: the screen's own sections under the fields (tables, trees); `actions`: its own
    buttons beside Save and Save & Exit (the LDAP server's Sync LDAP)."""
    # a secret typed and left unsaved is not kept once the form is gone (a screen without
    # password fields sends nothing: one event less on every page left)
    secrets = {"on_unmount": Editing.forget_secrets} \
        if screen.shown_once or any(f.widget == "password" for f in screen.fields) else {}
    return rx.vstack(
        rx.hstack(rx.heading(t(screen.title), size="5"), rx.spacer(), _buttons(screen, "top", actions), width="100%",
                  align="center"),
        _shown_once() if screen.shown_once else rx.fragment(),
        rx.card(rx.vstack(*_identity(screen), *[_row(f) for f in screen.fields if f.key != "owner"], *extra,
                          spacing="3", width="100%"), width="100%", id="edit-form", **secrets),
        _unsaved_marker(),
        _buttons(screen, "bottom"),
        spacing="3", width="100%", max_width="60em",
    )
