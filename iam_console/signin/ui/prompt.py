"""/prompt/{application}: the application's prompted signup items the signed-in account has not
answered (signin/prompt.py), asked after a sign-in through the application, and its prompted
provider rows, each linked or with Link (the flow of the account page, coming back here); then
on to the authorize page with the same request (the query this page was opened with), or to the
page the sign-in started from. The items must be answered; the providers may be skipped."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode

import reflex as rx

from iam_console.core import lookup, navigation
from iam_console.federation import upstream
from iam_console.federation.ui.provider_buttons import full_load
from iam_console.oauth.ui.authorize import Authorize
from iam_console.signin import prompt
from iam_console.ui.routes import page
from iam_console.ui.shell import public_page
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, message, with_db
from iam_console.ui.text import t

AUTHORIZE = "/login/oauth/authorize"


ERROR_PARAM = "upstreamError"  # a refused link's message (federation/upstream.note_error)


class Prompt(rx.State):
    application: str = ""
    items: list[dict[str, str]] = []  # name, label, placeholder
    links: list[dict[str, str]] = []  # the prompted provider rows (federation/upstream.prompted_links)
    error: str = ""
    ready: bool = False
    _values: dict[str, str] = {}
    _upstream_error: tuple[str, str] = ("", "")  # (id, message): shown again when on_load reruns

    def _params(self) -> list[tuple[str, str]]:
        return [(k, v) for k, v in parse_qsl(self.router.url.query, keep_blank_values=True) if k != ERROR_PARAM]

    @rx.var
    def next_page(self) -> str:
        """The authorize page with this page's own query (the OAuth request), else the page the
        sign-in started from (?from=), else home."""
        params = self._params()
        if any(k in ("client_id", "clientId") for k, _ in params):
            return f"{AUTHORIZE}?{urlencode(params)}"
        return navigation.safe_return_path(dict(params).get("from"))

    @rx.var
    def all_linked(self) -> bool:
        return all(link["linked"] for link in self.links)

    @rx.event
    async def open(self):
        self.error, self.items, self.links, self.ready, self._values = "", [], [], False, {}
        self.application = self.router.url.path.removeprefix("/prompt").strip("/")
        name = self.application
        params = self._params()
        here = f"/prompt/{self.application}" + (f"?{urlencode(params)}" if params else "")
        error_id = str(self.router.url.query_parameters.get(ERROR_PARAM, ""))
        if error_id and error_id != self._upstream_error[0]:
            self._upstream_error = (error_id, await with_db(lambda db: upstream.take_error(db, error_id)))

        def read(db, actor):
            if actor.user is None:
                return None
            application = lookup.application(db, name)
            if application is None:
                return [], []
            return prompt.missing(application, actor.user), upstream.prompted_links(db, application, actor.user, here)

        found = await call(self, read, quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return None
        if found.value is None:  # nobody signed in: the guard sends them to sign in
            return None
        items, links = found.value
        if not items and not links:  # nothing to ask
            return await self._onward()
        prefs = await self.get_state(Prefs)
        self.items = [{"name": item["name"], "label": prefs.say(str(item.get("label") or item["name"])),
                       "placeholder": str(item.get("placeholder") or "")} for item in items]
        self.links = links
        self.error = self._upstream_error[1] if error_id else ""
        self.ready = True
        return None

    @rx.event
    async def go_on(self):
        """Continue (every prompted provider linked) or Skip (some not): the items are answered."""
        return await self._onward()

    @rx.event
    def set_value(self, name: str, value: str):
        self._values = {**self._values, name: value[:100]}

    @rx.event
    async def save(self):
        name, values = self.application, dict(self._values)
        done = await call(self, lambda db, actor: prompt.answer(db, name, actor.user, values), quiet=True)
        if done.failed:
            self.error = await message(self, done.error)
            return None
        return await self._onward()

    async def _onward(self):
        """On to the next page. The authorize page this tab signed in on answers its request anew:
        its guard against reruns of on_load would otherwise take the return for one, and wait."""
        (await self.get_state(Authorize)).forget_answer()
        return rx.redirect(self.next_page)


def _item(item: rx.Var) -> rx.Component:
    ident = "prompt-" + item["name"].to(str).lower().replace(" ", "-").replace("/", "-")
    return rx.vstack(
        rx.text(rx.el.label(item["label"], html_for=ident), size="2", weight="medium"),
        rx.input(id=ident, placeholder=item["placeholder"], width="100%",
                 on_change=lambda value: Prompt.set_value(item["name"], value)),
        spacing="1", width="100%")


def _link(link: rx.Var) -> rx.Component:
    name = link["name"].to(str)
    button = rx.el.a(t("Link"), href=link["href"], custom_attrs=full_load(), id="prompt-link-" + name,
                     aria_label=Prefs.tr["Link"] + " " + link["label"].to(str),
                     style={"color": "var(--accent-11)", "font_size": "var(--font-size-2)"})
    status = rx.cond(link["linked"] != "",
                     rx.badge(t("Linked"), color_scheme="green", id="prompt-linked-" + name),
                     button)
    return rx.hstack(
        rx.el.img(src=link["icon"], alt="", width="20", height="20", style={"display": "block"}),
        rx.text(link["label"], size="2", weight="medium"),
        rx.cond(link["linked"] != "", rx.text(link["username"], size="2", color_scheme="gray")),
        rx.spacer(), status,
        align="center", width="100%", id="prompt-provider-" + name, class_name="prompt-provider")


def prompt_page() -> rx.Component:
    return public_page(rx.center(rx.card(rx.vstack(
        rx.heading(t("Complete your profile"), size="6"),
        rx.text(t("The application asks for these before you go on."), size="2", color_scheme="gray"),
        rx.cond(Prompt.error != "", rx.callout(Prompt.error, icon="triangle-alert", color_scheme="red",
                                               width="100%", id="prompt-error")),
        rx.cond(Prompt.ready, rx.vstack(
            rx.foreach(Prompt.items, _item),
            rx.cond(Prompt.links.length() > 0, rx.vstack(
                rx.text(t("Linked accounts"), size="2", weight="medium"),
                rx.foreach(Prompt.links, _link),
                spacing="2", width="100%", id="prompt-providers")),
            rx.cond(Prompt.items.length() > 0,
                    rx.button(t("Submit and continue"), on_click=Prompt.save, width="100%", id="prompt-submit"),
                    rx.button(rx.cond(Prompt.all_linked, t("Continue"), t("Skip")), on_click=Prompt.go_on,
                              width="100%", id="prompt-continue")),
            spacing="3", width="100%")),
        spacing="3", width="100%"), width="24em", size="3"), min_height="100vh"))


page("/prompt/[application]", "Complete your profile", on_load=Prompt.open)(prompt_page)
