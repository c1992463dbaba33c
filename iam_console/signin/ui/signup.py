"""/signup/{application}: a new account, driven by the application's signup items
(signin/signup.py holds the rules; this page only lays them out).

- The form shows the visible items in the application's order: username, display name (one
  field, or first and last with the rule "First, last"), password and its confirmation, email and
  phone (with a Send code button and a code field unless the rule is "No verification"), the
  invitation code (filled from `?invitationCode=`), the agreement linked to the terms of use,
  and the custom items (Input, Single Choice, Multiple Choices); Text 1 to Text 5 show their label as
  HTML (cleaned, core/html.py), with no field.
- Codes are sent over the websocket (signin/signup.send_code, after the application's captcha
  when it asks for one). The form itself is posted by the browser (`window.iamSignup` reads every
  field marked `data-signup-key` and posts /api/signup), so the password never crosses the
  websocket and the session cookie is set by the API; then on to the console (or to `?from=`, a
  same-site path: the select-plan page sends a visitor here and back), or to the application's
  redirect URI when the page was opened with an authorization request."""

from __future__ import annotations

import json
from urllib.parse import urlencode

import reflex as rx

from iam_console.core import lookup, navigation
from iam_console.federation import upstream
from iam_console.federation.ui.provider_buttons import provider_buttons
from iam_console.identity.ui.users_state import INCONSISTENT
from iam_console.signin import signup, verifications
from iam_console.signin.ui.captcha_parts import captcha_fields
from iam_console.signin.ui.captcha_state import Captcha
from iam_console.ui.routes import page
from iam_console.ui.shell import public_page
from iam_console.ui.state.account import client_ip
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, count_down, in_thread, message, say, with_db
from iam_console.ui.text import t

# the built-in items the form shows as a text field: (key posted, label, autocomplete)
TEXT_ITEMS = {"Username": ("username", "Username", "username"), "Affiliation": ("affiliation", "Affiliation", "off"),
              "ID card": ("idCard", "ID card", "off"), "Country/Region": ("region", "Country/Region", "country"),
              "Gender": ("gender", "Gender", "sex"), "Bio": ("bio", "Bio", "off"), "Tag": ("tag", "Tag", "off"),
              "Education": ("education", "Education", "off"), "Invitation code": ("invitationCode", "Invitation code",
                                                                                  "off")}
CODE_KINDS = {"Email": verifications.EMAIL_KIND, "Phone": verifications.PHONE_KIND}
NOT_SHOWN = {"ID", "Signup button", "Providers"}
OAUTH_PATH = "/signup/oauth/authorize"  # no field: the ID is generated, the button is the form's


