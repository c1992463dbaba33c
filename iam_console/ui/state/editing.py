"""The state of every edit page: add and
edit modes, Save (stay and re-read, following a rename), Save & Exit, Cancel
in add mode (deletes the just-created record), the name reverting after a
failed save (and the owner, on the screens that say so: reverts_owner), /404
for a missing record and /403 for a refused one.
Every rule is the service layer's: the page sends its fields back through
crud.update_record, as a Casdoor client would."""

from __future__ import annotations

import inspect
import re
from typing import Any
from urllib.parse import quote

import reflex as rx

from iam_console.core import crud, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import Ownership
from iam_console.models.base import wire_name
from iam_console.ui.screens import SCREENS, Field, Screen, ViewerValue
from iam_console.ui.state.picking import Picking
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.rows import Rows
from iam_console.ui.state.service import audit_request, call, say

# A screen whose records hold structured fields (tables, trees, objects) keeps them
# in states of its own, its sections (`Screen.sections`). A section has
# `_load(db, actor, record)`, called whenever the page reads the record, and
# `_changes() -> dict`, the wire fields it changed, merged into the record on save.
EMPTY_CHOICE = "__empty__"  # a select's "" (Radix selects have no empty value)
TEXT_LIMIT = 20_000  # a field's text; longer input is cut (a code field's is refused instead)
CODE_LIMIT = 1_000_000  # a code field's text (an application's HTML, a model)
STRUCTURED = ("rows",)  # widgets whose value is not one text
# An opened edit page puts the cursor in its first field the viewer may change. The fields come
# with the record, after this event's state, so it looks again for up to a second; once the user
# has put the cursor somewhere themselves, it is left there. Written out here rather than in
# assets/iam.js: the page's load event may run before that script has loaded.
FOCUS_FIRST_FIELD = rx.call_script("""(function focusFirst(tries) {
  const chosen = document.activeElement;
  if (chosen && chosen !== document.body && chosen.closest("#edit-form")) return;
  const field = document.querySelector("#edit-form")?.querySelector(
    "input:not([disabled]):not([type=hidden]):not([type=file]), textarea:not([disabled]), "
    + "button[role=combobox]:not([disabled]), button[role=switch]:not([disabled])");
  if (field) field.focus();
  else if (tries > 0) setTimeout(() => focusFirst(tries - 1), 50);
})(20)""")


def _focused(loaded: Any) -> list:
    """The events after reading the record, then the focus on the first field."""
    return [*(loaded if isinstance(loaded, list) else [loaded] if loaded is not None else []), FOCUS_FIRST_FIELD]


