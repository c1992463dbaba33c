"""/login/oauth/authorize: the OAuth 2.0 / OpenID Connect sign-in page.

The request is checked first (client, redirect URI, response type, scope,
PKCE); a bad one shows its error and never redirects. A visitor who already
has a console session is sent straight back with a code (single sign-on)
unless the client asked for prompt=login. Otherwise the page signs in: the
password is posted from the browser (`window.iamAuthorize` in assets/iam.js; a wallet button per
Web3 provider signs with the browser's wallet, federation/wallet.py)
to POST /api/login with this page's own query, which answers with the URL to
send the browser to. With an application that allows WebAuthn, a credential may
stand for the password (`window.iamWebauthnAuthorize`, the same query)."""

from __future__ import annotations

import json
import time
from urllib.parse import quote, urlencode

import reflex as rx

from iam_console import workers
from iam_console.api.callers import session_cookie
from iam_console.applications import redirects
from iam_console.core import lookup, page_script
from iam_console.core.errors import ServiceError
from iam_console.federation import upstream, wallet
from iam_console.federation.ui.provider_buttons import provider_buttons
from iam_console.oauth import oauth
from iam_console.signin import auth, mfa, prompt, webauthn
from iam_console.signin.ui.login import pending_mfa_script
from iam_console.signin.ui.second_factor_parts import second_factor_form
from iam_console.signin.ui.second_factor_state import SecondStep
from iam_console.ui.routes import page
from iam_console.ui.shell import themed
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import with_db
from iam_console.ui.text import t

ANSWER_RERUN_SECONDS = 10.0


