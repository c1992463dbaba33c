"""Resource screens declared once: a Screen names its kind,
its routes, its list columns, its edit fields and its hooks; the generic list and
edit pages (ui/components/listing.py, editing.py) and their states do the rest.
docs/architecture.md, "Adding a screen", walks through one."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from iam_console.core.resources import REGISTRY, Kind
from iam_console.i18n import DEFAULT_LANGUAGE
from iam_console.i18n.formats import time_text


@dataclass(frozen=True)
class Column:
    key: str  # the wire name in the record
    label: str  # a catalog key
    # text | bool | time | tags | avatar | links (a list, each entry a link) | media (the URL previewed:
    # a picture or a video player) | badge (the value as a badge coloured by `colors`)
    kind: str = "text"
    # an href template over the record's wire fields: "/organizations/{name}"; or a function of the record;
    # for links, the template's "{item}" (at its end) stands for each entry
    link: str | Callable[[dict[str, Any]], str] = ""
    caption: str = ""  # a catalog key shown instead of the value (a link to somewhere else)
    sortable: bool = True
    searchable: bool = True
    filters: tuple[str, ...] = ()  # values offered as filters (exact match through the search)
    # values shown as a catalog text instead: (("admin", "admin (Shared)"),), the owner of shared records
    shown_as: tuple[tuple[str, str], ...] = ()
    virtual: bool = False  # not a wire field of the kind: a link or value the screen makes itself
    external: bool = False  # the link leaves the console: a new tab, no referrer
    # the cell is drawn only for records this is true of (the records' is-triggered switch)
    shown_when: Callable[[dict[str, Any]], bool] | None = None
    # the whole column is hidden from viewers this is true of (an Actor)
    hidden_for: Callable[[Any], bool] | None = None
    cut: int = 0  # the list shows at most this many characters of the value (0: all of it)
    value: Callable[[dict[str, Any]], Any] | None = None  # the shown value made from the record (else its key's)
    # the filter's values in groups (catalog key of the group, its values): the same values as
    # `filters`, offered under headings (a provider's types by category)
    filter_groups: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # badge: (value, Radix colour) pairs, the value shown as its catalog text; another value is a gray badge
    colors: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ViewerValue:
    """A value a Field's `then` takes from the signed-in viewer's own record (its wire key): the
    receiver of a provider's test email is the admin's own address."""
    key: str


@dataclass(frozen=True)
class Cell:
    """A column of a row table (a Field whose widget is "rows"): one widget per row."""

    key: str  # the key in each row's object
    label: str  # a catalog key
    widget: str = "input"  # input | select | switch | number | tags | pick | text (shown, never edited)
    options: tuple[str, ...] = ()  # a select's values
    options_for: Callable[[dict[str, Any]], Sequence[str]] | None = None  # a select's values for this row
    # a select whose value no two rows share (each row offers its own and the free ones); its
    # options are the same for every row (options_for is not called for it)
    unique: bool = False
    placeholder: str = ""  # a select's value meaning "not chosen yet", shown as a prompt (a catalog key)
    translate: bool = False  # a select's values are shown through the catalog
    labels: tuple[tuple[str, str], ...] = ()  # (value, label): a select's values shown otherwise (catalog keys)
    disabled_when: Callable[[dict[str, Any]], bool] | None = None  # of the row; the server ignores edits
    hidden_when: Callable[[dict[str, Any]], bool] | None = None  # of the row
    # the whole column is shown only when true of the edit page's (values, flags), like Field.shown_when
    # (a table on an edit page only); the state ignores edits of a column not shown
    shown_when: Callable[[Any, Any], Any] | None = None
    key_row: bool = False  # a switch on in exactly one row (turning one on turns the others off)
    default: Any = ""  # a new row's value
    kind: str = ""  # pick: the registry kind offered
    category: str = ""  # pick: only records of this category (providers)
    form: str = "name"  # pick: values are "name" or "id" (owner/name)
    # this cell's change also sets other cells of its row: the new value -> {column key: value}
    then: Callable[[Any], dict[str, Any]] | None = None
    # pick: the chosen record fills other keys of the row, read with the viewer's rights:
    # (db, actor, the edited record's organization, the chosen value) -> {key: value}
    fill: Callable[[Any, Any, str, str], dict[str, Any]] | None = None


@dataclass(frozen=True)
class Field:
    key: str  # the wire name; "a.b": the entry b of the object field a (a provider's userMapping.id)
    label: str  # a catalog key
    # input | password | number | switch | textarea | select | list | checks | rows | pick | code
    widget: str = "input"
    # for select, for checks (a list field: one checkbox per option), and for a pick without a kind
    options: tuple[str, ...] = ()
    global_admin_only: bool = False  # shown disabled to others (e.g. an owner organization)
    locked_for: Callable[[dict[str, Any]], bool] | None = None  # disabled when true of the saved record
    # a value only the service sets: shown disabled and never sent, though another field's `then`
    # may show what the save will set (a permission's approver)
    derived: bool = False
    # hidden unless true of the edited (values, flags): Vars, evaluated in the browser
    shown_when: Callable[[Any, Any], Any] | None = None
    # disabled unless true of the edited (values, flags), like shown_when; the state ignores edits then
    enabled_when: Callable[[Any, Any], Any] | None = None
    # a change refused: the edited (values, flags) as plain dicts after it -> a catalog message, "" to allow
    check: Callable[[dict[str, str], dict[str, bool]], str] | None = None
    minimum: int | None = None
    maximum: int | None = None
    help: str = ""
    empty: str = ""  # what an empty value shows as (and is saved as, once the form is saved)
    # other values this one's change sets: {wire name: value} from the new value (a str, or a bool for
    # a switch); a function of two parameters also gets the form's texts as they are now (`values`);
    # a value set is a text, a bool (a switch's), or a ViewerValue
    then: Callable[..., dict[str, Any]] | None = None
    rows: int = 4  # a textarea's height in lines
    # the label chosen by the edited values: (condition of (values, flags) as in `shown_when`, catalog
    # key), the first that holds; `label` otherwise (a provider's client ID is an Access key for some types)
    relabel: tuple[tuple[Callable[[Any, Any], Any], str], ...] = ()
    # a select whose options depend on another field's edited value: (that field's key, {its value:
    # options}) (a provider's types by its category); the current value is kept when not among them
    options_by: tuple[str, dict[str, tuple[str, ...]]] | None = None
    addon: Callable[[], Any] | None = None  # the screen's own component under the widget (a preview, a dialog)
    # a select's options read when the record is: (db, actor, record) -> [(value, label)] or
    # [(value, label, icon)] (icon: a key of the edit page's CHOICE_ICONS, "Physical" or "Virtual");
    # labels go through the catalog, values may be "" (shown as the first label)
    choices: Callable[[Any, Any, dict[str, Any]], list[tuple[str, str]]] | None = None
    # typing into this field also copies the text into another one when it fully matches the pattern
    copy_to: str = ""
    copy_pattern: str = ""
    virtual: bool = False  # not a wire field of the kind: edited by the page itself, never saved as is
    # code: the editor's language (ui/components/code_editor.py LANGUAGES) and its box
    language: str = "json"
    height: str = "300px"
    width: str = "100%"
    # pick: a searchable select of records of `kind` (of one `category`), one value or a list;
    # values are "name" or "owner/name" as the kind's references declare (`form` overrides);
    # without a kind, of the fixed `options` (an organization's languages)
    kind: str = ""
    multiple: bool = False
    category: str = ""
    form: str = ""
    also: tuple[tuple[str, str], ...] = ()  # values naming no record, offered first: (value, catalog key)
    not_self: bool = False  # pick: never offers the edited record itself (a role's sub-roles)
    # pick: the chosen record fills other values of the form (read with the viewer's rights when the
    # record is read and whenever the value changes): (db, actor, the edited record's organization,
    # the chosen value) -> {key: text}; keys that are no field are the page's own (a permission's
    # model says whether it has roles)
    fill: Callable[[Any, Any, str, str], dict[str, str]] | None = None
    # rows: a table of objects, one Cell per column (ui/state/rows.py)
    columns: tuple[Cell, ...] = ()
    new_row: Callable[[list[dict[str, Any]]], dict[str, Any] | None] | None = None  # None: the table is full
    fixed_row: Callable[[dict[str, Any]], bool] | None = None  # a row that cannot be deleted
    min_rows: int = 0  # Delete is disabled while the table holds this many rows (1: the last row stays)
    settle: Callable[[dict[str, Any]], dict[str, Any]] | None = None  # a changed row made consistent
    # a change refused: the rows as they would be -> a catalog message, "" to allow it
    refuse: Callable[[list[dict[str, Any]]], str] | None = None
    initial: Callable[[], list[dict[str, Any]]] | None = None  # the rows of a record that has none
    movable: bool = False  # Up and Down
    one_at_a_time: bool = False  # rows are edited one at a time (Edit, then Save or Cancel)


@dataclass(frozen=True)
class Messages:
    """The toasts of a screen's writes: catalog keys, "%s" standing for the service's message
    (a message without it is shown as it is)."""
    saved: str = "Successfully saved"
    save_failed: str = "Failed to save: %s"
    add_failed: str = "Failed to add: %s"
    delete_failed: str = "Failed to delete: %s"
    # a delete that found nothing to delete (gone meanwhile) is a failure, not a success
    unaffected_delete_fails: bool = False


@dataclass(frozen=True)
class Route:
    """A page of a screen beyond its list and edit pages (the user screen's "/account")."""
    path: str  # a Reflex route
    title: str  # the tab's title, a catalog key
    component: Callable[[], Any] | None = None  # None: the screen's edit page
    on_load: Any = None


@dataclass(frozen=True)
class Upload:
    """A list's Upload button: one file, sent through Reflex's upload to the service (run on a
    worker thread)."""
    label: str  # the button's catalog key
    accept: dict[str, list[str]]  # the file picker's types (the service judges the file itself)
    max_bytes: int
    # (db, viewer, the organization the list shows, file name, file object) -> None; a ServiceError refuses
    run: Callable[[Any, Any, str, str, Any], Any]
    uploaded: str  # the toast of a success, a catalog key
    failed: str = "%s"  # the toast of a refusal, "%s" standing for the service's message


def workbook_upload(kind_name: str, uploaded: str, failed: str) -> Upload:
    """The .xlsx import of a kind's list (users, roles, permissions): the same import as
    upload-users, upload-roles and upload-permissions (identity/uploads.py)."""
    from iam_console.identity import uploads

    kind = uploads.uploadable(kind_name)
    return Upload("Upload (.xlsx)", uploads.XLSX_ACCEPT, uploads.MAX_UPLOAD_BYTES,
                  lambda db, actor, owner, file_name, file: uploads.import_workbook(db, actor, kind, file, file_name),
                  uploaded, failed)


@dataclass(frozen=True)
class RowAction:
    """A button of every row after Edit and Delete, declared (a webhook event's Replay, an order's
    Pay): a page of the record's own (`link`), or a service call on the record (`run`) whose answer
    is the success toast; either offered only for the records `shown_for` is true of."""
    key: str  # names it among the screen's row actions (and the row's flag of it)
    label: str  # a catalog key
    shown_for: Callable[[dict[str, Any]], bool] | None = None  # of the record; None: every record
    link: str | Callable[[dict[str, Any]], str] = ""  # an href template over the record's wire fields
    # (db, viewer, row key) -> the toast, a catalog key; a ServiceError refuses (`failed`)
    run: Callable[[Any, Any, str], str] | None = None
    failed: str = "%s"  # the toast of a refusal, "%s" standing for the service's message


# (db, viewer, record) -> (locked, hidden) wire names beyond the fields' own rules
Restrictions = Callable[[Any, Any, dict[str, Any]], tuple[set[str], set[str]]]
# (viewer, owner the list shows) -> the list's owner/organization filters
ListScope = Callable[[Any, str], dict[str, str]]


@dataclass(frozen=True)
class Screen:
    key: str  # the registry kind
    title: str  # the list's heading, a catalog key
    list_route: str  # "/organizations"
    edit_route: str  # "/organizations/{name}": placeholders are wire fields of the record; "": no edit page
    columns: tuple[Column, ...]
    fields: tuple[Field, ...]
    page_size: int = 10
    # a list only (records, verifications): with addable=False and no edit_route, not even Delete:
    # the list has no actions column
    read_only: bool = False
    export: str = ""  # a CSV export of the list as filtered: the API route, given the list's parameters
    add_global_admin_only: bool = False
    delete_global_admin_only: bool = False  # the list is read-only to everyone else
    upload: Upload | None = None  # an Upload button for admins
    addable: bool = True  # False: the list has no Add (records the server writes, uploads)
    # a row's own buttons after Edit and Delete, from the row's Var (a resource's Copy link)
    row_actions: Callable[[Any], list[Any]] | None = None
    # a kind not addressed by owner/name alone (sessions): the row's key, and its delete by that key
    row_key: Callable[[dict[str, Any]], str] | None = None
    remove: Callable[[Any, Any, str], str] | None = None  # (db, viewer, row key) -> crud.AFFECTED or not
    name_locked: Callable[[dict[str, Any]], bool] = lambda record: False  # the built-in ones
    owner_locked: Callable[[dict[str, Any]], bool] = lambda record: False  # beyond "global admins only"
    # delete disabled for this record and viewer (record, viewer's "owner/name")
    protected: Callable[[dict[str, Any], str], bool] = lambda record, me: False
    # where Save & Exit goes without a returnUrl: a template over the record's wire fields
    # ("/organizations/{owner}" for an LDAP server, reached from its organization); the list by default
    exit_route: str = ""
    name_label: str = "Name"  # the catalog key labelling the name (an LDAP server's is its ID)
    owner_label: str = "Organization"  # the catalog key labelling the owner (an application's is "admin")
    # the global admin chooses the owner from the organizations (and 'admin (Shared)' for a kind with
    # shared records); everyone else sees it fixed to their own organization
    owner_picker: bool = False
    # a failed save puts the saved owner back too, not only the name (the user page: a user's
    # organization changes only by a save that succeeds)
    reverts_owner: bool = False
    messages: Messages = Messages()
    # its pages (registered for every screen by ui/pages/__init__.py, ui/components/screen_pages.py)
    edit_title: str = ""  # the edit page's tab title, a catalog key ("Organization")
    list_page: bool = True  # False: listed only inside another page (an LDAP server, on its organization's)
    list_routes: tuple[str, ...] = ()  # more routes of the list page ("/organizations/[p0]/users")
    routes: tuple[Route, ...] = ()  # more pages
    parts: Callable[[], tuple[Any, ...]] | None = None  # the edit page's own components under the fields
    actions: Callable[[], tuple[Any, ...]] | None = None  # its own buttons beside Save & Exit
    # hooks: the screen's own parts of the generic pages
    after_read: Any = None  # an event the edit page returns once it read the record (the user's sections)
    # states with `_load(db, actor, record)` and `_changes() -> dict`: the edit page's own sections
    # (tables, trees, lists), loaded with the record and merged into it on save
    sections: tuple[type, ...] = ()
    restrictions: Restrictions | None = None  # what this viewer may not change or see of this record
    admins_only: bool = False  # the edit page is an admin's: anyone else gets the 403 page
    # a record that exists out of the viewer's reach gets the 403 page rather than /404 (the
    # application page's guard): only for a kind whose names are public anyway
    foreign_is_forbidden: bool = False
    # the list and edit pages are the global admin's (the menu shows them to no one else,
    # menu entries seen by "global admins", iam_console/features.py): anyone else gets the 403 page
    global_admins_only: bool = False
    # conditions judged on the server from the edited values, whenever one changes, read by the
    # screen's parts as `Editing.checked[name]` (an address's validity enabling a test button):
    # (name, function of (values, flags) -> bool)
    checks: tuple[tuple[str, Callable[[dict[str, str], dict[str, bool]], bool]], ...] = ()
    # the edit page only shows the record (transactions): every field, the owner and the name are
    # disabled and nothing is saved; Back replaces Save and Save & Exit (Cancel still deletes a
    # record the list's Add just made)
    view_only: bool = False
    list_scope: ListScope | None = None  # what the list shows (an organization admin: their own organization)
    row_buttons: tuple[RowAction, ...] = ()  # declared buttons of every row (Replay, Pay)
    # what add-X answers in data2 that is shown once (an access key's secret: only its hash is kept):
    # (data2 key, catalog label); the edit page the list's Add opens shows it with Copy, and no
    # page shows it again (docs/architecture.md, "Adding a screen")
    shown_once: tuple[tuple[str, str], ...] = ()
    # a kind outside the registry, served by a module of its own rather than the generic routes
    # (the webhook event log): the screen reads it with `reads` and deletes with `remove`
    source: Kind | None = None
    # (db, viewer, the list call's parameters with owner, organization and the column filters) ->
    # a query.Page of wire records: a list read through its kind's own service
    reads: Callable[[Any, Any, dict[str, str]], Any] | None = None

    @property
    def kind(self) -> Kind:
        return self.source or REGISTRY[self.key]

    @property
    def has_edit_page(self) -> bool:
        return bool(self.edit_route)

    @property
    def edit_pattern(self) -> str:
        """The Reflex route of the edit page: "/organizations/[p0]"."""
        parts = []
        index = 0
        for part in self.edit_route.split("/"):
            if part.startswith("{"):
                parts.append(f"[p{index}]")
                index += 1
            else:
                parts.append(part)
        return "/".join(parts)

    @property
    def edit_keys(self) -> list[str]:
        """The wire fields the edit route's placeholders name, in order."""
        return [part[1:-1] for part in self.edit_route.split("/") if part.startswith("{")]

    def edit_url(self, record: dict[str, Any]) -> str:
        if not self.edit_route:
            return ""
        return self.edit_route.format(**{k: record.get(k, "") for k in self.edit_keys})

    def exit_url(self, record: dict[str, Any]) -> str:
        return link(self.exit_route, record) if self.exit_route else self.list_route


SCREENS: dict[str, Screen] = {}  # every declared screen, by its kind


def screen(declared: Screen) -> Screen:
    """Declare a screen: the generic states find it by its kind."""
    SCREENS[declared.key] = declared
    return declared


def cell(column: Column, value: Any, language: str = DEFAULT_LANGUAGE) -> str:
    """A record's value as the list shows it (the state holds only strings)."""
    if value is None:
        return ""
    if column.kind == "bool":
        return "true" if value else "false"
    if column.kind == "time":
        return time_text(value, language)
    text = ", ".join(str(v) for v in value) if isinstance(value, list) else str(value)
    return text[:column.cut] + "…" if column.cut and len(text) > column.cut else text


def link(template: str | Callable[[dict[str, Any]], str], record: dict[str, Any]) -> str:
    if callable(template):
        return template(record)
    try:
        return template.format(**record)
    except (KeyError, IndexError, ValueError):
        return ""