class Editing(Rows, Picking, rx.State):
    screen_key: str = ""
    mode: str = "edit"  # "add": opened by the list's Add, with Cancel deleting the record
    values: dict[str, str] = {}  # inputs, selects, numbers, comma-separated lists
    flags: dict[str, bool] = {}  # switches
    locked: list[str] = []  # wire names the viewer may not change
    read_only: bool = False  # the viewer may not change the record at all (or the screen only shows it)
    hidden: list[str] = []  # wire names the viewer may not see
    choices: dict[str, list[list[str]]] = {}  # select options read with the record: [value, label]
    saved_owner: str = ""
    saved_name: str = ""
    return_url: str = ""
    busy: bool = False
    checked: dict[str, bool] = {}  # the screen's `checks` of the edited values
    dirty: bool = False  # edited since read or saved: leaving the page asks first (docs/architecture.md)
    _record: dict[str, Any] = {}  # the record as last read, sent back with the changes
    _staged: dict[str, Any] = {}  # wire fields changed by the page's own sections (tables, pickers)
    _viewer: dict[str, str] = {}  # the signed-in viewer's own contact fields (a Field's ViewerValue)
    _picker_fills: dict[str, str] = {}  # what the pickers' `fill` read with the record
    _renamed_to: str = ""  # the path a save's rename moves to: its page load keeps what the save read
    # what the list's Add was answered once (Screen.shown_once), as [key, label, value]: handed over
    # for the edit page at `_once_path`, shown by its next load only, and gone with the form
    shown_once: list[list[str]] = []
    _once: list[list[str]] = []
    _once_path: str = ""

    @property
    def _screen(self) -> Screen:
        return SCREENS[self.screen_key]

    @rx.event
    async def open(self, screen_key: str):
        self.screen_key = screen_key
        query = self.router.url.query_parameters
        self.mode = "add" if query.get("mode") == "add" else "edit"
        self.return_url = _local(str(query.get("returnUrl", "")))
        path = self.router.url.path
        renamed_to, self._renamed_to = self._renamed_to, ""
        if path == renamed_to and self.mode == "edit":
            # the save re-read the renamed record before moving here: reading it again would
            # overwrite what the user typed meanwhile (a late read lands after their typing), and
            # the cursor stays where the user has it
            return None
        # a secret shown once: on the page it was handed to, at its first load (not after a reload)
        self.shown_once = self._once if path == self._once_path else []
        self._once, self._once_path = [], ""
        owner, name = _id_from_path(self._screen, path)
        return _focused(await self._read(owner, name))

    def hand_over(self, path: str, once: list[list[str]]) -> None:
        """What the list's Add was answered once, for the edit page it opens (`path`)."""
        self._once, self._once_path = once, path

    @rx.event
    async def open_account(self):
        """/account: the signed-in user's own record."""
        self.screen_key, self.mode = "user", "edit"
        actor = (await call(self, lambda db, viewer: viewer)).value
        if actor is None or actor.user is None:
            return rx.redirect("/login")
        self.return_url = _local(str(self.router.url.query_parameters.get("returnUrl", ""))) or (
            "/users" if actor.is_admin else "/")
        return _focused(await self._read(actor.user.owner, actor.user.name))

    async def _read(self, owner: str, name: str):
        screen, prefs = self._screen, await self.get_state(Prefs)
        parts = [await self.get_state(part) for part in screen.sections]

        def read(db, actor):
            if (screen.admins_only and not actor.is_admin) or (screen.global_admins_only
                                                               and not actor.is_global_admin):
                raise ServiceError(policy.UNAUTHORIZED)
            # a record that is missing (or out of the viewer's reach) is the /404 page, also for a
            # kind whose get-X answers an error for it (tokens)
            row = crud.readable_row(db, actor, screen.kind, owner, name)
            if row is None:
                if screen.foreign_is_forbidden and crud.exists(db, screen.kind, owner, name):
                    raise ServiceError(policy.UNAUTHORIZED)
                return None
            record = crud.get_record(db, actor, screen.kind, owner, name)
            if record is not None:
                user = actor.user
                self._viewer = {"name": user.name, "email": user.email or "",
                                "phone": user.phone or ""} if user is not None else {}
                # a record the viewer may read but not change (a shared provider to an organization
                # admin) is shown read-only: every field locked, Back instead of Save
                self.read_only = screen.view_only or not policy.allows(actor, screen.kind, row, row)
                self.locked, self.hidden = _restrictions(db, actor, screen, record, self.read_only)
                for part in parts:
                    part._load(db, actor, record)
                self.choices = _choices(db, actor, screen, record, prefs)
                self._picker_fills = _fills(db, actor, screen, record)
            return record

        read_ = await call(self, read, forbidden_page=True)
        if read_.failed:
            return read_.event
        record = read_.value
        if record is None:
            return rx.redirect("/404")
        self._record = record
        self.saved_owner, self.saved_name = str(record.get("owner", "")), str(record.get(_name_key(screen), ""))
        self.values = {f.key: _text(_entry(record, f.key)) or f.empty for f in screen.fields
                       if f.widget != "switch" and f.widget not in STRUCTURED}
        self.values |= {"owner": self.saved_owner, "name": self.saved_name} | self._picker_fills
        self.flags = {f.key: bool(_entry(record, f.key)) for f in screen.fields if f.widget == "switch"}
        self._staged = {}
        for key in self._row_fields():
            self._load_rows(key, record.get(key))
        self.dirty = False
        self._check()
        return screen.after_read  # the screen's own parts that load after the record (an event)

    def stage(self, key: str, value: Any) -> None:
        """A section's edit of a wire field (a properties table, a group picker): saved with the form."""
        if key not in self.locked and key not in self.hidden:
            self._staged = {**self._staged, key: value}
            self.dirty = True

    def put_value(self, key: str, value: str) -> bool:
        """A value set by the page's own tools (an uploaded file's URL), saved with the form."""
        if key in self.locked or key in self.hidden:
            return False
        self.values = {**self.values, key: value}
        self.dirty = True
        return True

    # --- the row tables' and pickers' declarations (the Rows and Picking mixins) ---

    def _field(self, key: str) -> Field | None:
        return next((f for f in self._screen.fields if f.key == key), None) if self.screen_key else None

    def _row_fields(self) -> dict[str, Field]:
        return {f.key: f for f in self._screen.fields if f.widget == "rows"} if self.screen_key else {}

    def _row_locked(self, key: str) -> bool:
        return key in self.locked or key in self.hidden

    def _put(self, key: str, items: list[dict[str, Any]]) -> None:
        """A row table changed (loaded too: `_read` clears `dirty` after loading the tables)."""
        Rows._put(self, key, items)
        self.dirty = True

    def _pick_spec(self, ident: str) -> tuple[str, str, str] | None:
        if ident == "owner":
            return ("organization", "", "name") if self.screen_key and self._screen.owner_picker else None
        key, _, column = ident.partition(".")
        field = self._field(key)
        if field is not None and column:
            cell = next((c for c in field.columns if c.key == column and c.widget == "pick"), None)
            return (cell.kind, cell.category, cell.form) if cell else None
        if field is None or field.widget != "pick":
            return None
        return field.kind, field.category, field.form or _reference_form(self._screen, key)

    def _pick_organization(self) -> str:
        """Pickers offer the records of the edited record's organization."""
        kind = self._screen.kind
        if kind.ownership is Ownership.ADMIN:
            return str(self._record.get(wire_name(kind.model, kind.organization_attr)) or self.saved_owner)
        # the organization as edited: a record moved to another organization picks from that one
        return self.values.get("owner") or self.saved_owner

    def _pick_values(self, ident: str) -> tuple[str, ...] | None:
        field = self._field(ident)
        return field.options if field is not None and field.widget == "pick" and not field.kind else None

    def _pick_get(self, ident: str) -> list[str]:
        return [v.strip() for v in self.values.get(ident, "").split(",") if v.strip()]

    def _pick_exclude(self, ident: str) -> str:
        field = self._field(ident)
        return f"{self.saved_owner}/{self.saved_name}" if field is not None and field.not_self else ""

    def _pick_set(self, ident: str, values: list[str]) -> None:
        field = self._field(ident)
        if field is not None and field.widget == "pick" and field.multiple and ident not in self.locked:
            self.values[ident] = ", ".join(values)

    def _enabled(self, field: Field | None) -> bool:
        """A field whose `enabled_when` is false of the edited values takes no edit."""
        return field is None or field.enabled_when is None or bool(field.enabled_when(self.values, self.flags))

    async def _refused(self, field: Field | None, values: dict[str, str], flags: dict[str, bool]) -> Any:
        """The field's `check` of the values after a change: a toast when it refuses it."""
        message = field.check(values, flags) if field is not None and field.check is not None else ""
        if message:
            prefs = await self.get_state(Prefs)
            return rx.toast.error(prefs.say(message))
        return None

    @rx.event
    async def set_value(self, key: str, value: str):
        field = self._field(key)
        if key in self.locked or not self._enabled(field):
            return
        if field is not None and field.widget == "code":
            # code is never cut short: a text over the limit is refused, the editor keeps it
            if len(value) > CODE_LIMIT:
                prefs = await self.get_state(Prefs)
                return rx.toast.error(prefs.say("The text is too long: at most %s characters", str(CODE_LIMIT)))
        else:
            value = "" if value == EMPTY_CHOICE else value[:TEXT_LIMIT]
        refused = await self._refused(field, {**self.values, key: value}, self.flags)
        if refused is not None:
            return refused
        self.dirty = self.dirty or self.values.get(key) != value
        self.values[key] = value
        if field is not None and field.copy_to and field.copy_to not in self.locked and re.fullmatch(
                field.copy_pattern, value):
            self.values[field.copy_to] = value
        self._then(key, value)
        if field is not None and field.fill is not None:
            organization = self._pick_organization()
            filled = await call(self, lambda db, actor: field.fill(db, actor, organization, value))
            if not filled.failed:
                self.values |= filled.value

    @rx.event
    def toggle_option(self, key: str, option: str, on: bool):
        """A checks field: one of its options checked or unchecked (kept in the options' order)."""
        field = next((f for f in self._screen.fields if f.key == key), None)
        if key in self.locked or field is None or option not in field.options:
            return
        chosen = {part.strip() for part in self.values.get(key, "").split(",") if part.strip()}
        chosen = chosen | {option} if on else chosen - {option}
        self.values[key] = ", ".join(o for o in field.options if o in chosen)
        self.dirty = True

    @rx.event
    async def set_flag(self, key: str, value: bool):
        field = self._field(key)
        if key in self.locked or not self._enabled(field):
            return
        refused = await self._refused(field, self.values, {**self.flags, key: bool(value)})
        if refused is not None:
            return refused
        self.dirty = self.dirty or self.flags.get(key) != bool(value)
        self.flags[key] = bool(value)
        self._then(key, self.flags[key])

    def _check(self) -> None:
        self.checked = {name: bool(judge(self.values, self.flags)) for name, judge in self._screen.checks}

    def _then(self, key: str, value: Any) -> None:
        field = self._field(key)
        if field is not None:
            for other, text in then_values(field, value, self.values).items():
                target = self._field(other)
                if other in self.locked and not (target is not None and target.derived):
                    continue
                if isinstance(text, list) and other in self._row_fields():
                    # a table's new rows (a syncer's preset columns): loaded, and sent on save
                    loaded = self._row_loaded.get(other)
                    self._load_rows(other, text)
                    self._row_loaded = {**self._row_loaded, other: loaded}
                    self.dirty = True
                elif isinstance(text, bool):
                    self.flags[other] = text
                else:
                    self.values[other] = self._viewer.get(text.key, "") if isinstance(text, ViewerValue) else text
        self._check()

    def _changes(self) -> dict[str, Any]:
        """What the page edits, in its wire types, from the form's strings (and the sections'
        staged fields). Only those go back: what changed elsewhere since the page read the
        record (a sign-in's bookkeeping, a password or keys set from a dialog) stays as stored."""
        record: dict[str, Any] = {}
        for field in self._screen.fields:
            if field.key in self.locked or field.key in self.hidden or field.widget in STRUCTURED:
                continue
            if "." in field.key:  # an entry of an object field
                whole, _, entry = field.key.partition(".")
                before = record.get(whole, self._record.get(whole))
                record[whole] = {**(before if isinstance(before, dict) else {}), entry: (
                    self.flags.get(field.key, False) if field.widget == "switch" else self.values.get(field.key, ""))}
            elif field.widget == "switch":
                record[field.key] = self.flags.get(field.key, False)
            elif field.key in self.values:
                record[field.key] = _typed(field, self.values[field.key], self._record.get(field.key))
        record |= self._rows_changes()
        record |= {key: value for key, value in self._staged.items()
                   if key not in self.locked and key not in self.hidden}
        record["owner"], record[_name_key(self._screen)] = self.values.get("owner", ""), self.values.get("name", "")
        return record

    @rx.event
    async def save(self, leave: bool = False):
        screen = self._screen
        if screen.view_only or self.read_only:  # nothing to save (an event sent by hand)
            return None
        self.busy = True
        try:
            changes = self._changes()
        except ValueError as exc:
            return await self._save_failed(str(exc))
        finally:
            self._forget_secrets()  # saved or refused, a typed secret is not kept
        for part in screen.sections:
            changes |= (await self.get_state(part))._changes()
        request = await audit_request(self)
        owner, name = self.saved_owner, self.saved_name

        def update(db, actor):
            if crud.update_record(db, actor, screen.kind, owner, name, changes, request) == crud.UNAFFECTED \
                    and crud.readable_row(db, actor, screen.kind, owner, name) is None:
                # deleted meanwhile: nothing was saved, and the page says so rather than "saved"
                raise ServiceError("The %s: %s/%s does not exist", screen.kind.name, owner, name)

        saved = await call(self, update, failed=screen.messages.save_failed)
        if saved.failed:
            self._revert()
            return saved.event
        self.busy, self.dirty = False, False
        toast = rx.toast.success(await say(self, screen.messages.saved))
        if leave:
            return [toast, rx.redirect(self.return_url or screen.exit_url(changes))]
        name = changes[_name_key(screen)]
        renamed = (changes["owner"], name) != (self.saved_owner, self.saved_name)
        # re-read before the page moves: an edit made before the new page's on_load
        # arrives then goes to the renamed record, not to the name that is gone
        reloaded = await self._read(changes["owner"], name)
        self.mode = "edit"
        if renamed and self.router.url.path != "/account":
            back = f"?returnUrl={quote(self.return_url, safe='/')}" if self.return_url else ""
            self._renamed_to = screen.edit_url(changes)
            return [toast, rx.redirect(self._renamed_to + back)]
        return [toast, reloaded] if reloaded is not None else toast

    def _forget_secrets(self) -> None:
        """A secret typed into a password field (a provider's client secret, the master password)
        is held no longer than its save: the field goes back to what the read showed, the mask
        (those fields are the kinds' secrets, never read unmasked). docs/security.md, "Where typed
        secrets travel"."""
        for field in self._screen.fields:
            if field.widget == "password" and field.key in self.values:
                self.values[field.key] = _text(_entry(self._record, field.key)) or field.empty

    @rx.event
    def forget_secrets(self):
        """The form is gone (another page): an unsaved typed secret goes with it."""
        if self.screen_key in SCREENS:
            self._forget_secrets()
        self.shown_once = []

    def _revert(self) -> None:
        """A failed save puts the saved name back, and the owner only where the screen says
        so (reverts_owner: a user's): every other typed value stays, so that the next save sends what the user
        chose (a role's members of the organization chosen for it)."""
        self.busy = False
        self.values["name"] = self.saved_name
        if self._screen.reverts_owner:
            self.values["owner"] = self.saved_owner

    async def _save_failed(self, message: str):
        self._revert()
        template = self._screen.messages.save_failed
        return rx.toast.error(await say(self, template, message) if "%s" in template else await say(self, template))

    @rx.event
    async def cancel(self):
        """Add mode only: the record the list just created goes."""
        screen = self._screen
        if self.mode == "add":
            request = await audit_request(self)
            gone = await call(self, lambda db, actor: crud.delete_record(db, actor, screen.kind, self.saved_owner,
                                                                         self.saved_name, request),
                              failed="Failed to delete: %s")
            if gone.failed:
                return gone.event
        return rx.redirect(self.return_url or screen.exit_url(self._record))