class Signup(Captcha, rx.State):
    application: str = ""
    organization: str = ""
    error: str = ""
    items: list[dict[str, str]] = []  # the visible items: name, label, rule, required, kind, options
    terms_of_use: str = ""
    invitation_code: str = ""
    return_to: str = "/"  # ?from=: a same-site path to go on to once signed up (the select-plan page's)
    email: str = ""
    phone: str = ""
    country_code: str = ""
    countdown: int = 0
    busy: bool = False
    providers: list[dict[str, str]] = []  # the upstream identity providers' buttons (federation/upstream.py)
    _upstream_error: tuple[str, str] = ("", "")  # (id, message): shown again when on_load reruns

    @rx.event
    async def open(self):
        self.error, self.items, self.busy, self.countdown, self.providers = "", [], False, 0, []
        params = {k: str(v) for k, v in self.router.url.query_parameters.items()}
        error_id = params.pop("upstreamError", "")
        self.application = self.router.url.path.removeprefix("/signup").strip("/")
        authorize = ""
        if self.router.url.path.rstrip("/") == OAUTH_PATH:  # the sign-up page of an OAuth authorize request
            client_id = params.get("client_id") or params.get("clientId") or ""
            client = await with_db(lambda db: lookup.application_by_client_id(db, client_id))
            self.application, authorize = (client.name if client is not None else ""), urlencode(params)
        self.invitation_code = str(self.router.url.query_parameters.get("invitationCode", ""))[:100]
        self.return_to = navigation.safe_return_path(str(self.router.url.query_parameters.get("from", "")))
        name = self.application

        def read(db, actor):
            application = signup.application_of(db, name)
            if not application.enable_sign_up:
                return application, None
            return application, signup.Items(application)

        found = await call(self, read, quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return
        application, items = found.value
        self.organization = application.organization
        if items is None:
            self.error = await say(self, signup.NOT_ENABLED)
            return
        self.terms_of_use = application.terms_of_use or ""
        prefs = await self.get_state(Prefs)
        self.items = [{**shown, "label": shown["label"] if shown["kind"] == "html" else prefs.say(shown["label"])}
                      for shown in (
            self._shown(name, item) for name, item in items.by_name.items()
            if items.visible(name) and name not in NOT_SHOWN)]
        if error_id and error_id != self._upstream_error[0]:
            self._upstream_error = (error_id, await with_db(lambda db: upstream.take_error(db, error_id)))
        self.error = self._upstream_error[1] if error_id else ""
        invitation_code = self.invitation_code
        self.providers = await with_db(lambda db: upstream.buttons(db, application, "signup", authorize_query=authorize,
                                                                   invitation_code=invitation_code))
        await self.new_captcha(f"admin/{self.application}")

    @staticmethod
    def _shown(name: str, item: dict) -> dict[str, str]:
        kind = "text"
        if signup.is_html_text(name):
            kind = "html"
            item = {**item, "label": signup.html_label(item), "required": False}
        elif name in ("Password", "Confirm password"):
            kind = "password"
        elif name in CODE_KINDS:
            kind = "code" if item.get("rule") != signup.NO_VERIFICATION else "address"
        elif name == "Display name":
            kind = "names" if item.get("rule") == "First, last" else "text"
        elif name == "Agreement":
            kind = "agreement"
        elif item.get("type") in ("Single Choice", "Multiple Choices"):
            kind = "choice"
        options = [str(o) for o in item.get("options") or [] if isinstance(o, str | int | float)]
        return {"name": name, "label": str(item.get("label") or name), "rule": str(item.get("rule") or ""),
                "required": "1" if item.get("required") else "", "kind": kind, "options": "\n".join(options),
                "placeholder": str(item.get("placeholder") or "")}

    @rx.event
    def set_address(self, item: str, value: str):
        """The typed email or phone, where the Send code button sends."""
        if item == "Email":
            self.email = value[:100]
        elif item == "Phone":
            self.phone = value[:30]

    @rx.event(background=True)
    async def send_code(self, item: str):
        """A code to the typed email or phone, for its signup item."""
        async with self:
            if self.busy or self.countdown > 0 or item not in CODE_KINDS:
                return
            self.busy, self.error = True, ""
            router, application = self.router, f"admin/{self.application}"
            kind = CODE_KINDS[item]
            dest = self.email if kind == verifications.EMAIL_KIND else self.phone
            solved = self.solved()
        sent = await in_thread(router, lambda db, actor: signup.send_code(
            db, application, kind, dest, captcha_type=solved[0], captcha_token=solved[1], captcha_id=solved[2],
            client_ip=client_ip(router)))
        async with self:
            toast = await self.code_sent(application, sent)
        yield toast
        if not sent.failed:
            await count_down(self)

    @rx.event
    def submit(self):
        """The form, posted by the browser (the password stays there)."""
        if self.busy or not self.items:
            return None
        self.busy, self.error = True, ""
        arguments = json.dumps([self.application, self.organization, self.captcha_id, self.return_to])[1:-1]
        return rx.call_script(f"window.iamSignup({arguments})", callback=Signup.submitted)

    @rx.event
    async def submitted(self, result: dict):
        self.busy = False
        status = (result or {}).get("status")
        if status == "mismatch":
            self.error = await say(self, INCONSISTENT)
        elif status == "agreement":
            self.error = await say(self, "Please accept the agreement!")
        elif status != "redirecting":
            self.error = (await self.get_state(Prefs)).script_failure(result) or ""
            if self.captcha_id:
                await self.new_captcha(f"admin/{self.application}")  # a captcha is good for one try


def _label(item: rx.Var, ident: str) -> rx.Component:
    return rx.text(rx.el.label(item["label"], html_for=ident),
                   rx.cond(item["required"] != "", rx.text.span(" *", color_scheme="red", aria_hidden="true")),
                   size="2", weight="medium")


def _input(item: rx.Var, key: str, ident: str, **props) -> rx.Component:
    return rx.input(id=ident, custom_attrs={"data-signup-key": key}, width="100%",
                    required=item["required"] != "", placeholder=item["placeholder"], **props)


def _field(item: rx.Var) -> rx.Component:
    ident = "signup-" + item["name"].to(str).lower().replace(" ", "-").replace("/", "-")
    key = rx.match(item["name"], *[(name, spec[0]) for name, spec in TEXT_ITEMS.items()],
                   ("Display name", "name"), item["name"])
    text = rx.vstack(_label(item, ident), _input(item, key, ident, auto_complete="off",
                                                 default_value=rx.cond(item["name"] == "Invitation code",
                                                                       Signup.invitation_code, "")),
                     spacing="1", width="100%")
    password = rx.vstack(_label(item, ident), _input(
        item, rx.cond(item["name"] == "Password", "password", "confirm"), ident, type="password",
        auto_complete="new-password"), spacing="1", width="100%")
    names = rx.hstack(*[rx.vstack(rx.text(rx.el.label(t(label), html_for=f"signup-{key.lower()}"), size="2",
                                          weight="medium"),
                                  rx.input(id=f"signup-{key.lower()}", custom_attrs={"data-signup-key": key},
                                           width="100%", auto_complete=complete),
                                  spacing="1", width="100%")
                        for key, label, complete in (("firstName", "First name", "given-name"),
                                                     ("lastName", "Last name", "family-name"))],
                      spacing="2", width="100%")
    is_email = item["name"] == "Email"
    address = _input(item, rx.cond(is_email, "email", "phone"), ident,
                     type=rx.cond(is_email, "email", "tel"), auto_complete=rx.cond(is_email, "email", "tel"),
                     on_change=lambda value: Signup.set_address(item["name"], value))
    with_code = rx.vstack(
        _label(item, ident), address,
        rx.hstack(
            rx.input(id=ident + "-code", custom_attrs={"data-signup-key": rx.cond(is_email, "emailCode", "phoneCode")},
                     placeholder=t("Code you received"), aria_label=t("Code you received"), flex="1",
                     auto_complete="one-time-code"),
            rx.button(rx.cond(Signup.countdown > 0, Signup.countdown.to(str) + " s", t("Send code")),
                      on_click=Signup.send_code(item["name"]), disabled=Signup.busy | (Signup.countdown > 0),
                      variant="soft", id=ident + "-send"),
            width="100%"),
        spacing="1", width="100%")
    agreement = rx.hstack(
        rx.checkbox(id="signup-agreement", custom_attrs={"data-signup-agreement": item["required"]}),
        rx.text(rx.el.label(t("I have read and agree to the"), html_for="signup-agreement"), " ",
                rx.link(t("Terms of Use"), href=Signup.terms_of_use, is_external=True, id="signup-terms"), size="2"),
        align="center", spacing="2")
    choice = rx.vstack(_label(item, ident), rx.el.select(
        rx.el.option("", value=""),
        rx.foreach(item["options"].to(str).split("\n"), lambda option: rx.el.option(option, value=option)),
        id=ident, custom_attrs={"data-signup-key": item["name"]}, class_name="rt-reset signup-choice",
        style={"width": "100%", "padding": "0.4em", "border": "1px solid var(--gray-7)", "border_radius": "4px",
               "background": "var(--color-background)", "color": "var(--gray-12)"}),
        spacing="1", width="100%")
    return rx.match(item["kind"], ("password", password), ("names", names), ("code", with_code),
                    ("address", rx.vstack(_label(item, ident), address, spacing="1", width="100%")),
                    ("agreement", agreement), ("choice", choice),
                    ("html", rx.box(rx.html(item["label"]), class_name="signup-text", width="100%")), text)


def signup_page() -> rx.Component:
    form = rx.vstack(
        rx.foreach(Signup.items, _field),
        captcha_fields(Signup, "signup"),
        rx.button(t("Sign Up"), on_click=Signup.submit, loading=Signup.busy, width="100%", id="signup-submit"),
        provider_buttons(Signup.providers, "signup", "Sign up with %s"),
        rx.text(t("Have account?"), " ",
                rx.link(t("sign in now"), href=rx.cond(Signup.organization != "", "/login/" + Signup.organization,
                                                       "/login"), id="signup-signin"), size="2"),
        spacing="3", width="100%")
    return public_page(rx.center(rx.card(rx.vstack(
        rx.hstack(rx.icon("user-plus", size=28), rx.heading(t("Sign Up"), size="6"), align="center"),
        rx.cond(Signup.organization != "",
                rx.text(Prefs.tr["Organization: %s"].replace("%s", Signup.organization), color_scheme="gray")),
        rx.cond(Signup.error != "", rx.callout(Signup.error, icon="triangle-alert", color_scheme="red", width="100%",
                                               id="signup-error")),
        rx.cond(Signup.items.length() > 0, form),
        spacing="3", width="100%"), width="26em", size="3"), min_height="100vh", padding_y="2em"))


page("/signup/[application]", "Sign Up", guarded=False, on_load=Signup.open)(signup_page)
page(OAUTH_PATH, "Sign Up", guarded=False, on_load=Signup.open)(signup_page)