class Authorize(rx.State):
    checked: bool = False  # the request has been checked (the page shows the form or the error)
    error: str = ""  # the request's error: no form
    sign_in_error: str = ""  # a refused sign-in: the form stays
    busy: bool = False
    app_name: str = ""
    app_display_name: str = ""
    app_logo: str = ""
    app_organization: str = ""  # not `organization`: the root state has that route argument
    app_webauthn: bool = False  # the application allows WebAuthn sign-in
    wallets: list[dict[str, str]] = []  # the application's Web3 providers (federation/wallet.py)
    # the password fields' methods: Password (unless its rule is Hide password) and LDAP if listed
    methods: list[str] = [auth.PASSWORD_METHOD]
    method: str = auth.PASSWORD_METHOD
    providers: list[dict[str, str]] = []  # the upstream identity providers' buttons (federation/upstream.py)

    # The request this tab last answered (a redirect, or a sign-in posted) and when. on_load
    # may run again for it while the browser leaves (twice on hydrate, and again when the
    # socket reconnects with the new session cookie): such a rerun must not issue a second
    # code. A later visit to the same URL (reload) is a new request.
    _answered_query: str = ""
    _upstream_error: tuple[str, str] = ("", "")  # (id, message): shown again when on_load reruns
    _answered_at: float = 0.0

    def _answer(self) -> None:
        self._answered_query, self._answered_at = self.router.url.query, time.monotonic()

    def forget_answer(self) -> None:
        self._answered_query, self.busy = "", False

    def _answered(self) -> bool:
        return (self._answered_query == self.router.url.query
                and time.monotonic() - self._answered_at < ANSWER_RERUN_SECONDS)

    @rx.event
    async def prepare(self):
        if self._answered():
            return
        self.checked, self.error, self.sign_in_error, self.busy = False, "", "", False
        self.app_name = self.app_display_name = self.app_logo = self.app_organization = ""
        self.app_webauthn, self.wallets = False, []
        (await self.get_state(SecondStep)).reset_step()
        prefs = await self.get_state(Prefs)
        account = await self.get_state(Account)
        await workers.run(account._load)  # the database, off the event loop
        params = {k: str(v) for k, v in self.router.url.query_parameters.items()}
        request = oauth.AuthorizeRequest.from_query(params)
        back_from_upstream = params.pop("nextMfa", "") == "1"
        error_id = params.pop("upstreamError", "")

        def read(db) -> tuple[str, str] | None:  # on a worker thread (ui/state/service.py, with_db)
            target = ""
            if error_id and error_id != self._upstream_error[0]:
                self._upstream_error = (error_id, upstream.take_error(db, error_id))
            self.sign_in_error = self._upstream_error[1] if error_id else ""
            nonlocal request
            try:
                authorization = oauth.check_authorize(db, request)
            except ServiceError as exc:
                self.error = prefs.say(exc.template, *exc.args_)
                self.checked = True
                return None
            request = authorization.request  # a pushed request's or a request object's parameters
            application = authorization.application
            self.app_name, self.app_organization = application.name, application.organization
            self.app_display_name = application.display_name or application.name
            self.app_logo = application.logo
            self.app_webauthn = webauthn.allows(application)
            self.wallets = wallet.buttons(db, application)
            self.methods = [name for name, shown in (
                (auth.PASSWORD_METHOD, auth.password_rule(application) in ("All", "Non-LDAP")),
                (auth.LDAP_METHOD, auth.ldap_enabled(application))) if shown]
            self.method = self.methods[0] if self.methods else ""
            self.providers = upstream.buttons(db, application, "signin", authorize_query=urlencode(params))
            one_tap = upstream.one_tap_script(db, application, authorize_query=urlencode(params))
            # the session behind the cookie, which the code's ID token names (`sid`) and its logout ends
            found = auth.account_for_token(db, session_cookie(self.router.headers.cookie)) if account.signed_in \
                else None
            user, sid = (found[0], found[1].session_id) if found else (None, "")
            if user is not None and request.prompt != "login":
                url = self.router.url
                target = mfa.required_setup_path(lookup.organization(db, user.owner), user,
                                                 f"{url.path}?{url.query}")
                if not target and prompt.missing(application, user):  # asked first, then back here
                    target = f"/prompt/{quote(application.name, safe='')}?{url.query}"
                try:
                    target = target or oauth.authorize(db, authorization, user, sid=sid).url
                except ServiceError:
                    target = ""  # this account may not use the application: sign in as another
            return target, one_tap

        read_ = await with_db(read)
        if read_ is None:
            return None
        target, one_tap = read_
        if not target and request.prompt == "none":
            # OpenID Connect: no interaction allowed, so the client learns that sign-in is needed
            target = redirects.with_parameters(
                request.redirect_uri, {"error": "login_required", "state": request.state},
                fragment=bool(oauth.RESPONSE_TYPES[request.response_type]))
        if back_from_upstream and not target:  # a second factor owed after an upstream sign-in
            self.checked, self.busy = True, True
            return rx.call_script(pending_mfa_script(""), callback=Authorize.finished)
        if target:
            if not target.startswith(("/mfa/setup", "/prompt/")):  # coming back from those is a new request
                self._answer()
            # a full navigation (the redirect URI is another site); replace, so that
            # Back does not land here and issue another code
            return rx.call_script(f"window.location.replace({json.dumps(target)})")
        self.checked = True
        query = self.router.url.query_parameters
        key, provider = str(query.get("web3AuthTokenKey", "")), str(query.get("provider", ""))
        if key and provider:  # back from the wallet: the signed token answers this request
            # not marked answered: a script sent before the page hydrated may be lost, so a rerun
            # sends it again (window.iamWalletFinish posts once per page load)
            self.busy = True
            return rx.call_script(wallet.finish_script([key, self.app_name, self.app_organization, provider, ""], True),
                                  callback=Authorize.finished)
        if one_tap:  # Google One Tap's prompt (federation/upstream.py)
            return rx.call_script(one_tap, callback=Authorize.one_tap_done)
        return None

    @rx.event
    async def one_tap_done(self, result: dict | None):
        """Google One Tap's end, when the page stays: a refusal is shown, a dismissed prompt is not."""
        if (result or {}).get("status") in ("error", "network"):
            self.busy, self.sign_in_error = False, (await self.get_state(Prefs)).script_failure(result) or ""

    def _sign_in(self, function: str, *more: str):
        """Run a sign-in script of assets/iam.js (password, LDAP or WebAuthn) for this page's request."""
        if self.busy or self.error:
            return None
        self.sign_in_error, self.busy = "", True
        self._answer()
        return rx.call_script(page_script.call(function, self.app_organization, self.app_name, *more),
                              callback=Authorize.finished)

    @rx.event
    def submit(self):
        return self._sign_in("iamAuthorize", self.method) if self.method else None

    @rx.event
    def set_method(self, value: str | list[str]):
        if isinstance(value, str) and value in self.methods:
            self.method, self.sign_in_error = value, ""

    @rx.event
    def submit_webauthn(self):
        return self._sign_in("iamWebauthnAuthorize") if self.app_webauthn else None

    @rx.event
    def submit_wallet(self, name: str, type_: str):
        """Sign with the browser's wallet; the page comes back with web3AuthTokenKey (prepare)."""
        if self.busy or self.error or not any(w["name"] == name for w in self.wallets):
            return None
        self.sign_in_error, self.busy = "", True
        arguments = json.dumps([self.app_name, self.app_organization, name, type_])
        return rx.call_script(f"window.iamWalletLogin({arguments[1:-1]})", callback=Authorize.wallet_failed)

    @rx.event
    async def wallet_failed(self, result: dict):
        failure = (await self.get_state(Prefs)).wallet_failure(result)
        if failure is not None:
            self.busy, self.sign_in_error = False, failure

    @rx.event
    def on_key(self, key: str):
        if key == "Enter":
            return Authorize.submit

    @rx.event
    async def finished(self, result: dict):
        if (result or {}).get("status") == "mfa-setup":  # no code: coming back here is a new request
            self._answered_query = ""
            return
        if (result or {}).get("status") == "mfa":  # a second factor is owed
            self.busy = False
            (await self.get_state(SecondStep)).begin("authorize", True, "", result.get("methods") or [])
            return
        failure = (await self.get_state(Prefs)).script_failure(result)
        if failure is not None:
            self.busy, self.sign_in_error = False, failure
            self._answered_query = ""

    @rx.event
    def submit_code(self):
        self._answer()  # the sign-in is being answered: a rerun of on_load must not issue a code
        return SecondStep.submit

    @rx.event
    def on_code_key(self, key: str):
        if key == "Enter":
            return Authorize.submit_code