def then_values(field: Field, value: Any, values: dict[str, str]) -> dict[str, Any]:
    """What a change of the field also sets: its `then` of the new value, or, for a `then` of two
    parameters, of the new value and the form's texts as they are now."""
    if field.then is None:
        return {}
    if len(inspect.signature(field.then).parameters) > 1:
        return field.then(value, dict(values))
    return field.then(value)


def _local(url: str) -> str:
    """A return URL within the console only."""
    return url if url.startswith("/") and not url.startswith("//") and "\\" not in url else ""


def _name_key(screen: Screen) -> str:
    """The wire key of the record's name (an LDAP server's is `id`)."""
    return wire_name(screen.kind.model, "name")


def _id_from_path(screen: Screen, path: str) -> tuple[str, str]:
    values = dict(zip(screen.edit_keys, [p for p in path.split("/") if p][-len(screen.edit_keys):], strict=False))
    owner = values.get("owner", "admin" if screen.kind.ownership is Ownership.ADMIN else "")
    return owner, values.get(_name_key(screen), "")


def _reference_form(screen: Screen, key: str) -> str:
    """"id" when the kind's reference declaration says the field stores owner/name, else "name"."""
    ref = next((r for r in screen.kind.references if wire_name(screen.kind.model, r.attribute) == key), None)
    return "id" if ref is not None and ref.form == "id" else "name"


