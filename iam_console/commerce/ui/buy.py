"""The public commerce pages (docs/architecture.md, "Payments"):

- /products/{owner}/{name}/buy: a signed-in user of the product's organization picks one of its
  payment providers and pays (commerce/commerce.py buy_product); Dummy and Balance land on the
  result page at once, Stripe and PayPal on their own pay page, which returns to the result page.
  Signed out, the guard sends the user to sign in and back here (with the plan and pricing asked).
- /payments/{owner}/{name}/result: the payment's state, checked with the provider while it is
  still Created, and the transactions it set off.

Both are guarded pages: the shell's guard sends a signed-out visitor to sign in, then back. Their
slugs are the screens' ([p0]/[p1]: Reflex wants one slug name per dynamic segment, and the product
and payment edit pages hold these paths' first two)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qs

import reflex as rx

from iam_console.commerce import commerce
from iam_console.commerce.ui.product_card import product_card
from iam_console.i18n.formats import money_text
from iam_console.settings import settings
from iam_console.ui.routes import page
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import in_thread, message
from iam_console.ui.text import t


def path_record(path: str, prefix: str, suffix: str) -> tuple[str, str]:
    """The owner and name a page's path holds: /products/{owner}/{name}/buy."""
    middle = path.removeprefix(prefix).removesuffix(suffix).strip("/")
    owner, _, name = middle.partition("/")
    return owner, name


class Buy(rx.State):
    owner: str = ""
    name: str = ""
    product: dict[str, Any] = {}
    providers: list[dict[str, str]] = []
    pricing: str = ""
    plan: str = ""
    amount: str = ""  # a recharge's amount
    language: str = "en"  # of the amounts shown
    error: str = ""
    paying: bool = False
    ready: bool = False

    @rx.var
    def is_recharge(self) -> bool:
        return bool(self.product.get("isRecharge"))

    @rx.var
    def price_text(self) -> str:
        return money_text(self.product.get("price"), str(self.product.get("currency") or ""), self.language)

    @rx.var
    def recharge_options(self) -> list[dict[str, str]]:
        """Each amount offered: its value (what is paid) and its text in the currency."""
        currency = str(self.product.get("currency") or "")
        return [{"value": str(o), "text": money_text(o, currency, self.language)}
                for o in self.product.get("rechargeOptions") or [] if isinstance(o, int | float)]

    @rx.event(background=True)
    async def open(self):
        async with self:
            self.owner, self.name = path_record(self.router.url.path, "/products", "/buy")
            query = parse_qs(self.router.url.query)
            self.pricing = (query.get("pricingName") or [""])[0]
            self.plan = (query.get("planName") or [""])[0]
            self.error, self.ready, self.paying, self.amount = "", False, False, ""
            owner, name, router = self.owner, self.name, self.router
            language = self.language = (await self.get_state(Prefs)).lang
        found = await in_thread(router, lambda db, actor: commerce.product_for_buyer(db, actor, owner, name),
                                language)
        async with self:
            if found.failed:
                self.error = await message(self, found.error)
                return
            self.product, self.providers, self.ready = found.value["product"], found.value["providers"], True

    @rx.event
    def set_amount(self, value: str):
        self.amount = value.strip()[:20]

    @rx.event
    def choose_amount(self, value: str):
        self.amount = value

    @rx.event(background=True)
    async def pay(self, provider: str):
        async with self:
            if self.paying:
                return
            self.paying, self.error = True, ""
            owner, name, router = self.owner, self.name, self.router
            pricing, plan, amount = self.pricing, self.plan, self.amount if self.is_recharge else None
            language = (await self.get_state(Prefs)).lang

        def buy(db, actor):
            return commerce.buy_product(db, actor, (owner, name), provider, pricing=pricing, plan=plan,
                                        custom_price=amount).pay_url

        # Stripe and PayPal are asked over the network: on a worker thread
        paid = await in_thread(router, buy, language)
        async with self:
            self.paying = False
            if paid.failed:
                self.error = await message(self, paid.error)
                return None
            return go_to(paid.value)


def go_to(url: str):
    """Our own result page within the app; a provider's pay page by a full page load."""
    if url.startswith(f"{settings.origin}/"):
        return rx.redirect(url.removeprefix(settings.origin))
    return rx.call_script(f"window.location.assign({json.dumps(url)})")


def _recharge() -> rx.Component:
    """A recharge's amount, the card's price: one of the options, or (where allowed) the buyer's own."""
    return rx.vstack(
        rx.hstack(rx.foreach(Buy.recharge_options, lambda option: rx.button(
            option["text"], variant=rx.cond(Buy.amount == option["value"], "solid", "soft"), size="1",
            on_click=Buy.choose_amount(option["value"]), class_name="buy-option")), spacing="2", wrap="wrap"),
        rx.cond(Buy.product["disableCustomRecharge"].to(bool), rx.fragment(), rx.vstack(
            rx.el.label(t("Amount"), html_for="buy-amount"),
            rx.input(id="buy-amount", type="number", value=Buy.amount, on_change=Buy.set_amount, width="12em"),
            spacing="1")),
        spacing="2", width="100%", max_width="32em", id="buy-recharge",
    )


