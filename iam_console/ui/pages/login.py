"""/login and /login/{organization}: username and password sign-in, and WebAuthn when the
application signed in to allows it (the username, then the browser's credential prompt)."""

from __future__ import annotations

import json

import reflex as rx

from ...db import session_scope
from ...services import builtin as b
from ...services import lookup, navigation, verifications, webauthn
from ..components.second_factor import second_factor_form
from ..routes import page
from ..shell import themed
from ..state.account import Account
from ..state.prefs import Prefs
from ..state.second_factor import SecondStep
from ..text import t


class Login(rx.State):
    error: str = ""
    busy: bool = False
    return_to: str = "/"
    webauthn_org: str = ""  # set when the application signed in to allows WebAuthn
    forget_app: str = ""  # the organization's default application, whose /forget page recovers passwords
    signup_app: str = ""  # the same application when it allows sign-up: its /signup page

    @rx.var
    def organization_name(self) -> str:
        return self.router.url.path.removeprefix("/login").strip("/")

    @rx.event
    async def prepare(self):
        self.error, self.busy = "", False
        (await self.get_state(SecondStep)).reset_step()
        self.return_to = navigation.safe_return_path(self.router.url.query_parameters.get("from"))
        account = await self.get_state(Account)
        account._load()
        if account.signed_in:
            return rx.redirect(self.return_to)
        with session_scope() as db:
            target = webauthn.signin_target(db, "", self.organization_name)
            application = verifications.default_application(
                db, lookup.organization(db, self.organization_name or b.BUILT_IN_ORG))
        self.webauthn_org = target[0] if target else ""
        self.forget_app = application.name if application is not None else ""
        self.signup_app = application.name if application is not None and application.enable_sign_up else ""

    def _sign_in(self, function: str, organization: str):
        """Run a sign-in script of assets/iam.js (password or WebAuthn); one at a time."""
        if self.busy:
            return None
        self.error, self.busy = "", True
        script = f"window.{function}({json.dumps(organization)}, {json.dumps(self.return_to)})"
        return rx.call_script(script, callback=Login.finished)

    @rx.event
    def submit(self):
        return self._sign_in("iamLogin", self.organization_name)

    @rx.event
    def submit_webauthn(self):
        return self._sign_in("iamWebauthnLogin", self.webauthn_org) if self.webauthn_org else None

    @rx.event
    def on_key(self, key: str):
        if key == "Enter":
            return Login.submit

    @rx.event
    async def finished(self, result: dict):
        if (result or {}).get("status") == "mfa":  # a second factor is owed
            self.busy = False
            (await self.get_state(SecondStep)).begin("login", False, self.return_to, result.get("methods") or [])
            return
        failure = (await self.get_state(Prefs)).script_failure(result)
        if failure is not None:
            self.busy, self.error = False, failure


def _form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(rx.icon("shield-check", size=28), rx.heading(t("Sign in"), size="6"), align="center"),
            rx.cond(Login.organization_name != "",
                    rx.text(Prefs.tr["Organization: %s"].replace("%s", Login.organization_name),
                            color_scheme="gray", id="login-organization")),
            rx.text(rx.el.label(t("Username"), html_for="login-username"), size="2", weight="medium"),
            rx.input(id="login-username", placeholder=t("username, Email or phone"), auto_complete="username",
                     width="100%", auto_focus=True, on_key_down=Login.on_key),
            rx.text(rx.el.label(t("Password"), html_for="login-password"), size="2", weight="medium"),
            rx.input(id="login-password", type="password", placeholder=t("Password"),
                     auto_complete="current-password", width="100%", on_key_down=Login.on_key),
            rx.text(rx.el.label(rx.hstack(rx.checkbox(id="login-auto", default_checked=True,
                                                     aria_label=t("Auto sign in")), t("Auto sign in"),
                                         align="center", spacing="2")), size="2", as_="div"),
            rx.cond(Login.error != "", rx.callout(Login.error, icon="triangle-alert", color_scheme="red",
                                                  width="100%", id="login-error")),
            rx.button(rx.cond(Login.busy, t("Signing in..."), t("Sign in")), on_click=Login.submit,
                      loading=Login.busy, width="100%", id="login-submit"),
            rx.hstack(
                rx.cond(Login.forget_app != "", rx.link(t("Forgot password?"), href="/forget/" + Login.forget_app,
                                                       size="2", id="login-forget")),
                rx.spacer(),
                rx.cond(Login.signup_app != "", rx.link(t("Sign Up"), href="/signup/" + Login.signup_app, size="2",
                                                       id="login-signup")),
                width="100%"),
            rx.cond(Login.webauthn_org != "",
                    rx.button(rx.icon("fingerprint", size=16), t("Sign in with WebAuthn"),
                              on_click=Login.submit_webauthn, disabled=Login.busy, variant="outline", width="100%",
                              id="login-webauthn")),
            spacing="3",
            width="100%",
        ),
        width="22em",
        size="3",
    )


def login_page() -> rx.Component:
    second = rx.card(second_factor_form("login", SecondStep.submit, SecondStep.on_key), width="22em", size="3")
    return themed(rx.center(rx.cond(SecondStep.active, second, _form()), min_height="100vh"))


page("/login", "Sign in", guarded=False, on_load=Login.prepare)(login_page)
page("/login/[organization]", "Sign in", guarded=False, on_load=Login.prepare)(login_page)