def _entry(record: dict[str, Any], key: str) -> Any:
    """A wire field, or with "a.b" the entry b of the object field a."""
    whole, dot, entry = key.partition(".")
    if not dot:
        return record.get(key)
    value = record.get(whole)
    return value.get(entry) if isinstance(value, dict) else None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _typed(field: Field, text: str, before: Any) -> Any:
    """The form's text as the type the record holds; a clear error if it cannot be."""
    if field.widget == "number" or (isinstance(before, int | float) and not isinstance(before, bool)):
        text = text.strip() or "0"
        try:
            number = float(text) if isinstance(before, float) else int(text)
        except ValueError:
            raise ValueError(f"{field.key} must be a number") from None
        if field.minimum is not None and number < field.minimum:
            raise ValueError(f"{field.key} must be at least {field.minimum}")
        if field.maximum is not None and number > field.maximum:
            raise ValueError(f"{field.key} must be at most {field.maximum}")
        return number
    if field.widget == "list" or (field.widget == "pick" and field.multiple) or isinstance(before, list):
        return [part.strip() for part in text.split(",") if part.strip()]
    return text


def _restrictions(db, actor: Actor, screen: Screen, record: dict[str, Any],
                  read_only: bool = False) -> tuple[list[str], list[str]]:
    """(locked, hidden) wire names for this viewer on this record; everything is locked on a
    read-only page."""
    locked = {f.key for f in screen.fields
              if (f.global_admin_only and not actor.is_global_admin) or (f.locked_for and f.locked_for(record))
              or f.derived}
    if not actor.is_global_admin or screen.owner_locked(record):
        locked.add("owner")
    if screen.name_locked(record):
        locked.add("name")
    if read_only:
        locked |= {f.key for f in screen.fields} | {"owner", "name"}
    hidden: set[str] = set()
    if screen.restrictions is not None:
        more_locked, more_hidden = screen.restrictions(db, actor, record)
        locked |= more_locked
        hidden |= more_hidden
    return sorted(locked), sorted(hidden)


def _fills(db, actor: Actor, screen: Screen, record: dict[str, Any]) -> dict[str, str]:
    """What the pickers' `fill` makes of the record's values, read with the record."""
    organization = str(record.get("owner", ""))
    out: dict[str, str] = {}
    for field in screen.fields:
        if field.fill is not None:
            try:
                out |= field.fill(db, actor, organization, _text(record.get(field.key)))
            except ServiceError:
                continue
    return out


def _choices(db, actor: Actor, screen: Screen, record: dict[str, Any], prefs: Prefs) -> dict[str, list[list[str]]]:
    """The options of the screen's selects that depend on the record (its organization's
    groups, applications...), with the current value kept even when it is not among them."""
    out: dict[str, list[list[str]]] = {}
    for field in screen.fields:
        if field.choices is None:
            continue
        options = [[value or EMPTY_CHOICE, prefs.say(label) if label else value, icon]
                   for value, label, icon, *_ in ([*c, ""] for c in field.choices(db, actor, record))]
        current = _text(record.get(field.key)) or EMPTY_CHOICE
        if all(value != current for value, *_ in options):
            options.append([current, current if current != EMPTY_CHOICE else "", ""])
        out[field.key] = options
    return out