def _header() -> rx.Component:
    return rx.vstack(
        rx.cond(Authorize.app_logo != "",
                rx.image(src=Authorize.app_logo, alt=Authorize.app_display_name, height="48px",
                         id="authorize-logo")),
        rx.heading(Authorize.app_display_name, size="6", text_align="center", id="authorize-app"),
        rx.text(Prefs.tr["Sign in to continue to %s"].replace("%s", Authorize.app_display_name),
                color_scheme="gray", size="2", text_align="center"),
        align="center",
        spacing="2",
        width="100%",
    )


def _password_fields() -> rx.Component:
    """The password, for the Password or the LDAP method."""
    return rx.vstack(
        rx.text(rx.el.label(t("Password"), html_for="authorize-password"), size="2", weight="medium"),
        rx.input(id="authorize-password", type="password", placeholder=t("Password"),
                 auto_complete="current-password", width="100%", on_key_down=Authorize.on_key),
        spacing="3", width="100%")


def _username() -> rx.Component:
    return rx.vstack(
        rx.text(rx.el.label(t("Username"), html_for="authorize-username"), size="2", weight="medium"),
        rx.input(id="authorize-username", placeholder=t("username, Email or phone"), auto_complete="username",
                 width="100%", auto_focus=True, on_key_down=Authorize.on_key),
        spacing="3", width="100%")


def _form() -> rx.Component:
    return rx.vstack(
        _header(),
        rx.cond(Authorize.methods.length() > 1, rx.segmented_control.root(
            rx.foreach(Authorize.methods, lambda m: rx.segmented_control.item(Prefs.tr[m], value=m)),
            value=Authorize.method, on_change=Authorize.set_method, width="100%", id="authorize-methods",
            aria_label=t("Sign-in method"))),
        rx.cond((Authorize.method != "") | Authorize.app_webauthn, _username()),  # WebAuthn asks for it too
        rx.cond(Authorize.method != "", _password_fields()),
        rx.cond(Authorize.sign_in_error != "",
                rx.callout(Authorize.sign_in_error, icon="triangle-alert", color_scheme="red", width="100%",
                           id="authorize-error")),
        rx.cond(Authorize.method != "",
                rx.button(rx.cond(Authorize.busy, t("Signing in..."), t("Sign in")), on_click=Authorize.submit,
                          loading=Authorize.busy, width="100%", id="authorize-submit")),
        provider_buttons(Authorize.providers, "authorize"),
        rx.cond(Authorize.app_webauthn,
                rx.button(rx.icon("fingerprint", size=16), t("Sign in with WebAuthn"),
                          on_click=Authorize.submit_webauthn, disabled=Authorize.busy, variant="outline",
                          width="100%", id="authorize-webauthn")),
        rx.foreach(Authorize.wallets, lambda w: rx.button(
            rx.icon("wallet", size=16), Prefs.tr["Sign in with %s"].replace("%s", w["label"]),
            on_click=Authorize.submit_wallet(w["name"], w["type"]), disabled=Authorize.busy, variant="outline",
            width="100%", class_name="authorize-wallet", custom_attrs={"data-provider": w["name"]})),
        spacing="3",
        width="100%",
    )


def _refused() -> rx.Component:
    return rx.vstack(
        rx.hstack(rx.icon("shield-alert", size=28), rx.heading(t("Sign in"), size="6"), align="center"),
        rx.callout(Authorize.error, icon="triangle-alert", color_scheme="red", width="100%", id="authorize-error"),
        spacing="3",
        width="100%",
    )


@page("/login/oauth/authorize", "Sign in", guarded=False, on_load=Authorize.prepare)
def authorize_page() -> rx.Component:
    return themed(rx.center(
        rx.cond(
            Authorize.checked,
            rx.card(rx.cond(Authorize.error != "", _refused(),
                            rx.cond(SecondStep.active, rx.vstack(_header(), second_factor_form(
                                "authorize", Authorize.submit_code, Authorize.on_code_key), width="100%"),
                                    _form())),
                    width="22em", size="3"),
            rx.spinner(size="3"),
        ),
        min_height="100vh",
    ))
