"""Products: list and edit. The price is hidden for a recharge product, which offers its
recharge options (and a custom amount unless that is disabled) instead; only payment providers
are offered; the edit page previews the buy page live (commerce/ui/product_card.py) and links
to it. A product a plan made keeps its owner, name, tag, currency, price, quantity, sold and
providers as the plan set them and is deleted with its plan: the kind's rules
(commerce/kinds/product.py), which the page shows as locked fields and a disabled Delete."""

from __future__ import annotations

import reflex as rx

from iam_console.commerce.kinds.product import is_plan_product
from iam_console.commerce.ui.product_card import entries, product_card
from iam_console.core.kinds import choices
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t

CURRENCIES = choices("product", "currency")


def _value(key: str) -> rx.Var:
    return rx.cond(Editing.values.contains(key), Editing.values[key], "")


def _preview() -> rx.Component:
    """The buy page as the edited values would show it, and the link to the saved one."""
    return rx.vstack(
        rx.heading(t("Preview"), size="3", as_="h2", id="product-preview-heading"),
        product_card(display_name=_value("displayName"), image=_value("image"), detail=_value("detail"),
                     description=_value("description"), price=_value("price"), currency=_value("currency"),
                     is_recharge=Editing.flags["isRecharge"], recharge_options=entries(_value("rechargeOptions")),
                     disable_custom_recharge=Editing.flags["disableCustomRecharge"],
                     providers=entries(_value("providers")), ident="product-preview"),
        rx.link(t("Test buy page"), href=f"/products/{Editing.saved_owner}/{Editing.saved_name}/buy",
                is_external=True, id="product-test-buy"),
        spacing="2", width="100%", margin_top="1em",
    )


def _recharge(values, flags):
    return flags["isRecharge"]


PRODUCTS = screen(Screen(
    key="product", title="Products", list_route="/products", edit_route="/products/{owner}/{name}",
    edit_title="Product", owner_picker=True, parts=lambda: (_preview(),),
    name_locked=is_plan_product, owner_locked=is_plan_product,
    protected=lambda record, me: is_plan_product(record),
    columns=(
        Column("name", "Name", link="/products/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("image", "Image", "avatar", sortable=False, searchable=False),
        Column("tag", "Tag"),
        Column("currency", "Currency", filters=CURRENCIES),
        Column("price", "Price", searchable=False),
        Column("quantity", "Quantity", searchable=False),
        Column("sold", "Sold", searchable=False),
        Column("isRecharge", "Is recharge", "bool", searchable=False),
        Column("providers", "Payment providers", "links", link="/providers/{owner}/{item}", sortable=False),
        Column("state", "State", filters=choices("product", "state")),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("image", "Image"),
        Field("tag", "Tag", locked_for=is_plan_product),
        Field("detail", "Detail"),
        Field("description", "Description"),
        Field("currency", "Currency", "select", options=CURRENCIES, locked_for=is_plan_product),
        Field("isRecharge", "Is recharge", "switch"),
        Field("price", "Price", "number", minimum=0, locked_for=is_plan_product,
              shown_when=lambda v, f: ~f["isRecharge"]),
        Field("rechargeOptions", "Recharge options", "list", shown_when=_recharge),
        Field("disableCustomRecharge", "Disable custom recharge", "switch", shown_when=_recharge),
        Field("quantity", "Quantity", "number", minimum=0, locked_for=is_plan_product),
        Field("sold", "Sold", "number", minimum=0, locked_for=is_plan_product),
        Field("providers", "Payment providers", "pick", kind="provider", category="Payment", multiple=True,
              locked_for=is_plan_product),
        Field("successUrl", "Success URL"),
        Field("returnUrl", "Return URL"),
        Field("state", "State", "select", options=choices("product", "state")),
    ),
))
