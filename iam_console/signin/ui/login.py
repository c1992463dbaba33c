"""/login and /login/{organization}: the sign-in methods of the organization's default
application: username and password; a verification code sent to the account's email or phone
(when the application lists "Verification code"; the code goes out over the websocket after the
application's captcha, and the sign-in is posted by the browser so the session cookie comes from
the API); LDAP (the same fields, bound to the organization's directory) when listed, and no
password tab under the Password rule "Hide password"; WebAuthn when the application allows it
(the username, then the browser's credential prompt); and a wallet button per Web3 provider
(federation/wallet.py: the browser's wallet signs a nonce, the page comes back with
web3AuthTokenKey and posts the signed token)."""

from __future__ import annotations

import json
from urllib.parse import quote, urlencode

import reflex as rx

from iam_console import workers
from iam_console.core import builtin as b
from iam_console.core import lookup, navigation, page_script
from iam_console.federation import upstream, wallet
from iam_console.federation.ui.provider_buttons import provider_buttons
from iam_console.signin import auth, code_signin, signin_page, verifications, webauthn
from iam_console.signin.ui.captcha_parts import captcha_fields
from iam_console.signin.ui.captcha_state import Captcha
from iam_console.signin.ui.second_factor_parts import second_factor_form
from iam_console.signin.ui.second_factor_state import SecondStep
from iam_console.ui.routes import page
from iam_console.ui.shell import language_menu, themed
from iam_console.ui.state.account import Account, client_ip
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import count_down, in_thread, say, with_db
from iam_console.ui.text import t

PASSWORD, CODE, LDAP = auth.PASSWORD_METHOD, code_signin.METHOD, auth.LDAP_METHOD


def pending_mfa_script(return_to: str) -> str:
    """window.iamPendingMfa, once assets/iam.js has loaded: on_load may run before it has."""
    return page_script.call("iamPendingMfa", return_to)


