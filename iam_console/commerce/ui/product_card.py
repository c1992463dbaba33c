"""A product as its buy page shows it: its picture, name, detail and description, the price
(or, for a recharge product, the amounts offered and a custom amount), and a button per
payment provider. Every argument is a Var, so the same card is the product edit page's live
preview (over the form's edited values) and the buy page (over the product read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import reflex as rx

from iam_console.ui.text import t

# the currencies of a product (commerce/kinds/product.py CURRENCIES) and the sign shown before an amount
CURRENCY_SIGNS = (("USD", "$"), ("CNY", "¥"), ("EUR", "€"), ("JPY", "¥"), ("GBP", "£"), ("AUD", "A$"),
                  ("CAD", "C$"), ("CHF", "CHF "), ("HKD", "HK$"), ("SGD", "S$"))


def currency_sign(currency: rx.Var) -> rx.Var:
    """The sign of a currency ("" for one without)."""
    return rx.match(currency, *CURRENCY_SIGNS, "")


def entries(text: rx.Var) -> rx.Var:
    """A form's comma-separated text (an edit page's list value) as its entries (none for "")."""
    return rx.cond(text.strip() != "", text.split(", "), [])


def _amount(sign: rx.Var, amount: Any, currency: rx.Var) -> rx.Var:
    return rx.Var.create(f"{sign}{amount} ({currency})")


def product_card(*, display_name: rx.Var, image: rx.Var, detail: rx.Var, description: rx.Var, price: rx.Var,
                 currency: rx.Var, is_recharge: rx.Var, recharge_options: rx.Var, disable_custom_recharge: rx.Var,
                 providers: rx.Var, on_pay: Callable[[rx.Var], Any] | None = None,
                 ident: str = "product-card", price_text: rx.Var | None = None,
                 recharge: rx.Component | None = None,
                 provider_label: Callable[[rx.Var], rx.Var] | None = None) -> rx.Component:
    """`recharge_options` and `providers` are lists (`entries` of a form's text). `on_pay`:
    the event of a provider's button on the buy page (given the provider's Var, an entry of
    `providers`); without it (the preview) the buttons are shown disabled. The buy page passes
    what it has read: `price_text` (the price as money_text writes it, instead of the sign and
    the typed number), `recharge` (the amount chooser, the price of a recharge product) and
    `provider_label` (a provider's button text from its entry: its display name)."""
    sign = currency_sign(currency)
    options, named = recharge_options, providers
    price_part = rx.cond(
        is_recharge,
        recharge if recharge is not None else rx.vstack(
            rx.hstack(rx.foreach(options, lambda option: rx.badge(_amount(sign, option, currency), size="2",
                                                                   variant="soft", class_name=f"{ident}-option")),
                      spacing="2", wrap="wrap"),
            rx.cond(disable_custom_recharge, rx.fragment(),
                    rx.input(placeholder=t("Custom amount"), aria_label=t("Custom amount"), type="number",
                             disabled=on_pay is None, id=f"{ident}-custom-amount", width="12em")),
            spacing="2", id=f"{ident}-recharge",
        ),
        rx.text(price_text if price_text is not None else _amount(sign, price, currency), size="5",
                weight="bold", id=f"{ident}-price"),
    )

    def pay_button(provider: rx.Var) -> rx.Component:
        label = provider_label(provider) if provider_label is not None else provider
        return rx.button(label, variant="soft", class_name=f"{ident}-provider", disabled=on_pay is None,
                         on_click=on_pay(provider) if on_pay is not None else None)

    return rx.card(
        rx.vstack(
            rx.cond(image != "", rx.image(src=image, alt=display_name, max_height="160px", max_width="100%",
                                          object_fit="contain", id=f"{ident}-image")),
            rx.heading(display_name, size="4", as_="h2", id=f"{ident}-name"),
            rx.cond(detail != "", rx.text(detail, size="2", id=f"{ident}-detail")),
            rx.cond(description != "", rx.text(description, size="2", color_scheme="gray", id=f"{ident}-description")),
            rx.hstack(rx.text(t("Price"), size="2", weight="medium"), price_part, align="center", spacing="3"),
            rx.text(t("Pay with"), size="2", weight="medium"),
            rx.cond(named.length() > 0,
                    rx.hstack(rx.foreach(named, pay_button), spacing="2", wrap="wrap"),
                    rx.text(t("No payment provider"), size="2", color_scheme="gray", id=f"{ident}-no-provider")),
            spacing="3", width="100%",
        ),
        id=ident, width="100%", max_width="32em",
    )
