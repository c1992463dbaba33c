"""Payments: list and edit. What the payment flow sets (provider, type, user, product, price,
currency, pay URL, state, message, invoice URL) is shown read-only. The person and invoice fields
are for an invoice, so they take edits only while the payment is Paid; an Individual invoice is
titled with the person's name and has no tax ID (both then follow the form and are disabled);
once invoiced (an invoice URL) they are read-only for good. The checks of an invoice, in order,
are the kind's (commerce/kinds/payment.py `check_invoice`, on every save asking for one), and so is
the lock after invoicing, which the API obeys too. The edit page's own buttons (issuing and
downloading the invoice, Return to Website) are a row under the fields, the screen's `parts`
(commerce/ui/payment_actions.py)."""

from __future__ import annotations

from typing import Any

import reflex as rx

from iam_console.applications.kinds.provider import TYPES
from iam_console.commerce.ui.payment_actions import payment_actions
from iam_console.core.kinds import choices
from iam_console.ui.screens import Column, Field, Screen, screen
from iam_console.ui.state.editing import Editing
from iam_console.ui.text import t

INVOICE_TYPES = choices("payment", "invoiceType")
PAYMENT_TYPES = TYPES["Payment"]


def _invoiced(record: dict[str, Any]) -> bool:
    return bool(record.get("invoiceUrl"))


def _flow(record: dict[str, Any]) -> bool:
    """Set by the payment flow, never by hand."""
    return True


def _paid(values, flags):
    return values["state"] == "Paid"


def _organization_invoice(values, flags):
    return (values["state"] == "Paid") & (values["invoiceType"] != "Individual")


def _invoice_type(value: str, values: dict[str, str]) -> dict[str, Any]:
    """Individual: titled with the person's name, no tax ID."""
    return {"invoiceTitle": values.get("personName", ""), "invoiceTaxId": ""} if value == "Individual" else {}


def _person_name(value: str, values: dict[str, str]) -> dict[str, Any]:
    return {"invoiceTitle": value} if values.get("invoiceType") == "Individual" else {}


def _invoice_hint() -> rx.Component:
    state = rx.cond(Editing.values.contains("state"), Editing.values["state"], "")
    invoiced = rx.cond(Editing.values.contains("invoiceUrl"), Editing.values["invoiceUrl"], "") != ""
    return rx.cond(invoiced,
                   rx.text(t("Invoiced: the person and invoice fields can no longer change"), size="1",
                           color_scheme="gray", id="invoice-hint"),
                   rx.cond(state != "Paid",
                           rx.text(t("An invoice can be asked for once the payment is Paid"), size="1",
                                   color_scheme="gray", id="invoice-hint")))


def _person(key: str, label: str, **more: Any) -> Field:
    return Field(key, label, locked_for=_invoiced, enabled_when=_paid, **more)


PAYMENTS = screen(Screen(
    key="payment", title="Payments", list_route="/payments", edit_route="/payments/{owner}/{name}",
    edit_title="Payment", owner_picker=True, parts=payment_actions,
    columns=(
        Column("name", "Name", link="/payments/{owner}/{name}"),
        Column("owner", "Organization", link="/organizations/{owner}"),
        Column("createdTime", "Created time", "time", searchable=False),
        Column("provider", "Provider", link="/providers/{owner}/{provider}"),
        Column("user", "User", link="/users/{owner}/{user}"),
        Column("type", "Type", filters=PAYMENT_TYPES),
        Column("productName", "Product", link="/products/{owner}/{productName}"),
        Column("price", "Price", searchable=False),
        Column("currency", "Currency", filters=choices("product", "currency")),
        Column("state", "State"),
        Column("invoiceType", "Invoice type", filters=INVOICE_TYPES),
    ),
    fields=(
        Field("displayName", "Display name"),
        Field("provider", "Provider", locked_for=_flow),
        Field("type", "Type", locked_for=_flow),
        Field("user", "User", locked_for=_flow),
        Field("productName", "Product", locked_for=_flow),
        Field("productDisplayName", "Product display name", locked_for=_flow),
        Field("detail", "Detail"),
        Field("tag", "Tag"),
        Field("currency", "Currency", locked_for=_flow),
        Field("price", "Price", "number", locked_for=_flow),
        Field("payUrl", "Pay URL", locked_for=_flow),
        Field("returnUrl", "Return URL"),
        Field("state", "State", locked_for=_flow),
        Field("message", "Message", "textarea", locked_for=_flow),
        _person("personName", "Person name", then=_person_name),
        _person("personIdCard", "Person ID card"),
        _person("personEmail", "Person email"),
        _person("personPhone", "Person phone"),
        Field("invoiceType", "Invoice type", "select", options=INVOICE_TYPES, locked_for=_invoiced,
              enabled_when=_paid, then=_invoice_type, addon=_invoice_hint),
        Field("invoiceTitle", "Invoice title", locked_for=_invoiced, enabled_when=_organization_invoice),
        Field("invoiceTaxId", "Invoice tax ID", locked_for=_invoiced, enabled_when=_organization_invoice),
        _person("invoiceRemark", "Invoice remark"),
        Field("invoiceUrl", "Invoice URL", locked_for=_flow),
    ),
))
