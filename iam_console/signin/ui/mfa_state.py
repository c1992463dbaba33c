"""Multi-factor authentication in the console: the /mfa/setup page and
the user page's section. Every rule is signin/mfa.py's."""

from __future__ import annotations

import base64
import json

import reflex as rx

from iam_console.core import lookup, navigation
from iam_console.identity import accounts
from iam_console.signin import mfa
from iam_console.signin.mfa_props import TYPES, all_props
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.service import call, in_thread, message, say

LABELS = {"app": "Authenticator app", "email": "Email", "sms": "SMS"}
ITEM = "Multi-factor authentication"


class MfaSetup(rx.State):
    """Set a type up for yourself: initiate on load, prove it with a code, see the
    recovery code once, Enable."""

    mfa_type: str = ""
    error: str = ""
    secret: str = ""  # the TOTP secret (app) or the masked address (email, sms)
    qr: str = ""  # data: URI of the QR code's SVG
    recovery_code: str = ""
    verified: bool = False
    passcode: str = ""
    sending: bool = False

    @rx.event
    async def open(self):
        self.error = self.secret = self.qr = self.recovery_code = self.passcode = ""
        self.verified = self.sending = False
        self.mfa_type = mfa_type = self.router.url.query_parameters.get("mfaType", "app")

        def initiate(db, actor):
            if actor.user is None:
                return None  # the guard sends the visitor to /login
            return mfa.initiate(db, actor, actor.user.owner, actor.user.name, mfa_type)

        started = await call(self, initiate, quiet=True)
        if started.failed:
            self.error = await say(self, "Failed to initiate MFA") + ": " + await message(self, started.error)
            return
        props = started.value
        if props is None:
            return
        if mfa_type == "app":
            self.qr = "data:image/svg+xml;base64," + base64.b64encode(mfa.qr_svg(props["url"]).encode()).decode()
        self.secret, self.recovery_code = props["secret"], props["recoveryCodes"][0]

    @rx.event
    def set_passcode(self, value: str):
        self.passcode = value.strip()[:20]

    @rx.event
    def passcode_key(self, key: str):
        """Enter in the passcode (the form's one field) verifies it."""
        if key == "Enter":
            return MfaSetup.verify

    @rx.event(background=True)
    async def send_code(self):
        async with self:
            if self.sending:
                return
            self.sending, router, mfa_type = True, self.router, self.mfa_type

        sent = await in_thread(router, lambda db, actor: mfa.send_setup_code(
            db, actor, mfa_type, client_ip=client_ip(router)))
        async with self:
            self.sending = False
            text = await message(self, sent.error) if sent.failed else await say(self, "Code sent")
        yield rx.toast.error(text) if sent.failed else rx.toast.success(text)

    def _own(self, step):
        """`step(db, actor)` on the signed-in user's own account; False when nobody is signed in."""
        def run(db, actor) -> bool:
            if actor.user is None:
                return False
            step(db, actor, actor.user.owner, actor.user.name)
            return True
        return run

    @rx.event
    async def verify(self):
        done = await call(self, self._own(lambda db, actor, owner, name: mfa.verify(
            db, actor, owner, name, self.mfa_type, self.passcode, client_ip=client_ip(self.router))))
        if done.failed or not done.value:
            return done.event
        self.verified = True

    @rx.event
    async def enable(self):
        done = await call(self, self._own(lambda db, actor, owner, name: mfa.enable(db, actor, owner, name,
                                                                                   self.mfa_type)),
                          failed="Failed to enable: %s")
        if done.failed or not done.value:
            return done.event
        self.recovery_code = ""  # shown once
        # back where the setup was asked for (an application's sign-in), else the account page;
        # a full load, so that the shell learns the required setup is done
        target = navigation.safe_return_path(self.router.url.query_parameters.get("from") or "/account")
        from iam_console.oauth.ui.authorize import Authorize  # here: the page module imports the states

        # the authorize page this tab left for the setup must answer its request anew (its
        # guard against reruns of on_load would otherwise take the return for one)
        (await self.get_state(Authorize)).forget_answer()
        return [rx.toast.success(await say(self, "Enabled successfully")),
                rx.call_script(f"window.location.assign({json.dumps(target)})")]


class MfaSection(rx.State):
    """The user page's methods: Setup (yourself), Enable (an admin, email and sms of
    another user), Set preferred, Disable (removes all, after a confirmation)."""

    visible: bool = False
    is_self: bool = False
    may_manage: bool = False  # the viewer is the user or an admin of the user's organization
    rows: list[dict[str, str]] = []  # {"mfaType", "label", "enabled", "preferred"} ("1" / "")
    any_enabled: bool = False
    _owner: str = ""
    _name: str = ""

    def _load(self, db, actor, target) -> None:
        self._owner, self._name = target.owner, target.name
        organization = lookup.organization(db, target.owner)
        self.visible = ITEM not in accounts.hidden_items(actor, organization, target)
        self.is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (target.owner, target.name)
        self.may_manage = self.is_self or actor.is_global_admin or (
            actor.is_org_admin and actor.organization == target.owner)
        self._show(target)

    def _show(self, user) -> None:
        props = {p["mfaType"]: p for p in all_props(user)}
        self.rows = [{"mfaType": t, "label": LABELS[t], "enabled": "1" if props[t]["enabled"] else "",
                      "preferred": "1" if props[t]["isPreferred"] else ""} for t in TYPES]
        self.any_enabled = any(props[t]["enabled"] for t in TYPES)

    async def _apply(self, change, success: str):
        def apply(db, actor) -> None:
            change(db, actor)
            self._show(lookup.user(db, self._owner, self._name))

        done = await call(self, apply, failed="Failed to enable: %s" if success == "Enabled successfully" else "%s")
        return done.event if done.failed else rx.toast.success(await say(self, success))

    @rx.event
    async def enable(self, mfa_type: str):
        return await self._apply(lambda db, actor: mfa.enable(db, actor, self._owner, self._name, mfa_type),
                                 "Enabled successfully")

    @rx.event
    async def set_preferred(self, mfa_type: str):
        return await self._apply(lambda db, actor: mfa.set_preferred(db, actor, self._owner, self._name, mfa_type),
                                 "Successfully saved")

    @rx.event
    async def disable(self):
        return await self._apply(lambda db, actor: mfa.delete_all(db, actor, self._owner, self._name),
                                 "Successfully deleted")
