"""/select-plan/{owner}/{pricing}: a pricing's enabled plans, public as in Casdoor
(commerce/commerce.py pricing_plans). Choosing a plan opens its product's buy page with the
pricing and plan asked (/products/{owner}/{product}/buy?pricingName=..&planName=..): a signed-in
user pays there; a signed-out visitor's "Sign in to subscribe" opens the sign-in page of the
pricing's organization (/login/{owner}: the page its application's users sign in on, where the
built-in /login would not let them), which brings them to that buy page (?from=); or they sign
up first through the pricing's application, whose sign-up page signs them in and brings them
back here (?from=). Prices are written in their currency's minor units (commerce/money_text.py)."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote

import reflex as rx

from iam_console.commerce import commerce
from iam_console.core import navigation
from iam_console.i18n.formats import money_text
from iam_console.ui.routes import page
from iam_console.ui.shell import themed
from iam_console.ui.state.account import Account
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, message
from iam_console.ui.text import t


class SelectPlan(rx.State):
    pricing: dict[str, Any] = {}
    plans: list[dict[str, Any]] = []
    language: str = "en"  # of the prices shown
    error: str = ""
    ready: bool = False

    @rx.var
    def cards(self) -> list[dict[str, str]]:
        """Each plan; `href` opens its buy page, `signin` the organization's sign-in page, then it."""
        owner, pricing = str(self.pricing.get("owner", "")), str(self.pricing.get("name", ""))
        cards = []
        for p in self.plans:
            buy = (f"/products/{quote(owner)}/{quote(str(p['product']))}/buy?pricingName={quote(pricing)}"
                   f"&planName={quote(str(p['name']))}")
            cards.append({
                "name": str(p["name"]), "displayName": str(p["displayName"]), "description": str(p["description"]),
                "price": money_text(p["price"], str(p["currency"]), self.language), "period": str(p["period"]),
                "options": ", ".join(p["options"]), "href": buy,
                "signin": f"{navigation.login_target(owner)}?from={quote(buy, safe='')}",
            })
        return cards

    @rx.var
    def signup_href(self) -> str:
        application = str(self.pricing.get("application", ""))
        back = f"/select-plan/{self.pricing.get('owner', '')}/{self.pricing.get('name', '')}"
        return f"/signup/{quote(application)}?from={quote(back)}" if application else ""

    @rx.var
    def trial_days(self) -> int:
        value = self.pricing.get("trialDuration", 0)
        return value if isinstance(value, int) else 0

    @rx.event
    async def open(self):
        owner, _, name = self.router.url.path.removeprefix("/select-plan").strip("/").partition("/")
        self.error, self.ready = "", False
        self.language = (await self.get_state(Prefs)).lang
        found = await call(self, lambda db, actor: commerce.pricing_plans(db, owner, name), quiet=True)
        if found.failed:
            self.error = await message(self, found.error)
            return
        self.pricing, self.plans, self.ready = found.value["pricing"], found.value["plans"], True


def _plan(card: rx.Var) -> rx.Component:
    return rx.card(rx.vstack(
        rx.heading(card["displayName"], size="4", as_="h2"),
        rx.cond(card["description"] != "", rx.text(card["description"], size="2", color_scheme="gray")),
        rx.text(card["price"], " / ", card["period"], size="5", weight="bold", class_name="plan-price"),
        rx.cond(card["options"] != "", rx.text(card["options"], size="2")),
        rx.link(rx.button(rx.cond(Account.signed_in, t("Subscribe"), t("Sign in to subscribe")), width="100%"),
                href=rx.cond(Account.signed_in, card["href"], card["signin"]), class_name="plan-choose",
                id="plan-" + card["name"], width="100%"),
        spacing="3", width="100%"), width="16em", class_name="plan-card")


def select_plan_page() -> rx.Component:
    return themed(rx.center(rx.vstack(
        rx.heading(rx.cond(SelectPlan.ready, SelectPlan.pricing["displayName"].to(str), t("Choose a plan")),
                   size="7", as_="h1"),
        rx.cond(SelectPlan.error != "", rx.callout(SelectPlan.error, icon="triangle-alert", color_scheme="red",
                                                   id="select-plan-error", role="alert")),
        rx.cond(SelectPlan.ready & (SelectPlan.pricing["description"].to(str) != ""),
                rx.text(SelectPlan.pricing["description"].to(str), color_scheme="gray")),
        rx.cond(SelectPlan.trial_days > 0,
                rx.text(t("First subscription: free trial days"), ": ", SelectPlan.trial_days, id="select-plan-trial")),
        rx.hstack(rx.foreach(SelectPlan.cards, _plan), spacing="4", wrap="wrap", justify="center"),
        rx.cond(~Account.signed_in & (SelectPlan.signup_href != ""),
                rx.text(t("No account yet?"), " ", rx.link(t("Sign Up"), href=SelectPlan.signup_href,
                                                          id="select-plan-signup"), size="2")),
        spacing="4", align="center", padding="2em"), min_height="100vh"))


page("/select-plan/[owner]/[pricing]", "Choose a plan", guarded=False,
     on_load=[Account.refresh, SelectPlan.open])(select_plan_page)
