"""The list page of a Screen: server-side paging, sorting, column search and
filters, quick jumper, size changer, total line, Add, Edit and Delete with
its confirmation; and the same list inside another page (`sublist`). Each is
drawn over a state using the `Lists` mixin."""

from __future__ import annotations

from collections.abc import Callable

import reflex as rx

from iam_console.ui.components.dialogs import confirm
from iam_console.ui.components.section import section
from iam_console.ui.screens import Column, RowAction, Screen
from iam_console.ui.state.account import Account
from iam_console.ui.state.listing import PAGE_SIZES, Listing, Lists, Paging
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.text import t


def _header(column: Column, state: type[Lists]) -> rx.Component:
    label = t(column.label)
    if not column.sortable:
        return rx.table.column_header_cell(label)
    arrow = rx.cond(
        state.sort_field == column.key,
        rx.cond(state.sort_order == "ascend", rx.icon("arrow-up", size=12), rx.icon("arrow-down", size=12)),
        rx.icon("arrow-up-down", size=12, opacity="0.35"),
    )
    # a button, so that the keyboard sorts too; the header cell says the order to screen readers
    order = rx.cond(state.sort_field == column.key,
                    rx.cond(state.sort_order == "ascend", "ascending", "descending"), "none")
    return rx.table.column_header_cell(
        rx.el.button(rx.hstack(label, arrow, align="center", spacing="1"), type="button",
                     on_click=state.sort(column.key), id=f"sort-{column.key}", cursor="pointer",
                     background="none", border="none", padding="0", font="inherit", color="inherit"),
        aria_sort=order,
    )


def _hideable(column: Column, state: type[Lists], component: rx.Component) -> rx.Component:
    """A column some viewers are not shown (Column.hidden_for): its header and cells."""
    if column.hidden_for is None:
        return component
    return rx.cond(state.hidden_columns.contains(column.key), rx.fragment(), component)


def _cell(column: Column, row: rx.Var) -> rx.Component:
    value = row[column.key]
    if column.caption:
        shown = rx.text(t(column.caption), size="2")
    elif column.kind == "bool":
        # read-only: the theme's switch rules show a disabled "on" in the accent colour
        shown = rx.switch(checked=value == "true", disabled=True, size="1", aria_label=t(column.label))
    elif column.kind == "media":  # a picture, or a video player; nothing for other files
        kind = row[f"{column.key}__media"]
        shown = rx.cond(kind == "image", rx.image(src=value, alt=row["__name"], height="40px", max_width="80px"),
                        rx.cond(kind == "video", rx.video(src=value, controls=True, width="160px", height="90px"),
                                rx.fragment()))
    elif column.kind == "avatar":
        # a picture named after its column (a Radix avatar's picture carries no alternative text)
        shown = rx.cond(value != "", rx.image(src=value, alt=t(column.label), width="32px", height="32px",
                                              border_radius="50%", object_fit="cover"), rx.fragment())
    elif column.kind == "links":  # entries joined by ", ", each a link to the href and the entry
        # (a row of the screen shown before this one, for a moment after a navigation, has no such key)
        listed = row.get(column.key, "").to(str)
        return rx.table.cell(rx.cond(listed != "", rx.vstack(rx.foreach(
            listed.split(", "), lambda item: rx.link(item, href=row.get(f"{column.key}__href", "").to(str) + item,
                                                     size="2")),
            spacing="0"), rx.fragment()))
    elif column.kind == "tags":
        shown = rx.cond(value != "", rx.badge(value, variant="soft"), rx.fragment())
    elif column.kind == "badge":  # a state: its catalog text in its colour
        shown = rx.cond(value != "", rx.match(
            value,
            *[(raw, rx.badge(t(raw), color_scheme=color, variant="soft", class_name=f"badge-{color}"))
              for raw, color in column.colors],
            rx.badge(value, color_scheme="gray", variant="soft", class_name="badge-gray")), rx.fragment())
    else:
        shown = rx.text(value, size="2")
    for raw, caption in column.shown_as:
        shown = rx.cond(value == raw, rx.text(t(caption), size="2"), shown)
    href = row[f"{column.key}__href"]
    away = {"is_external": True, "rel": "noopener noreferrer"} if column.external else {}
    if column.link and column.caption:
        shown = rx.link(shown, href=href, **away)
    elif column.link:  # an empty value is no link (a link needs text to be named by), nor an empty href
        shown = rx.cond((value != "") & (href != ""), rx.link(shown, href=href, **away), shown)
    if column.shown_when:
        shown = rx.cond(row[f"{column.key}__shown"] == "true", shown, rx.fragment())
    return rx.table.cell(shown)


RowActions = Callable[[rx.Var], list[rx.Component]]
# The Action column stays at the table's right edge while its other columns scroll under it: a
# list of many columns is wider than a 1280 px screen, and Edit and Delete stay in reach (the
# table's scrollbar shows only on hover). Its background is the panel's, opaque, so that the
# cells passing under it do not show through; a line marks its edge.
STICKY_ACTIONS = {"position": "sticky", "right": "0", "z_index": "1", "background_color": "var(--color-panel-solid)",
                  "box_shadow": "inset 1px 0 0 var(--gray-a5)"}
