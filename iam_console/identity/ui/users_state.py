"""The user page's own sections: the password dialog, the
avatar cropper, the API key, groups, properties, roles and permissions, and the
email and phone reset dialogs. They load after the edit
page's record (the screen's `after_read`) and take part in its Save through
Editing.stage; what saves at once (new keys) goes through its service (the edit
page's Save sends only the fields it edits). Every rule is the service layer's.

The password dialog is the exception: the typed passwords never reach this state (which may be
kept in Redis, docs/security.md "Where typed secrets travel"). The browser posts them to
/api/set-password (`window.iamSetPassword` in assets/iam.js) and runs the live hints itself from
the organization's rules (`password_rules`); the state hears only the hints and the answer."""

from __future__ import annotations

import json
from typing import Any

import reflex as rx

from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.federation.ui.linked_state import LinkedSection
from iam_console.identity import accounts, groups, impersonation, users
from iam_console.models import User
from iam_console.models.base import wire_names
from iam_console.signin import verifications
from iam_console.signin.ui.mfa_state import MfaSection
from iam_console.signin.ui.webauthn_state import WebauthnSection
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.listing import Paging
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, count_down, in_thread, message, say

PROPERTY_PAGE_SIZE = 10  # the pager's first size
GROUP_CHOICES = 20  # groups offered per search: never the whole organization
MASKED = "••••••••••••"
PAGE_ITEMS = ("Password", "ID card info", "API key", "Groups", "Roles", "Permissions", "Properties")
# the ID card's pictures: the user properties that hold their URLs, and their labels
ID_CARD_PICTURES = (("idCardFront", "ID card front"), ("idCardBack", "ID card back"),
                    ("idCardWithPerson", "ID card with person"))
INCONSISTENT = "Your confirmed password is inconsistent with the password!"
# what window.iamSetPassword refuses before posting
BROWSER_REFUSALS = {"empty": "Empty input!", "mismatch": "Two passwords you typed do not match."}


