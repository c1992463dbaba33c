"""The WebAuthn credentials section of /account and the user edit page:
the list (name, created time); on the viewer's own account, Add (the browser's ceremony,
window.iamWebauthnRegister in assets/iam.js, posts to the API) and delete with confirmation.
An admin sees another user's list read-only. The rules are signin/webauthn.py's."""

from __future__ import annotations

import json

import reflex as rx

from iam_console.core import lookup
from iam_console.identity import accounts
from iam_console.signin import webauthn as service
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, say

ITEM = "WebAuthn credentials"


class WebauthnSection(rx.State):
    rows: list[dict[str, str]] = []  # {"id", "name", "createdTime"}
    shown: bool = False  # the account item is visible to this viewer
    is_self: bool = False  # the viewer's own account: Add and delete
    new_name: str = ""
    busy: bool = False
    deleting: str = ""  # the credential id awaiting confirmation
    deleting_name: str = ""

    def _load(self, db, actor, target) -> None:
        self.is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (target.owner, target.name)
        hidden = accounts.hidden_items(actor, lookup.organization(db, target.owner), target)
        self.shown = ITEM not in hidden
        self.rows = self._listed(target) if self.shown else []
        self.new_name, self.busy, self.deleting, self.deleting_name = "", False, "", ""

    @staticmethod
    def _listed(user) -> list[dict[str, str]]:
        return [{**row, "createdTime": row["createdTime"][:19].replace("T", " ")} for row in service.listing(user)]

    async def _reload(self) -> None:
        mine = await call(self, lambda db, actor: self._listed(actor.user) if actor.user is not None else [])
        self.rows = mine.value or []

    @rx.event
    def set_new_name(self, value: str):
        self.new_name = value[:service.MAX_NAME_LENGTH]

    @rx.event
    def add(self):
        if not self.is_self or self.busy:
            return
        self.busy = True
        return rx.call_script(f"window.iamWebauthnRegister({json.dumps(self.new_name.strip())})",
                              callback=WebauthnSection.added)

    @rx.event
    async def added(self, result: dict):
        prefs = await self.get_state(Prefs)
        self.busy = False
        if (result or {}).get("status") != "ok":
            return rx.toast.error(prefs.say("Failed to add: %s", prefs.script_failure(result) or ""))
        self.new_name = ""
        await self._reload()
        return rx.toast.success(prefs.say("Successfully added webauthn credentials"))

    @rx.event
    def ask_delete(self, credential_id: str, name: str):
        if self.is_self:
            self.deleting, self.deleting_name = credential_id, name

    @rx.event
    def cancel_delete(self):
        self.deleting, self.deleting_name = "", ""

    @rx.event
    async def confirm_delete(self):
        credential_id = self.deleting
        self.deleting, self.deleting_name = "", ""

        def delete(db, actor) -> bool:
            if actor.user is None:
                return False
            service.delete_credential(db, actor.user, credential_id, client_ip(self.router))
            return True

        done = await call(self, delete)
        if done.failed:
            return done.event
        if not done.value:
            return rx.redirect("/login")
        await self._reload()
        return rx.toast.success(await say(self, "Successfully deleted"))