# the surface table clips its <table> (overflow: hidden, for its rounded corners), which would be
# the sticky cells' scroll container instead of the table's scroll area: it stays unclipped
UNCLIPPED = {"& .rt-TableRootTable": {"overflow": "visible"}}


def _actions_header() -> rx.Component:
    return rx.table.column_header_cell(t("Action"), class_name="list-actions", style=STICKY_ACTIONS)


def _actions(screen: Screen, row: rx.Var, extra: RowActions | None, state: type[Lists]) -> rx.Component:
    delete = rx.button(t("Delete"), size="1", color_scheme="red", variant="soft",
                       disabled=row["__protected"] == "true",
                       on_click=state.ask_delete(row["__key"], row["__name"]))
    if screen.delete_global_admin_only:
        delete = rx.cond(Account.is_global_admin, delete, rx.fragment())
    edit = rx.link(rx.button(t("Edit"), size="1", variant="soft"), href=row["__edit"]) if screen.has_edit_page \
        else rx.fragment()
    return rx.table.cell(rx.hstack(
        edit,
        delete,
        *[_row_button(action, row, state) for action in screen.row_buttons],
        *(extra(row) if extra else []),
        spacing="2",
    ), class_name="list-actions", style=STICKY_ACTIONS)


def _row_button(action: RowAction, row: rx.Var, state: type[Lists]) -> rx.Component:
    """A declared row button (Screen.row_buttons), on the rows it is offered for: a link to the
    record's own page, or a call of the service."""
    if action.run is None:
        button = rx.link(rx.button(t(action.label), size="1", variant="soft", tab_index=-1),
                         href=row[f"__{action.key}__href"], class_name=f"row-{action.key}")
    else:
        button = rx.button(t(action.label), size="1", variant="soft", class_name=f"row-{action.key}",
                           on_click=state.press(action.key, row["__key"]))
    return rx.cond(row[f"__{action.key}"] == "true", button, rx.fragment())


def _search(screen: Screen, state: type[Lists]) -> rx.Component:
    searchable = [c for c in screen.columns if c.searchable]
    filters = [c for c in screen.columns if c.filters]
    return rx.hstack(
        rx.select.root(
            rx.select.trigger(placeholder=t("Search by"), id="search-field", aria_label=t("Search by")),
            rx.select.content(*[rx.select.item(t(c.label), value=c.key) for c in searchable]),
            value=state.search_field, on_change=state.set_search_field, size="2",
        ),
        rx.input(placeholder=t("Search"), value=state.search_value, on_change=state.search.debounce(300),
                 id="search-value", width="16em", aria_label=t("Search")),
        *[rx.select.root(
            rx.select.trigger(placeholder=t(c.label), id=f"filter-{c.key}", aria_label=t(c.label)),
            rx.select.content(rx.select.item(t("All"), value="__all__"), *_filter_options(c)),
            on_change=lambda value, key=c.key: state.filter(key, value), size="2",
        ) for c in filters],
        spacing="2", align="center", wrap="wrap",
    )


def _filter_options(column: Column) -> list[rx.Component]:
    """A filter's values, under their groups' headings when it has groups (a value listed in two
    groups is offered in the first)."""
    if not column.filter_groups:
        return [rx.select.item(option, value=option) for option in column.filters]
    seen: set[str] = set()
    groups = []
    for label, values in column.filter_groups:
        fresh = [v for v in values if v not in seen]
        seen |= set(fresh)
        groups.append(rx.select.group(rx.select.label(t(label)),
                                      *[rx.select.item(v, value=v) for v in fresh]))
    return groups


def pager(state: type[Paging], prefix: str = "") -> rx.Component:
    """Total, previous/next, quick jumper and size changer of a Paging state's table."""
    total = state.total_text if issubclass(state, Lists) else state.total.to_string()
    return rx.hstack(
        rx.text(Prefs.tr["Total %s"].replace("%s", total), size="2", id=f"{prefix}list-total"),
        rx.spacer(),
        rx.icon_button(rx.icon("chevron-left"), size="1", variant="soft", disabled=state.page <= 1,
                       on_click=state.go_to(state.page - 1), id=f"{prefix}page-prev",
                       aria_label=t("Previous page")),
        rx.text(state.page.to_string() + " / " + state.page_count.to_string(), size="2",
                id=f"{prefix}page-current"),
        rx.icon_button(rx.icon("chevron-right"), size="1", variant="soft", disabled=state.page >= state.page_count,
                       on_click=state.go_to(state.page + 1), id=f"{prefix}page-next",
                       aria_label=t("Next page")),
        rx.text(rx.el.label(t("Go to"), html_for=f"{prefix}page-jump"), size="2"),
        rx.input(value=state.jump_to, on_change=state.set_jump_to, on_key_down=state.jump, width="4em",
                 size="1", id=f"{prefix}page-jump"),
        rx.select(PAGE_SIZES, value=state.page_size.to_string(), on_change=state.set_page_size, size="1",
                  id=f"{prefix}page-size", custom_attrs={"aria-label": t("Page size")}),
        align="center", spacing="2", width="100%",
    )


