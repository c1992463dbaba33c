"""/prompt/{application}: the application's prompted signup items the signed-in account has not
answered (services/prompt.py), asked after a sign-in through the application; then on to the
authorize page with the same request (the query this page was opened with), or home."""

from __future__ import annotations

import reflex as rx

from ...services import lookup, prompt
from ..routes import page
from ..shell import themed
from ..state.prefs import Prefs
from ..state.service import call, message
from ..text import t

AUTHORIZE = "/login/oauth/authorize"


class Prompt(rx.State):
    application: str = ""
    items: list[dict[str, str]] = []  # name, label, placeholder
    error: str = ""
    ready: bool = False
    _values: dict[str, str] = {}

    @rx.var
    def next_page(self) -> str:
        """The authorize page with this page's own query (the OAuth request), else home."""
        query = self.router.url.query
        return f"{AUTHORIZE}?{query}" if "client_id=" in query or "clientId=" in query else "/"

    @rx.event
    async def open(self):
        self.error, self.items, self.ready, self._values = "", [], False, {}
        self.application = self.router.url.path.removeprefix("/prompt").strip("/")
        name = self.application

        def read(db, actor):
            if actor.user is None:
                return None
            application = lookup.application(db, name)
            return prompt.missing(application, actor.user) if application is not None else []

        found = await call(self, read, quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return None
        if not found.value:  # nothing to ask (or nobody signed in: the guard sends them to sign in)
            return rx.redirect(self.next_page) if found.value is not None else None
        prefs = await self.get_state(Prefs)
        self.items = [{"name": item["name"], "label": prefs.say(str(item.get("label") or item["name"])),
                       "placeholder": str(item.get("placeholder") or "")} for item in found.value]
        self.ready = True
        return None

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
        return rx.redirect(self.next_page)


def _item(item: rx.Var) -> rx.Component:
    ident = "prompt-" + item["name"].to(str).lower().replace(" ", "-").replace("/", "-")
    return rx.vstack(
        rx.text(rx.el.label(item["label"], html_for=ident), size="2", weight="medium"),
        rx.input(id=ident, placeholder=item["placeholder"], width="100%",
                 on_change=lambda value: Prompt.set_value(item["name"], value)),
        spacing="1", width="100%")


def prompt_page() -> rx.Component:
    return themed(rx.center(rx.card(rx.vstack(
        rx.heading(t("Complete your profile"), size="6"),
        rx.text(t("The application asks for these before you go on."), size="2", color_scheme="gray"),
        rx.cond(Prompt.error != "", rx.callout(Prompt.error, icon="triangle-alert", color_scheme="red",
                                               width="100%", id="prompt-error")),
        rx.cond(Prompt.ready, rx.vstack(
            rx.foreach(Prompt.items, _item),
            rx.button(t("Submit and continue"), on_click=Prompt.save, width="100%", id="prompt-submit"),
            spacing="3", width="100%")),
        spacing="3", width="100%"), width="24em", size="3"), min_height="100vh"))


page("/prompt/[application]", "Complete your profile", on_load=Prompt.open)(prompt_page)
