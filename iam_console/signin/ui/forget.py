"""/forget/{application}: a forgotten password, in three steps over signin/recovery.py.

1. The account: a name, email or phone (get-email-and-phone's rules and limits).
2. The code: sent to the account's own email or phone, shown masked, after the application's
   captcha when it asks for one; then checked by the browser itself (`window.iamVerifyCode`
   posts it to /api/verify-code, which gives the browser the one-time grant in an HttpOnly cookie).
3. The new password: posted by the browser too (`window.iamResetPassword`, set-password with the
   code), so that it never crosses the websocket; then on to the organization's sign-in page.

The guard sends an account flagged "need update password" here as well."""

from __future__ import annotations

import json

import reflex as rx

from iam_console.core import navigation
from iam_console.identity.ui.users_state import INCONSISTENT
from iam_console.signin import recovery
from iam_console.signin.ui.captcha_parts import captcha_fields
from iam_console.signin.ui.captcha_state import Captcha
from iam_console.ui.routes import page
from iam_console.ui.shell import public_page
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, count_down, in_thread, message, say
from iam_console.ui.text import t

ACCOUNT, CODE, PASSWORD = "account", "code", "password"
KINDS = ("email", "phone")


class Forget(Captcha, rx.State):
    step: str = ACCOUNT
    error: str = ""
    application: str = ""
    organization: str = ""
    name: str = ""  # the account found
    kinds: list[str] = []  # email and/or phone: the addresses the code may go to
    kind: str = "email"
    addresses: dict[str, str] = {}  # kind -> the address as step 1 showed it (masked)
    countdown: int = 0
    busy: bool = False
    _typed: str = ""

    @rx.event
    async def open(self):
        self.step, self.error, self.name, self.kinds, self.addresses = ACCOUNT, "", "", [], {}
        self.captcha_image, self.captcha_id, self.countdown, self.busy = "", "", 0, False
        self._typed = ""
        self.application = self.router.url.path.removeprefix("/forget").strip("/")
        name = self.application
        found = await call(self, lambda db, actor: recovery.application_for(db, name).organization, quiet=True)
        self.organization = found.value or ""
        if found.failed:
            self.error = await message(self, found.error)

    @rx.event
    def set_typed(self, value: str):
        self._typed = value[:255]

    @rx.event
    def set_kind(self, value: str):
        if value in self.kinds:
            self.kind = value

    @rx.event
    async def find(self):
        """Step 1: the account the typed name, email or phone answers to."""
        self.error = ""
        organization, typed, ip = self.organization, self._typed, client_ip(self.router)
        found = await call(self, lambda db, actor: recovery.contacts(db, organization, typed, ip), quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return
        contacts, _ = found.value
        self.name = contacts["name"]
        self.addresses = {kind: contacts[kind] for kind in KINDS if contacts[kind]}
        self.kinds = list(self.addresses)
        if not self.kinds:
            self.error = await say(self, "The account has no email or phone to send a code to")
            return
        self.kind, self.step = self.kinds[0], CODE
        await self.new_captcha(f"admin/{self.application}")

    @rx.event(background=True)
    async def send_code(self):
        """Step 2: a code to the account's own address of the chosen kind."""
        async with self:
            if self.busy or self.countdown > 0 or self.step != CODE:
                return
            self.busy, self.error = True, ""
            router, application, name, kind = self.router, self.application, self.name, self.kind
            dest = self.addresses.get(kind, "")
            solved = recovery.Solved(*self.solved())
        sent = await in_thread(router, lambda db, actor: recovery.send_code(
            db, application, name, dest, kind, solved=solved, client_ip=client_ip(router)))
        async with self:
            toast = await self.code_sent(f"admin/{application}", sent)
        yield toast
        if not sent.failed:
            await count_down(self)

    @rx.event
    def verify(self):
        """Step 2's code, checked by the browser (the grant is an HttpOnly cookie)."""
        if self.busy or self.step != CODE:
            return None
        self.busy, self.error = True, ""
        arguments = json.dumps([self.organization, self.name, self.addresses.get(self.kind, "")])[1:-1]
        return rx.call_script(f"window.iamVerifyCode({arguments})", callback=Forget.verified)

    @rx.event
    async def verified(self, result: dict):
        self.busy = False
        if (result or {}).get("status") == "ok":
            self.step = PASSWORD
            return
        self.error = (await self.get_state(Prefs)).script_failure(result) or ""

    @rx.event
    def change(self):
        """Step 3: the new password, posted by the browser with the code."""
        if self.busy or self.step != PASSWORD:
            return None
        self.busy, self.error = True, ""
        return rx.call_script(f"window.iamResetPassword({json.dumps(self.organization)}, {json.dumps(self.name)})",
                              callback=Forget.changed)

    @rx.event
    async def changed(self, result: dict):
        self.busy = False
        if (result or {}).get("status") == "mismatch":  # the two passwords differ (compared in the browser)
            self.error = await say(self, INCONSISTENT)
            return None
        if (result or {}).get("status") != "ok":
            self.error = (await self.get_state(Prefs)).script_failure(result) or ""
            return None
        return [rx.toast.success(await say(self, "Password changed successfully")),
                rx.redirect(navigation.login_target(self.organization))]

    @rx.event
    def on_key(self, key: str):
        if key != "Enter":
            return None
        return {ACCOUNT: Forget.find, CODE: Forget.verify, PASSWORD: Forget.change}[self.step]


def _labelled(label: str, ident: str, **props) -> rx.Component:
    return rx.vstack(rx.text(rx.el.label(t(label), html_for=ident), size="2", weight="medium"),
                     rx.input(id=ident, width="100%", on_key_down=Forget.on_key, **props), spacing="1", width="100%")


def _account_step() -> rx.Component:
    return rx.vstack(
        _labelled("Account", "forget-account", placeholder=t("username, Email or phone"), auto_focus=True,
                  on_change=Forget.set_typed, auto_complete="username"),
        rx.button(t("Next Step"), on_click=Forget.find, width="100%", id="forget-find"),
        spacing="3", width="100%")


def _code_step() -> rx.Component:
    chooser = rx.radio_group.root(
        rx.foreach(Forget.kinds, lambda kind: rx.radio_group.item(
            rx.cond(kind == "email", t("Email"), t("Phone")), value=kind)),
        value=Forget.kind, on_change=Forget.set_kind, aria_label=t("Send the code to"), id="forget-kind")
    return rx.vstack(
        rx.text(Prefs.tr["Account: %s"].replace("%s", Forget.name), size="2", id="forget-name"),
        rx.cond(Forget.kinds.length() > 1, chooser),
        rx.text(Forget.addresses.get(Forget.kind, ""), size="2", color_scheme="gray", id="forget-dest"),
        captcha_fields(Forget, "forget"),
        rx.button(rx.cond(Forget.countdown > 0, Forget.countdown.to(str) + " s", t("Send code")),
                  on_click=Forget.send_code, disabled=Forget.busy | (Forget.countdown > 0), variant="soft",
                  width="100%", id="forget-send"),
        _labelled("Code", "forget-code", auto_complete="one-time-code", placeholder=t("Code you received")),
        rx.button(t("Next Step"), on_click=Forget.verify, loading=Forget.busy, width="100%", id="forget-verify"),
        spacing="3", width="100%")


def _password_step() -> rx.Component:
    return rx.vstack(
        _labelled("New Password", "forget-password", type="password", auto_complete="new-password", auto_focus=True),
        _labelled("Re-enter New", "forget-confirm", type="password", auto_complete="new-password"),
        rx.button(t("Change password"), on_click=Forget.change, loading=Forget.busy, width="100%",
                  id="forget-change"),
        spacing="3", width="100%")


def forget_page() -> rx.Component:
    steps = rx.match(Forget.step, (ACCOUNT, _account_step()), (CODE, _code_step()), _password_step())
    return public_page(rx.center(rx.card(rx.vstack(
        rx.hstack(rx.icon("key-round", size=28), rx.heading(t("Retrieve password"), size="6"), align="center"),
        rx.cond(Forget.organization != "",
                rx.text(Prefs.tr["Organization: %s"].replace("%s", Forget.organization), color_scheme="gray")),
        rx.cond(Forget.error != "", rx.callout(Forget.error, icon="triangle-alert", color_scheme="red", width="100%",
                                               id="forget-error")),
        rx.cond(Forget.organization != "", steps),
        rx.link(t("Back to sign in"), href=rx.cond(Forget.organization != "", "/login/" + Forget.organization,
                                                   "/login"), size="2", id="forget-back"),
        spacing="3", width="100%"), width="24em", size="3"), min_height="100vh"))


page("/forget/[application]", "Retrieve password", guarded=False, on_load=Forget.open)(forget_page)