class Login(Captcha, rx.State):
    error: str = ""
    busy: bool = False
    return_to: str = "/"
    webauthn_org: str = ""  # set when the application signed in to allows WebAuthn
    forget_app: str = ""  # the organization's default application, whose /forget page recovers passwords
    signup_app: str = ""  # the same application when it allows sign-up: its /signup page
    invitation_code: str = ""  # ?invitationCode=: carried to the sign-up page and by the provider buttons
    application: str = ""  # the application signed in to (the organization's default)
    # Password (unless its rule is Hide password) and, when the application lists them,
    # Verification code and LDAP
    methods: list[str] = [PASSWORD]
    method: str = PASSWORD
    code_address: str = ""
    countdown: int = 0
    # how the application's page looks (signin/signin_page.py)
    logo: str = ""
    position: int = signin_page.CENTRE
    side_html: str = ""
    background: str = ""
    background_mobile: str = ""
    css: str = ""
    css_mobile: str = ""
    terms_of_use: str = ""
    agreement: str = ""
    shown: list[str] = sorted(signin_page.DEFAULT_ITEMS)
    custom: list[str] = []
    org_choice: str = ""  # Select or Input: the organization is chosen first
    wallets: list[dict[str, str]] = []  # the application's Web3 providers: name, type, label
    organizations: list[dict[str, str]] = []  # what a Select offers
    providers: list[dict[str, str]] = []  # the upstream identity providers' buttons (federation/upstream.py)
    _typed_organization: str = ""
    _upstream_error: tuple[str, str] = ("", "")  # (id, message): shown again when on_load reruns

    @rx.var
    def style_sheet(self) -> str:
        """The application's CSS, and its mobile CSS for narrow screens."""
        return f"@media (min-width: 768px) {{\n{self.css}\n}}\n@media (max-width: 767px) {{\n{self.css_mobile}\n}}"

    @rx.var
    def signup_href(self) -> str:
        code = f"?{urlencode({'invitationCode': self.invitation_code})}" if self.invitation_code else ""
        return f"/signup/{quote(self.signup_app, safe='')}{code}"

    @rx.var
    def organization_name(self) -> str:
        return self.router.url.path.removeprefix("/login").strip("/")

    @rx.event
    async def prepare(self):
        self.error, self.busy = "", False
        (await self.get_state(SecondStep)).reset_step()
        self.return_to = navigation.safe_return_path(self.router.url.query_parameters.get("from"))
        account = await self.get_state(Account)
        await workers.run(account._load)  # the database, off the event loop
        if account.signed_in:
            return rx.redirect(self.return_to)
        query = self.router.url.query_parameters
        def read(db):  # on a worker thread (ui/state/service.py, with_db)
            upstream_error = self._take_upstream_error(db, str(query.get("upstreamError", "")))
            target = webauthn.signin_target(db, "", self.organization_name)
            organization = lookup.organization(db, self.organization_name or b.BUILT_IN_ORG)
            application = verifications.default_application(db, organization)
            look = signin_page.look(application, organization,
                                    str(self.router.url.query_parameters.get("orgChoiceMode", "")))
            self.organizations = signin_page.organization_choices(db) if look.org_choice == "Select" else []
            self.invitation_code = str(query.get("invitationCode", ""))[:upstream.MAX_CODE]
            self.providers = upstream.buttons(db, application, "signin", return_to=self.return_to,
                                              invitation_code=self.invitation_code)
            one_tap = upstream.one_tap_script(db, application, return_to=self.return_to)
            return upstream_error, target, application, look, one_tap

        upstream_error, target, application, look, one_tap = await with_db(read)
        self.org_choice = look.org_choice
        self.logo, self.position, self.side_html = look.logo, look.position, look.side_html
        self.background, self.background_mobile = look.background, look.background_mobile
        self.css, self.css_mobile, self.terms_of_use, self.agreement = (look.css, look.css_mobile, look.terms_of_use,
                                                                        look.agreement)
        self.shown, self.custom = sorted(look.shown), list(look.custom)
        self.webauthn_org = target[0] if target else ""
        self.forget_app = application.name if application is not None and "Forgot password?" in look.shown else ""
        self.signup_app = application.name if application is not None and application.enable_sign_up \
            and "Signup link" in look.shown else ""
        self.application = application.name if application is not None else ""
        self.wallets = await with_db(lambda db: wallet.buttons(db, application))
        code = application is not None and bool(code_signin.kinds(application))
        password = application is None or auth.password_rule(application) in ("All", "Non-LDAP")
        ldap = application is not None and auth.ldap_enabled(application)
        self.methods = [m for m, shown in ((PASSWORD, password), (CODE, code), (LDAP, ldap)) if shown] or [PASSWORD]
        self.method, self.code_address, self.countdown = self.methods[0], "", 0
        if code:
            await self.new_captcha(f"admin/{self.application}")
        self.error = upstream_error
        if query.get("nextMfa") == "1":  # back from an upstream (or SAML) provider, a second factor owed
            self.busy = True
            return rx.call_script(pending_mfa_script(self.return_to), callback=Login.finished)
        key, provider = str(query.get("web3AuthTokenKey", "")), str(query.get("provider", ""))
        if key and provider:  # back from the wallet: post the token it signed
            self.busy = True
            script = wallet.finish_script([key, self.application, self.organization_name, provider, self.return_to],
                                          False)
            return rx.call_script(script, callback=Login.finished)
        if one_tap:  # Google One Tap's prompt (federation/upstream.py)
            return rx.call_script(one_tap, callback=Login.one_tap_done)
        return None

    @rx.event
    async def one_tap_done(self, result: dict | None):
        """Google One Tap's end, when the page stays: a refusal is shown, a dismissed prompt is not."""
        if (result or {}).get("status") in ("error", "network"):
            self.busy, self.error = False, (await self.get_state(Prefs)).script_failure(result) or ""

    def _take_upstream_error(self, db, error_id: str) -> str:
        if error_id and error_id != self._upstream_error[0]:
            self._upstream_error = (error_id, upstream.take_error(db, error_id))
        return self._upstream_error[1] if error_id else ""

    @rx.event
    def set_typed_organization(self, value: str):
        self._typed_organization = value.strip()[:100]

    @rx.event
    def choose_organization(self, name: str = ""):
        """On to the chosen organization's sign-in page, which then shows the form."""
        name = (name or self._typed_organization).strip()
        if not name or "/" in name or "?" in name or "#" in name:
            return None
        return rx.redirect(f"/login/{quote(name, safe='')}?orgChoiceMode=None")

    @rx.event
    def set_method(self, value: str | list[str]):
        if isinstance(value, str) and value in self.methods:
            self.method, self.error = value, ""

    @rx.event
    def set_code_address(self, value: str):
        self.code_address = value[:100]

    @rx.event(background=True)
    async def send_code(self):
        """A code to the typed email or phone, when it is an account's own."""
        async with self:
            if self.busy or self.countdown > 0 or self.method != CODE:
                return
            self.busy, self.error = True, ""
            router, application, address, solved = self.router, f"admin/{self.application}", self.code_address, \
                self.solved()
        sent = await in_thread(router, lambda db, actor: code_signin.send_code(
            db, application, address, captcha_type=solved[0], captcha_token=solved[1], captcha_id=solved[2],
            client_ip=client_ip(router)))
        async with self:
            toast = await self.code_sent(application, sent)
        yield toast
        if not sent.failed:
            await count_down(self)

    def _sign_in(self, function: str, organization: str, *more: str):
        """Run a sign-in script of assets/iam.js (password, LDAP or WebAuthn); one at a time."""
        if self.busy:
            return None
        self.error, self.busy = "", True
        return rx.call_script(page_script.call(function, organization, self.return_to, *more), callback=Login.finished)

    @rx.event
    def submit(self):
        if self.method == CODE:
            if self.busy:
                return None
            self.error, self.busy = "", True
            arguments = json.dumps([self.application, self.organization_name, self.return_to])[1:-1]
            return rx.call_script(f"window.iamCodeLogin({arguments})", callback=Login.finished)
        return self._sign_in("iamLogin", self.organization_name, self.method)

    @rx.event
    def submit_webauthn(self):
        return self._sign_in("iamWebauthnLogin", self.webauthn_org) if self.webauthn_org else None

    @rx.event
    def submit_wallet(self, name: str, type_: str):
        """Sign with the browser's wallet (assets/iam.js): a nonce, the wallet's signature, then
        back to this page with web3AuthTokenKey, which posts the token."""
        if self.busy or not any(w["name"] == name for w in self.wallets):
            return None
        self.error, self.busy = "", True
        arguments = json.dumps([self.application, self.organization_name, name, type_])
        return rx.call_script(f"window.iamWalletLogin({arguments[1:-1]})", callback=Login.wallet_failed)

    @rx.event
    async def wallet_failed(self, result: dict):
        """The wallet step's failure in the visitor's language: no wallet, or the wallet's refusal."""
        if (result or {}).get("status") in ("no-wallet", "wallet"):
            self.busy, self.error = False, (await self.get_state(Prefs)).wallet_failure(result) or ""
            return None
        return Login.finished(result)  # the agreement unchecked, the server's refusal of the nonce

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
        if (result or {}).get("status") == "agreement":
            self.busy, self.error = False, await say(self, "Please accept the agreement!")
            return
        failure = (await self.get_state(Prefs)).script_failure(result)
        if failure is not None:
            self.busy, self.error = False, failure