def account_item_restrictions(db, actor, record: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(locked, hidden) wire names of a user for this viewer: the organization's account items."""
    target, organization = lookup.user(db, record["owner"], record["name"]), lookup.organization(db, record["owner"])
    names = wire_names(User)
    return ({names.get(a, a) for a in accounts.locked_attributes(actor, organization, target)},
            {names.get(a, a) for a in accounts.hidden_attributes(actor, organization, target)})


def _password_rules(organization, prefs: Prefs) -> str:
    """The password dialog's live hints, as window.iamPasswordHints reads them: the organization's
    password options and its Password item's regex (whole value), each with its message in the
    viewer's language; the set-password route checks the same again."""
    rules = [{"pattern": pattern, "message": prefs.say(text)} for pattern, text in users.password_rules(organization)]
    pattern = accounts.item_patterns(organization).get("Password")
    if pattern:
        rules.append({"pattern": f"^(?:{pattern})$", "message": prefs.say(accounts.PATTERN_MISMATCH)})
    return json.dumps({"rules": rules, "inconsistent": prefs.say(INCONSISTENT)})


def _text(value: Any) -> str:
    return value if isinstance(value, str) else "" if value is None else str(value)


class UserEdit(rx.State):
    hidden_items: list[str] = []  # the PAGE_ITEMS this viewer does not see
    id_card_images: list[dict[str, str]] = []  # {"label", "url"} of the ID card's pictures
    # the password dialog
    password_open: bool = False
    asks_old_password: bool = False  # the user has a password (or LDAP) and the viewer is no global admin
    password_hint: str = ""  # the first rule the new password breaks, in red
    confirm_hint: str = ""
    password_rules: str = "{}"  # JSON for the dialog's data-rules: the hints' regexes and messages
    _global_admin: bool = False  # the viewer: asked no old password
    # API key
    access_key: str = ""
    access_secret: str = ""  # masked, except right after generating
    # groups: {"id": owner/name, "type": Physical | Virtual | ""}
    groups: list[dict[str, str]] = []
    group_options: list[dict[str, str]] = []
    avatar_open: bool = False
    # read-only
    roles: list[str] = []
    permissions: list[str] = []
    impersonable: bool = False  # a global admin sees Impersonate (identity/impersonation.impersonable)

    @rx.event
    async def load(self):
        """After the edit page read its record (which checked the viewer may see it)."""
        editing = await self.get_state(Editing)
        record, owner, name = editing._record, editing.saved_owner, editing.saved_name
        self.password_open = self.avatar_open = False
        self._clear_hints()
        self.access_key = _text(record.get("accessKey"))
        self.access_secret = MASKED if record.get("accessSecret") else ""
        properties = record.get("properties") if isinstance(record.get("properties"), dict) else {}
        self.id_card_images = [{"label": label, "url": _text(properties.get(key))} for key, label in ID_CARD_PICTURES]
        properties_table = await self.get_state(Properties)
        await properties_table._read_language()
        properties_table._load(record)
        self.group_options = []
        ids = [g for g in record.get("groups") or [] if isinstance(g, str)]
        sections = [await self.get_state(part) for part in (ContactReset, WebauthnSection, MfaSection, LinkedSection)]
        self.impersonable = False
        prefs = await self.get_state(Prefs)

        def read(db, actor) -> None:
            target = lookup.user(db, owner, name)
            if target is None:
                return
            self.impersonable = actor.is_global_admin and impersonation.impersonable(target)
            hidden = accounts.hidden_items(actor, lookup.organization(db, owner), target)
            self.hidden_items = [item for item in PAGE_ITEMS if item in hidden]
            self._global_admin = actor.is_global_admin
            self.asks_old_password = bool(target.password or target.ldap) and not actor.is_global_admin
            self.password_rules = _password_rules(lookup.organization(db, owner), prefs)
            try:
                types = users.group_types(db, actor, ids)
            except ServiceError:  # an ordinary user reads no groups: their names only
                types = {}
            self.groups = [{"id": g, "type": types.get(g, "")} for g in ids]
            try:
                roles, permissions = ([], []) if {"Roles", "Permissions"} <= hidden else \
                    users.roles_and_permissions(db, actor, owner, name)
            except ServiceError:
                roles, permissions = [], []
            self.roles, self.permissions = sorted(roles), sorted(permissions)
            if not editing.return_url and not actor.is_admin:
                editing.return_url = "/"  # Save & Exit goes to / for non-admins
            for section in sections:
                section._load(db, actor, target)

        return (await call(self, read)).event

    # --- the password dialog (the passwords stay in the browser) ---

    def _clear_hints(self) -> None:
        self.password_hint = self.confirm_hint = ""

    @rx.event
    def open_password(self):
        self._clear_hints()
        self.password_open = True

    @rx.event
    def set_password_open(self, value: bool):
        self.password_open = bool(value)
        if not value:
            self._clear_hints()

    @rx.event
    def hinted(self, result: dict):
        """The hints window.iamPasswordHints found for what is typed (messages of password_rules)."""
        result = result if isinstance(result, dict) else {}
        self.password_hint, self.confirm_hint = (str(result.get(key) or "")[:500] for key in ("hint", "confirm"))

    @rx.event
    async def submit_password(self):
        editing = await self.get_state(Editing)
        arguments = json.dumps([editing.saved_owner, editing.saved_name])[1:-1]
        return rx.call_script(f"window.iamSetPassword({arguments})", callback=UserEdit.password_answered)

    @rx.event
    async def password_answered(self, result: dict):
        """set-password's answer (or the browser's own refusal: a field empty, the two differ)."""
        prefs = await self.get_state(Prefs)
        status = (result or {}).get("status") if isinstance(result, dict) else None
        if status in BROWSER_REFUSALS:
            return rx.toast.error(prefs.say(BROWSER_REFUSALS[status]))
        if status != "ok":
            return rx.toast.error(prefs.script_failure(result if isinstance(result, dict) else None) or "")
        self.asks_old_password = not self._global_admin  # the user has a password now
        self.password_open = False
        self._clear_hints()
        return rx.toast.success(prefs.say("Password set successfully"))

    # --- avatar (the cropper posts the picture to /api/upload-resource itself) ---

    @rx.event
    def set_avatar_open(self, value: bool):
        self.avatar_open = bool(value)

    @rx.event
    async def avatar_uploaded(self, url: str):
        """The avatar upload ends with a page reload."""
        prefs = await self.get_state(Prefs)
        self.avatar_open = False
        return [rx.toast.success(prefs.say("File uploaded successfully")), rx.call_script("window.location.reload()")]

    @rx.event
    async def avatar_failed(self, message: str):
        prefs = await self.get_state(Prefs)
        return rx.toast.error(prefs.say(str(message)[:500]))

    # --- API key ---

    @rx.event
    async def generate_keys(self):
        editing = await self.get_state(Editing)
        keys = await call(self, lambda db, actor: users.add_keys(db, actor, editing.saved_owner, editing.saved_name),
                          failed="Failed to save: %s")
        if keys.failed:
            return keys.event
        self.access_key, self.access_secret = keys.value

    # --- groups ---

    @rx.event
    async def search_groups(self, typed: str):
        editing = await self.get_state(Editing)
        chosen = {g["id"] for g in self.groups}
        found = await call(self, lambda db, actor: users.group_choices(db, actor, editing.saved_owner,
                                                                        typed.strip()[:100], GROUP_CHOICES))
        self.group_options = [{"id": i, "type": kind} for i, kind in found.value or [] if i not in chosen]

    @rx.event
    async def add_group(self, group_id: str, kind: str):
        editing = await self.get_state(Editing)
        if "groups" in editing.locked or any(g["id"] == group_id for g in self.groups):
            return
        chosen = [g["id"] for g in self.groups] + [group_id]
        checked = await call(self, lambda db, actor: groups.check_one_physical_group(db, chosen))
        if checked.failed:
            return checked.event
        self.groups = [*self.groups, {"id": group_id, "type": kind}]
        self.group_options = [g for g in self.group_options if g["id"] != group_id]
        editing.stage("groups", chosen)

    @rx.event
    async def remove_group(self, group_id: str):
        editing = await self.get_state(Editing)
        if "groups" in editing.locked:
            return
        self.groups = [g for g in self.groups if g["id"] != group_id]
        editing.stage("groups", [g["id"] for g in self.groups])


class Properties(Paging, rx.State):
    """The user's properties table: {"key", "value"} rows edited in place, ten a page,
    staged into the edit page's form on every change."""

    rows: list[dict[str, str]] = []
    _stored: dict[str, Any] = {}

    @rx.var
    def page_rows(self) -> list[dict[str, str]]:
        """The visible page, each row with its index in the whole list."""
        start = (self.page - 1) * self.page_size
        return [{"index": str(i), **row} for i, row in enumerate(self.rows[start:start + self.page_size], start=start)]

    def _load(self, record: dict[str, Any]) -> None:
        self._stored = dict(record.get("properties") or {})
        self._set_rows([{"key": str(k), "value": _text(v)} for k, v in self._stored.items()])
        self.page, self.page_size = 1, PROPERTY_PAGE_SIZE

    def _set_rows(self, rows: list[dict[str, str]]) -> None:
        self.rows, self.total = rows, len(rows)
        self.page = min(self.page, self.page_count)

    async def _turned(self):
        return None  # every row is here already: the page is a slice of them

    async def _stage(self) -> None:
        """The table as the user's properties: rows without a key are left out; an unchanged
        value keeps its stored type."""
        properties = {}
        for row in self.rows:
            key = row["key"].strip()
            if key:
                value = row["value"]
                properties[key] = self._stored[key] if key in self._stored and _text(self._stored[key]) == value \
                    else value
        (await self.get_state(Editing)).stage("properties", properties)

    @rx.event
    async def add(self):
        self._set_rows([*self.rows, {"key": "", "value": ""}])
        self.page = self.page_count  # the new row's page
        await self._stage()

    @rx.event
    async def delete(self, index: str):
        position = int(index)
        if 0 <= position < len(self.rows):
            self._set_rows([row for i, row in enumerate(self.rows) if i != position])
            await self._stage()

    @rx.event
    async def edit(self, index: str, column: str, value: str):
        position = int(index)
        if column in ("key", "value") and 0 <= position < len(self.rows):
            rows = [dict(row) for row in self.rows]
            rows[position][column] = value[:1000]
            self.rows = rows
            await self._stage()


# --- the email and phone reset dialogs ---

RESET_DONE = {"email": "Email reset successfully", "phone": "Phone reset successfully"}


class ContactReset(rx.State):
    """The viewer's own email or phone, changed through a code sent to the new address
    (the inputs are for admins; users prove the new address). Every
    check (empty values, limits, the code, the organization's items) is signin/verifications.py's."""

    can_email: bool = False  # the page is the viewer's own and the organization lets them change it
    can_phone: bool = False
    kind: str = ""  # the open dialog: "email" | "phone" | ""
    countdown: int = 0  # seconds before another code may be asked for
    sending: bool = False
    _dest: str = ""
    _code: str = ""

    def _load(self, db, actor, target) -> None:
        own = actor.user is not None and (actor.user.owner, actor.user.name) == (target.owner, target.name)
        self.can_email = own and verifications.may_reset(db, actor, verifications.EMAIL_KIND)
        self.can_phone = own and verifications.may_reset(db, actor, verifications.PHONE_KIND)
        self.kind, self._dest, self._code = "", "", ""

    @rx.event
    def open(self, kind: str):
        if kind in verifications.CATEGORIES:
            self.kind, self._dest, self._code = kind, "", ""

    @rx.event
    def set_open(self, value: bool):
        if not value:
            self.kind = ""

    @rx.event
    def set_dest(self, value: str):
        self._dest = value[:200]

    @rx.event
    def set_code(self, value: str):
        self._code = value[:20]

    @rx.event(background=True)
    async def send_code(self):
        async with self:
            if self.sending or self.countdown > 0 or not self.kind:
                return
            kind, dest, router = self.kind, self._dest, self.router
            self.sending = True
        sent = await in_thread(router, lambda db, actor: verifications.send_code(
            db, actor, dest, kind, client_ip=client_ip(router)))
        async with self:
            self.sending = False
            if not sent.failed:
                self.countdown = verifications.RESEND_SECONDS
            text = await message(self, sent.error) if sent.failed else await say(self, "Code sent")
        yield rx.toast.error(text) if sent.failed else rx.toast.success(text)
        if not sent.failed:
            await count_down(self)

    @rx.event
    async def submit(self):
        kind = self.kind
        done = await call(self, lambda db, actor: verifications.reset(db, actor, self._dest, kind, self._code.strip()))
        if done.failed:
            return done.event
        self.kind = ""
        # the reset ends with a reload
        return [rx.toast.success(await say(self, RESET_DONE[kind])), rx.call_script("window.location.reload()")]
