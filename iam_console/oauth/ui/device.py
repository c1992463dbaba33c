"""/login/oauth/device: the signed-in user approves or denies a device (RFC 8628).

The device shows a user code and this page's address (with ?user_code= in its
verification_uri_complete). A visitor who is not signed in signs in first, on the
sign-in page of the application's organization, and comes back here with the code."""

from __future__ import annotations

from urllib.parse import quote

import reflex as rx

from iam_console import workers
from iam_console.core import navigation
from iam_console.core.errors import ServiceError
from iam_console.oauth import oauth
from iam_console.ui.routes import page
from iam_console.ui.shell import guarded
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, message, say, with_db
from iam_console.ui.text import t

ENTER, CONFIRM, DONE = "enter", "confirm", "done"


class Device(rx.State):
    step: str = ENTER
    user_code: str = ""
    app_display_name: str = ""
    scope: str = ""
    result: str = ""
    error: str = ""

    @rx.event
    async def prepare(self):
        self.step, self.result, self.error = ENTER, "", ""
        self.app_display_name = self.scope = ""
        self.user_code = self.router.url.query_parameters.get("user_code", "")[:20]
        # its own guard: a visitor who is not signed in goes to the sign-in page of the
        # device's application's organization (the shared guard knows only /login)
        account = await self.get_state(Account)
        await workers.run(account._load)  # the database, off the event loop
        account.show_page = account.signed_in
        if not account.signed_in:
            code = self.user_code
            found = await with_db(lambda db: oauth.pending_device(db, code))
            organization = found[1].organization if found else ""
            back = f"/login/oauth/device?user_code={self.user_code}" if self.user_code else "/login/oauth/device"
            return rx.redirect(f"{navigation.login_target(organization)}?from={quote(back, safe='/')}")

    @rx.event
    def set_user_code(self, value: str):
        self.user_code = value[:20]

    @rx.event
    def on_key(self, key: str):
        if key == "Enter":
            return Device.next_step

    @rx.event
    async def next_step(self):
        self.error = ""
        code = self.user_code
        found = await with_db(lambda db: oauth.pending_device(db, code))
        if found is None:
            prefs = await self.get_state(Prefs)
            self.error = prefs.say("The code is invalid or has expired")
            return
        row, application = found
        self.user_code = row.user_code
        self.app_display_name = application.display_name or application.name
        self.scope = row.scope
        self.step = CONFIRM

    @rx.event
    async def decide(self, approve: bool):
        self.error = ""
        code = self.user_code

        def decide(db, actor) -> None:  # the session may have ended since the page loaded
            if actor.user is None:
                raise ServiceError("Please login first")
            oauth.decide_device(db, actor.user, code, approve)

        done = await call(self, decide, quiet=True)
        if done.failed:
            self.error = await message(self, done.error)
            return
        self.step = DONE
        self.result = await say(self, "Device approved, you may return to your device" if approve else "Device denied")

    @rx.event
    def start_over(self):
        self.step, self.user_code, self.result, self.error = ENTER, "", "", ""


def _error() -> rx.Component:
    return rx.cond(Device.error != "",
                   rx.callout(Device.error, icon="triangle-alert", color_scheme="red", width="100%",
                              id="device-error"))


def _enter() -> rx.Component:
    return rx.vstack(
        rx.text(t("Enter the code shown on your device"), size="2"),
        rx.input(id="device-code", value=Device.user_code, on_change=Device.set_user_code,
                 on_key_down=Device.on_key, placeholder="XXXX-XXXX", auto_complete="off", auto_focus=True,
                 width="100%", aria_label=t("Enter the code shown on your device")),
        _error(),
        rx.button(t("Continue"), on_click=Device.next_step, width="100%", id="device-continue"),
        spacing="3",
        width="100%",
    )


def _confirm() -> rx.Component:
    return rx.vstack(
        rx.text(Prefs.tr["%s asks for access to your account"].replace("%s", Device.app_display_name),
                weight="medium", id="device-app"),
        rx.hstack(rx.text(t("Code"), size="2", color_scheme="gray"), rx.code(Device.user_code), align="center"),
        rx.hstack(rx.text(t("Scope"), size="2", color_scheme="gray"),
                  rx.code(rx.cond(Device.scope != "", Device.scope, "-"), id="device-scope"), align="center"),
        _error(),
        rx.hstack(
            rx.button(t("Deny"), on_click=Device.decide(False), variant="soft", color_scheme="gray",
                      id="device-deny"),
            rx.button(t("Approve"), on_click=Device.decide(True), id="device-approve"),
            justify="end",
            width="100%",
        ),
        spacing="3",
        width="100%",
    )


def _done() -> rx.Component:
    return rx.vstack(
        rx.callout(Device.result, icon="info", width="100%", id="device-result"),
        rx.button(t("Connect another device"), on_click=Device.start_over, variant="soft", id="device-again"),
        spacing="3",
        width="100%",
    )


@page("/login/oauth/device", "Connect a device", guarded=False, on_load=Device.prepare)
def device_page() -> rx.Component:
    return guarded(rx.center(
        rx.card(
            rx.vstack(
                rx.hstack(rx.icon("monitor-smartphone", size=24), rx.heading(t("Connect a device"), size="5"),
                          align="center"),
                rx.match(Device.step, (CONFIRM, _confirm()), (DONE, _done()), _enter()),
                spacing="4",
                width="100%",
            ),
            width="26em",
            size="3",
        ),
        width="100%",
    ))