def _confirm_delete(state: type[Lists], ident: str = "delete") -> rx.Component:
    return confirm(Prefs.tr["Sure to delete: %s ?"].replace("%s", state.deleting_label),
                   on_ok=state.confirm_delete, on_cancel=state.cancel_delete, open_=state.deleting != "",
                   ident=ident)


def _upload(screen: Screen, state: type[Lists]) -> rx.Component:
    """The screen's Upload: choosing one file (of the picker's types) sends it."""
    # the drop zone's hidden file input is named by the label around it
    return rx.el.label(rx.upload.root(
        rx.button(rx.icon("upload", size=14), t(screen.upload.label), variant="soft", type="button"),
        id=f"upload-{screen.key}", accept=screen.upload.accept, multiple=False, max_files=1, no_drag=True,
        on_drop=state.upload, on_drop_rejected=state.upload_rejected,
    ), id="list-upload", aria_label=t(screen.upload.label))


def _export(screen: Screen, state: type[Lists]) -> rx.Component:
    """Download CSV: the screen's export route with the list's filters, sort and search, fetched
    and saved by the browser itself (the rows never pass through the websocket)."""
    return rx.button(rx.icon("download", size=14), t("Download CSV"), variant="soft", type="button",
                     on_click=rx.download(url=state.export_href, filename=f"{screen.key}s.csv"), id="list-export")


def list_page(screen: Screen, row_actions: RowActions | None = None, state: type[Lists] = Listing) -> rx.Component:
    """`row_actions`: buttons after Edit and Delete, from the row's Var (the group view's Remove);
    `state`: the list's state (the list pages' `Listing` by default). A read-only screen has
    neither Add nor the actions column."""
    # Add only for viewers the server lets add here (an ordinary user adds no user nor application)
    add = rx.cond(state.may_add, rx.button(rx.icon("plus", size=14), t("Add"), on_click=state.add, id="list-add")) \
        if screen.addable else rx.fragment()
    if screen.add_global_admin_only:
        add = rx.cond(Account.is_global_admin, add, rx.fragment())
    if screen.upload:
        add = rx.hstack(add, rx.cond(Account.is_admin, _upload(screen, state), rx.fragment()), spacing="2")
    if screen.export:
        add = rx.hstack(add, _export(screen, state), spacing="2")
    actions_header = () if screen.read_only else (_actions_header(),)
    table = rx.table.root(
        rx.table.header(rx.table.row(*[_hideable(c, state, _header(c, state)) for c in screen.columns],
                                     *actions_header)),
        rx.table.body(rx.foreach(state.rows, lambda row: rx.table.row(
            *[_hideable(c, state, _cell(c, row)) for c in screen.columns],
            *(() if screen.read_only else (_actions(screen, row, row_actions, state),))))),
        width="100%", size="1", variant="surface", id="list-table", style=UNCLIPPED,
    )
    return rx.cond(
        state.not_authorized,
        rx.vstack(rx.heading("403", size="8", color_scheme="gray"),
                  rx.text(t("Sorry, you do not have permission to access this page or logged in status invalid."),
                          id="list-forbidden"), align="center", width="100%"),
        rx.vstack(
            rx.hstack(rx.heading(t(screen.title), size="5"), rx.spacer(), add, width="100%", align="center"),
            _search(screen, state),
            rx.cond(state.error != "", rx.callout(state.error, icon="triangle-alert", color_scheme="red",
                                                  id="list-error")),
            rx.box(table, overflow_x="auto", width="100%"),
            pager(state),
            _confirm_delete(state),
            spacing="3", width="100%",
        ),
    )


def sublist(screen: Screen, state: type[Lists], title: str, ident: str) -> rx.Component:
    """A Screen's list inside another page (an organization's LDAP servers): its columns,
    Edit and Delete, Add in the heading; the pager only past one page. Shown to viewers who
    may read the records (nothing otherwise). Ids: `{ident}-table`, `{ident}-add`,
    `{ident}-delete` (the confirmation)."""
    table = rx.table.root(
        rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(c.label)) for c in screen.columns],
                                     _actions_header())),
        rx.table.body(rx.foreach(state.rows, lambda row: rx.table.row(
            *[_cell(c, row) for c in screen.columns], _actions(screen, row, None, state)))),
        size="1", variant="surface", width="100%", id=f"{ident}-table", style=UNCLIPPED,
    )
    add = rx.button(rx.icon("plus", size=14), t("Add"), on_click=state.add, size="1", id=f"{ident}-add")
    return rx.cond(state.not_authorized | (state.error != ""), rx.fragment(), section(
        title, f"{ident}-list", rx.box(table, overflow_x="auto", width="100%"),
        rx.cond(state.total > state.page_size, pager(state, f"{ident}-")), _confirm_delete(state, f"{ident}-delete"),
        action=add,
    ))