def _password_fields() -> rx.Component:
    return rx.vstack(
        rx.text(rx.el.label(t("Username"), html_for="login-username"), size="2", weight="medium"),
        rx.input(id="login-username", placeholder=t("username, Email or phone"), auto_complete="username",
                 width="100%", auto_focus=True, on_key_down=Login.on_key),
        rx.text(rx.el.label(t("Password"), html_for="login-password"), size="2", weight="medium"),
        rx.input(id="login-password", type="password", placeholder=t("Password"),
                 auto_complete="current-password", width="100%", on_key_down=Login.on_key),
        spacing="3", width="100%")


def _code_fields() -> rx.Component:
    return rx.vstack(
        rx.text(rx.el.label(t("Email or phone"), html_for="login-code-address"), size="2", weight="medium"),
        rx.input(id="login-code-address", placeholder=t("Email or phone"), auto_complete="username", width="100%",
                 auto_focus=True, on_change=Login.set_code_address),
        captcha_fields(Login, "login"),
        rx.hstack(
            rx.input(id="login-code", placeholder=t("Code you received"), aria_label=t("Code you received"),
                     auto_complete="one-time-code", flex="1", on_key_down=Login.on_key),
            rx.button(rx.cond(Login.countdown > 0, Login.countdown.to(str) + " s", t("Send code")),
                      on_click=Login.send_code, disabled=Login.busy | (Login.countdown > 0), variant="soft",
                      id="login-send-code"),
            width="100%"),
        spacing="3", width="100%")


def _organization_choice() -> rx.Component:
    select = rx.vstack(
        rx.text(t("Please select an organization to sign in"), size="3"),
        rx.select.root(rx.select.trigger(placeholder=t("Organization"), aria_label=t("Organization"),
                                         width="100%", id="login-org-select"),
                       rx.select.content(rx.foreach(Login.organizations, lambda o: rx.select.item(
                           o["label"], value=o["name"]))),
                       on_change=Login.choose_organization),
        spacing="3", width="100%")
    typed = rx.vstack(
        rx.text(rx.el.label(t("Please type an organization to sign in"), html_for="login-org-input"), size="3"),
        rx.input(id="login-org-input", on_change=Login.set_typed_organization, width="100%", auto_focus=True,
                 on_key_down=lambda key: rx.cond(key == "Enter", Login.choose_organization(""), rx.noop())),
        rx.button(t("Confirm"), on_click=Login.choose_organization(""), id="login-org-confirm"),
        spacing="3", width="100%")
    return rx.card(rx.vstack(
        rx.hstack(rx.icon("building-2", size=28), rx.heading(t("Sign in"), size="6"), align="center"),
        rx.cond(Login.org_choice == "Select", select, typed), spacing="4", width="100%"),
        width="22em", size="3", id="login-org-choice")