def buy_page() -> rx.Component:
    product = Buy.product
    # the product as its edit page previews it (commerce/ui/product_card.py), its price in the
    # currency's minor units; a recharge's price row is where its amount is chosen
    card = product_card(
        display_name=product["displayName"].to(str), image=product["image"].to(str),
        detail=product["detail"].to(str), description=product["description"].to(str),
        price=product["price"].to(str), currency=product["currency"].to(str), is_recharge=Buy.is_recharge,
        recharge_options=rx.Var.create([]), disable_custom_recharge=rx.Var.create(True),
        providers=Buy.providers, on_pay=lambda provider: Buy.pay(provider["name"]), ident="buy-card",
        price_text=Buy.price_text, recharge=_recharge(),
        provider_label=lambda provider: provider["displayName"])
    return rx.center(rx.vstack(
        rx.heading(t("Buy"), size="6", as_="h1"),
        rx.cond(Buy.error != "", rx.callout(Buy.error, icon="triangle-alert", color_scheme="red", width="100%",
                                            id="buy-error", role="alert")),
        rx.cond(Buy.plan != "", rx.text(t("Plan"), ": ", Buy.plan, size="2", id="buy-plan")),
        rx.cond(Buy.ready, card),
        spacing="4", width="100%", max_width="32em", align="center"))


page("/products/[p0]/[p1]/buy", "Buy", on_load=Buy.open)(buy_page)


class PaymentResult(rx.State):
    payment: dict[str, Any] = {}
    transactions: list[dict[str, Any]] = []
    language: str = "en"  # of the amounts shown
    error: str = ""
    ready: bool = False

    @rx.var
    def state_name(self) -> str:
        return str(self.payment.get("state", ""))

    @rx.var
    def price_text(self) -> str:
        return money_text(self.payment.get("price"), str(self.payment.get("currency") or ""), self.language)

    @rx.var
    def rows(self) -> list[dict[str, str]]:
        return [{"category": str(x.get("category", "")),
                 "amount": money_text(x.get("amount", 0), str(x.get("currency") or ""), self.language),
                 "state": str(x.get("state", ""))}
                for x in self.transactions]

    @rx.var
    def return_url(self) -> str:
        return str(self.payment.get("returnUrl", ""))

    @rx.event(background=True)
    async def open(self):
        async with self:
            owner, name = path_record(self.router.url.path, "/payments", "/result")
            self.error, self.ready = "", False
            router = self.router
            language = self.language = (await self.get_state(Prefs)).lang
        # a Stripe or PayPal payment still Created is checked with the provider: on a worker thread
        found = await in_thread(router, lambda db, actor: commerce.payment_result(db, actor, owner, name), language)
        async with self:
            if found.failed:
                self.error = await message(self, found.error)
                return
            self.payment, self.transactions = found.value["payment"], found.value["transactions"]
            self.ready = True


def _state_badge() -> rx.Component:
    return rx.badge(PaymentResult.state_name, size="2", id="payment-state",
                    color_scheme=rx.match(PaymentResult.state_name, ("Paid", "green"), ("Created", "blue"),
                                          ("Canceled", "gray"), ("Timeout", "orange"), "red"))


def result_page() -> rx.Component:
    payment = PaymentResult.payment
    details = rx.card(rx.vstack(
        rx.hstack(rx.heading(payment["productsDisplayName"].to(str), size="4", as_="h2"), _state_badge(),
                  align="center", spacing="3"),
        rx.text(t("Price"), ": ", PaymentResult.price_text, size="2", id="payment-price"),
        rx.text(t("Payment provider"), ": ", payment["provider"].to(str), size="2"),
        rx.cond(payment["message"].to(str) != "", rx.text(payment["message"].to(str), size="2",
                                                         color_scheme="gray", id="payment-message")),
        rx.cond(PaymentResult.state_name == "Created", rx.hstack(
            rx.text(t("The payment is not complete yet."), size="2"),
            rx.button(t("Check again"), on_click=PaymentResult.open, size="1", variant="soft", id="payment-check"),
            rx.cond(payment["payUrl"].to(str) != "",
                    rx.link(t("Pay now"), href=payment["payUrl"].to(str), id="payment-pay-url")),
            spacing="3", align="center")),
        rx.cond(PaymentResult.rows.length() > 0, rx.vstack(
            rx.heading(t("Transactions"), size="3", as_="h3"),
            rx.table.root(
                rx.table.header(rx.table.row(
                    rx.table.column_header_cell(t("Category")),
                    rx.table.column_header_cell(t("Amount")), rx.table.column_header_cell(t("State")))),
                rx.table.body(rx.foreach(PaymentResult.rows, lambda r: rx.table.row(
                    rx.table.cell(r["category"]), rx.table.cell(r["amount"]),
                    rx.table.cell(r["state"]), class_name="payment-transaction"))),
                width="100%", id="payment-transactions"),
            spacing="2", width="100%")),
        rx.cond(PaymentResult.return_url != "",
                rx.link(t("Return to Website"), href=PaymentResult.return_url, id="payment-return")),
        spacing="3", width="100%"), width="100%", max_width="40em")
    return rx.center(rx.vstack(
        rx.heading(t("Payment result"), size="6", as_="h1"),
        rx.cond(PaymentResult.error != "", rx.callout(PaymentResult.error, icon="triangle-alert", color_scheme="red",
                                                      width="100%", id="payment-error", role="alert")),
        rx.cond(PaymentResult.ready, details),
        spacing="4", width="100%", max_width="40em", align="center"))


page("/payments/[p0]/[p1]/result", "Payment result", on_load=PaymentResult.open)(result_page)
