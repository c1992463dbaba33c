"""Plans: list and edit. A plan's price, currency (USD or CNY), period (Monthly or Yearly),
payment providers (only payment providers are offered), the role its subscribers are granted
(a role of its organization), options and whether it is enabled. Its product is the one the
service made for it (commerce/kinds/plan.py): shown, never edited here."""

from __future__ import annotations

from iam_console.core.kinds import choices
from iam_console.ui.screens import Column, Field, Screen, screen

PLANS = screen(Screen(
    key="plan", title="Plans", list_route="/plans", edit_route="/plans/{owner}/{name}", edit_title="Plan",
    owner_picker=True,
    columns=(
        Column("name", "Name", link="/plans/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("displayName", "Display name"),
        Column("price", "Price", searchable=False),
        Column("currency", "Currency", filters=choices("plan", "currency")),
        Column("period", "Period", filters=choices("plan", "period")),
        Column("product", "Product", link="/products/{owner}/{product}"),
        Column("paymentProviders", "Payment providers", "links", link="/providers/{owner}/{item}", sortable=False),
        Column("role", "Role", link="/roles/{owner}/{role}"),
        Column("isEnabled", "Is enabled", "bool", searchable=False),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("description", "Description"),
        Field("price", "Price", "number", minimum=0),
        Field("currency", "Currency", "select", options=choices("plan", "currency")),
        Field("period", "Period", "select", options=choices("plan", "period")),
        Field("product", "Product", derived=True),
        Field("paymentProviders", "Payment providers", "pick", kind="provider", category="Payment", multiple=True),
        Field("role", "Role", "pick", kind="role"),
        Field("options", "Options", "list"),
        Field("isExclusive", "Is exclusive", "switch"),
        Field("isEnabled", "Is enabled", "switch"),
    ),
))
