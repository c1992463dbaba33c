"""The second step of a sign-in (the console's /login and the OAuth authorize page):
the account owes a second factor, so the page asks for a code of one of its methods,
or a recovery code. Everything goes from the browser to POST /api/login
(assets/iam.js): the pending sign-in is an HttpOnly cookie this state never sees."""

from __future__ import annotations

import json

import reflex as rx

from iam_console.ui.state.prefs import Prefs

LABELS = {"app": "Authenticator app", "email": "Email", "sms": "SMS"}


class SecondStep(rx.State):
    active: bool = False
    methods: list[dict[str, str]] = []  # {"mfaType", "label", "secret"} (the masked address)
    mfa_type: str = ""
    recovery: bool = False  # typing a recovery code instead
    error: str = ""
    busy: bool = False
    _prefix: str = "login"  # the page's ids: login-passcode or authorize-passcode
    _authorize: bool = False
    _return_to: str = "/"

    def begin(self, prefix: str, authorize: bool, return_to: str, methods: list) -> None:
        self._prefix, self._authorize, self._return_to = prefix, authorize, return_to
        self.methods = [{"mfaType": str(p.get("mfaType", "")), "label": LABELS.get(str(p.get("mfaType")), ""),
                         "secret": str(p.get("secret") or "")} for p in methods if isinstance(p, dict)]
        self.mfa_type = self.methods[0]["mfaType"] if self.methods else ""
        self.active, self.recovery, self.error, self.busy = True, False, "", False

    @rx.event
    def reset_step(self):
        self.active, self.methods, self.error, self.busy = False, [], "", False

    @rx.var
    def needs_sending(self) -> bool:
        return self.mfa_type in ("email", "sms") and not self.recovery

    @rx.var
    def sent_to(self) -> str:
        return next((m["secret"] for m in self.methods if m["mfaType"] == self.mfa_type), "")

    @rx.event
    def choose(self, mfa_type: str):
        if any(m["mfaType"] == mfa_type for m in self.methods):
            self.mfa_type, self.error = mfa_type, ""

    @rx.event
    def toggle_recovery(self):
        self.recovery, self.error = not self.recovery, ""

    @rx.event
    def send_code(self):
        return rx.call_script(f"window.iamSendMfaCode({json.dumps(self.mfa_type)})", callback=SecondStep.code_sent)

    @rx.event
    async def code_sent(self, result: dict):
        prefs = await self.get_state(Prefs)
        failure = prefs.script_failure(result)
        if failure:
            return rx.toast.error(failure)
        return rx.toast.success(prefs.say("Code sent"))

    @rx.event
    def submit(self):
        if self.busy:
            return
        self.error, self.busy = "", True
        arguments = ", ".join(json.dumps(v) for v in (self._prefix, self._authorize, self._return_to,
                                                       self.mfa_type, self.recovery))
        return rx.call_script(f"window.iamSecondFactor({arguments})", callback=SecondStep.finished)

    @rx.event
    def on_key(self, key: str):
        if key == "Enter":
            return SecondStep.submit

    @rx.event
    async def finished(self, result: dict):
        failure = (await self.get_state(Prefs)).script_failure(result)
        if failure is not None:
            self.busy, self.error = False, failure
