"""Transactions: the list (filtered by the values the payment flow writes: the type, the category
of the provider that moved the money, and the subtype, its provider type) and a view-only
edit page: a transaction records money that moved, written by the payment flow, so every field
is shown disabled and nothing is saved from here (the API's update-transaction remains, as
Casdoor's)."""

from __future__ import annotations

from iam_console.applications.kinds.provider import TYPES
from iam_console.commerce.kinds import transaction
from iam_console.ui.screens import Column, Field, Screen, screen

TRANSACTIONS = screen(Screen(
    key="transaction", title="Transactions", list_route="/transactions",
    edit_route="/transactions/{owner}/{name}", edit_title="Transaction", view_only=True,
    columns=(
        Column("name", "Name", link="/transactions/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("provider", "Provider", link="/providers/{owner}/{provider}"),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("type", "Type", filters=transaction.TYPES),
        Column("subtype", "Subtype", filters=TYPES["Payment"]),
        Column("productName", "Product", link="/products/{owner}/{productName}"),
        Column("currency", "Currency"),
        Column("amount", "Amount", searchable=False),
        Column("application", "Application", link="/applications/admin/{application}"),
        Column("payment", "Payment", link="/payments/{owner}/{payment}"),
        Column("state", "State"),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("provider", "Provider"),
        Field("category", "Category"),
        Field("type", "Type"),
        Field("subtype", "Subtype"),
        Field("productName", "Product"),
        Field("productDisplayName", "Product display name"),
        Field("detail", "Detail"),
        Field("tag", "Tag"),
        Field("currency", "Currency"),
        Field("amount", "Amount", "number"),
        Field("returnUrl", "Return URL"),
        Field("user", "User"),
        Field("application", "Application"),
        Field("payment", "Payment"),
        Field("state", "State"),
    ),
))