def _form() -> rx.Component:
    return rx.card(
        rx.vstack(
            rx.hstack(
                rx.cond(Login.shown.contains("Back button"),
                        rx.icon_button(rx.icon("arrow-left"), variant="ghost", aria_label=t("Back"),
                                       on_click=rx.call_script("window.history.back()"), id="login-back")),
                rx.cond(Login.shown.contains("Logo") & (Login.logo != ""),
                        rx.image(src=Login.logo, alt=t("Logo"), max_height="40px", max_width="10em", id="login-logo"),
                        rx.icon("shield-check", size=28)),
                rx.heading(t("Sign in"), size="6"), rx.spacer(),
                rx.cond(Login.shown.contains("Languages"), language_menu(every=True)),
                align="center", width="100%"),
            rx.cond(Login.organization_name != "",
                    rx.text(Prefs.tr["Organization: %s"].replace("%s", Login.organization_name),
                            color_scheme="gray", id="login-organization")),
            rx.cond(Login.methods.length() > 1, rx.segmented_control.root(
                rx.foreach(Login.methods, lambda m: rx.segmented_control.item(Prefs.tr[m], value=m)),
                value=Login.method, on_change=Login.set_method, width="100%", id="login-methods",
                aria_label=t("Sign-in method"))),
            rx.cond(Login.method == CODE, _code_fields(), _password_fields()),
            rx.text(rx.el.label(rx.hstack(rx.checkbox(id="login-auto", default_checked=True,
                                                     aria_label=t("Auto sign in")), t("Auto sign in"),
                                         align="center", spacing="2")), size="2", as_="div"),
            rx.cond(Login.agreement != "", rx.hstack(
                rx.checkbox(id="login-agreement", default_checked=Login.agreement == "checked"),
                rx.text(rx.el.label(t("I have read and agree to the"), html_for="login-agreement"), " ",
                        rx.link(t("Terms of Use"), href=Login.terms_of_use, is_external=True), size="2"),
                align="center", spacing="2")),
            rx.foreach(Login.custom, lambda html: rx.box(rx.html(html), class_name="login-custom", width="100%")),
            rx.cond(Login.error != "", rx.callout(Login.error, icon="triangle-alert", color_scheme="red",
                                                  width="100%", id="login-error")),
            rx.button(rx.cond(Login.busy, t("Signing in..."), t("Sign in")), on_click=Login.submit,
                      loading=Login.busy, width="100%", id="login-submit"),
            rx.hstack(
                rx.cond(Login.forget_app != "", rx.link(t("Forgot password?"), href="/forget/" + Login.forget_app,
                                                       size="2", id="login-forget")),
                rx.spacer(),
                rx.cond(Login.signup_app != "", rx.link(t("Sign Up"), href=Login.signup_href, size="2",
                                                       id="login-signup")),
                width="100%"),
            provider_buttons(Login.providers, "login"),
            rx.foreach(Login.wallets, lambda w: rx.button(
                rx.icon("wallet", size=16), Prefs.tr["Sign in with %s"].replace("%s", w["label"]),
                on_click=Login.submit_wallet(w["name"], w["type"]), disabled=Login.busy, variant="outline",
                width="100%", class_name="login-wallet", custom_attrs={"data-provider": w["name"]})),
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
    """The form where the application's position puts it (1 left, 2 centre, 3 right, 4 beside
    its side panel; centred on narrow screens), over its background, with its CSS."""
    second = rx.card(second_factor_form("login", SecondStep.submit, SecondStep.on_key), width="22em", size="3")
    side = rx.cond(Login.position == signin_page.WITH_SIDE_PANEL,
                   rx.card(rx.html(Login.side_html), width="22em", id="login-side", display=rx.breakpoints(
                       initial="none", md="block")))
    wide = rx.match(Login.position, (1, "start"), (3, "end"), "center")
    background = rx.breakpoints(initial=rx.cond(Login.background_mobile != "",
                                                "url(" + Login.background_mobile + ")", "none"),
                                md=rx.cond(Login.background != "", "url(" + Login.background + ")", "none"))
    return themed(
        rx.el.style(Login.style_sheet),
        rx.flex(side, rx.cond(SecondStep.active, second, rx.cond(Login.org_choice != "", _organization_choice(),
                                                                   _form())), gap="1em", align="center",
                justify=rx.breakpoints(initial="center", md=wide), min_height="100vh", padding_x="10%",
                background_image=background, background_size="cover", background_position="center",
                class_name="login-content", id="login-content"))


page("/login", "Sign in", guarded=False, on_load=Login.prepare)(login_page)
page("/login/[organization]", "Sign in", guarded=False, on_load=Login.prepare)(login_page)
