"""Orders: list and edit, in the Business & Payments menu as Casdoor has them, and each order's
pay page (/orders/{owner}/{name}/pay). An order is placed by its buyer (place-order, buy-product:
commerce/commerce.py); the edit page shows what it holds (its products, price and payment are the
flow's, never edited by hand). The list's Pay, on a Created order, opens the pay page: the order,
its products and its payment, and a button per payment provider of its first product, which pays
it as pay-order does (Dummy and Balance at once, Stripe and PayPal at their own page, then the
payment's result page). The buyer and their organization's admins may pay (commerce.order_to_pay)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.commerce import commerce
from iam_console.commerce.ui.buy import go_to, path_record
from iam_console.i18n.formats import money_text
from iam_console.ui.screens import Cell, Column, Field, Route, RowAction, Screen, screen
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import in_thread, message
from iam_console.ui.text import t

STATE_COLORS = (("Created", "blue"), ("Paid", "green"), ("Canceled", "gray"), ("Failed", "red"),
                ("Timeout", "orange"))
PAY = RowAction("pay", "Pay", shown_for=lambda record: record.get("state") == "Created",
                link="/orders/{owner}/{name}/pay")


def _products(record: dict[str, Any]) -> str:
    return ", ".join(str(i.get("displayName") or i.get("name", "")) for i in record.get("products") or []
                     if isinstance(i, dict))


class OrderPay(rx.State):
    order: dict[str, Any] = {}
    payment: dict[str, Any] = {}
    providers: list[dict[str, str]] = []
    language: str = "en"  # of the amounts shown
    error: str = ""
    paying: bool = False
    ready: bool = False

    @rx.var
    def price_text(self) -> str:
        return money_text(self.order.get("price"), str(self.order.get("currency") or ""), self.language)

    @rx.var
    def items(self) -> list[dict[str, str]]:
        """The order's products as the page lists them."""
        return [{"name": str(i.get("name", "")), "displayName": str(i.get("displayName") or i.get("name", "")),
                 "price": money_text(i.get("price"), str(i.get("currency") or ""), self.language),
                 "quantity": str(i.get("quantity", 1)), "link": f"/products/{i.get('owner', '')}/{i.get('name', '')}"}
                for i in self.order.get("products") or [] if isinstance(i, dict)]

    @rx.var
    def state_name(self) -> str:
        return str(self.order.get("state", ""))

    @rx.event(background=True)
    async def open(self):
        async with self:
            owner, name = path_record(self.router.url.path, "/orders", "/pay")
            self.error, self.ready, self.paying = "", False, False
            router, language = self.router, (await self.get_state(Prefs)).lang
            self.language = language
        found = await in_thread(router, lambda db, actor: commerce.order_to_pay(db, actor, owner, name), language)
        async with self:
            if found.failed:
                self.error = await message(self, found.error)
                return
            self.order, self.payment = found.value["order"], found.value["payment"] or {}
            self.providers, self.ready = found.value["providers"], True

    @rx.event(background=True)
    async def pay(self, provider: str):
        async with self:
            if self.paying:
                return
            self.paying, self.error = True, ""
            owner, name = str(self.order.get("owner", "")), str(self.order.get("name", ""))
            router, language = self.router, (await self.get_state(Prefs)).lang

        # Stripe and PayPal are asked over the network: on a worker thread
        paid = await in_thread(router, lambda db, actor: commerce.pay_order(db, actor, owner, name, provider).pay_url,
                               language)
        async with self:
            self.paying = False
            if paid.failed:
                self.error = await message(self, paid.error)
                return None
            return go_to(paid.value)


def _line(label: str, value: Any, ident: str) -> rx.Component:
    return rx.grid(rx.text(t(label), size="2", weight="medium"), rx.box(value, id=ident), columns="10em 1fr",
                   spacing="3", width="100%")


def pay_page() -> rx.Component:
    order, payment = OrderPay.order, OrderPay.payment
    owner = order["owner"].to(str)
    products = rx.table.root(
        rx.table.header(rx.table.row(*[rx.table.column_header_cell(t(label)) for label in (
            "Name", "Display name", "Price", "Quantity")])),
        rx.table.body(rx.foreach(OrderPay.items, lambda item: rx.table.row(
            rx.table.cell(rx.link(item["name"], href=item["link"])), rx.table.cell(item["displayName"]),
            rx.table.cell(item["price"]), rx.table.cell(item["quantity"]), class_name="order-product"))),
        width="100%", id="order-products")
    paying = rx.cond(OrderPay.state_name == "Created", rx.vstack(
        rx.heading(t("Pay"), size="3", as_="h2"),
        rx.cond(OrderPay.providers.length() > 0,
                rx.hstack(rx.foreach(OrderPay.providers, lambda provider: rx.button(
                    provider["displayName"], on_click=OrderPay.pay(provider["name"]), loading=OrderPay.paying,
                    class_name="order-pay-provider")), spacing="2", wrap="wrap"),
                rx.text(t("There is no payment channel for this product."), size="2", id="order-no-provider")),
        spacing="2", width="100%"))
    details = rx.card(rx.vstack(
        _line("ID", owner + "/" + order["name"].to(str), "order-id"),
        _line("State", rx.badge(OrderPay.state_name, color_scheme=rx.match(
            OrderPay.state_name, *STATE_COLORS, "gray"), variant="soft"), "order-state"),
        _line("Created time", order["createdTime"].to(str).replace("T", " ").replace("Z", ""), "order-created"),
        _line("User", rx.link(order["user"].to(str), href="/users/" + owner + "/" + order["user"].to(str)),
              "order-user"),
        _line("Price", OrderPay.price_text, "order-price"),
        rx.heading(t("Products"), size="3", as_="h2"),
        products,
        rx.cond(payment.contains("name"), _line(
            "Payment", rx.link(payment["name"].to(str), href="/payments/" + owner + "/" + payment["name"].to(str)),
            "order-payment")),
        paying,
        spacing="3", width="100%"), width="100%")
    return rx.center(rx.vstack(
        rx.heading(t("Order"), size="6", as_="h1"),
        rx.cond(OrderPay.error != "", rx.callout(OrderPay.error, icon="triangle-alert", color_scheme="red",
                                                 width="100%", id="order-error", role="alert")),
        rx.cond(OrderPay.ready, details),
        spacing="4", width="100%", max_width="48em", align="center"))


ORDERS = screen(Screen(
    key="order", title="Orders", list_route="/orders", edit_route="/orders/{owner}/{name}", edit_title="Order",
    owner_picker=True, row_buttons=(PAY,),
    routes=(Route("/orders/[p0]/[p1]/pay", "Pay", pay_page, OrderPay.open),),
    columns=(
        Column("name", "Name", link="/orders/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("products", "Products", value=_products, sortable=False, searchable=False),
        Column("price", "Price", searchable=False),
        Column("currency", "Currency"),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("payment", "Payment", link="/payments/{owner}/{payment}"),
        Column("state", "State", "badge", filters=commerce.ORDER_STATES, colors=STATE_COLORS),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("products", "Products", "rows", derived=True, columns=(
            Cell("name", "Name", "text"), Cell("displayName", "Display name", "text"),
            Cell("price", "Price", "text"), Cell("quantity", "Quantity", "text"))),
        Field("user", "User", "pick", kind="user"),
        Field("price", "Price", derived=True),
        Field("currency", "Currency", derived=True),
        Field("payment", "Payment", derived=True),
        Field("state", "State", "select", options=commerce.ORDER_STATES),
        Field("message", "Message", "textarea"),
    ),
))
