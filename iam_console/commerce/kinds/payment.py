"""Payments, and the invoice one may ask for."""

from __future__ import annotations

import re

from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce.tables import Payment
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules, fixed
from iam_console.core.resources import Kind
from iam_console.core.wire import EMAIL

PHONE = re.compile(r"^\+?[0-9][0-9 -]{4,19}$")
ID_CARD = re.compile(r"^[0-9A-Za-z]{6,20}$")
TAX_ID = re.compile(r"^[0-9A-Za-z]{8,20}$")
INVOICE_TYPES = ("Individual", "Organization")
# what an issued invoice fixes: the person and the invoice (its URL too: invoicing cannot be undone)
INVOICE_LOCKED = ("person_name", "person_id_card", "person_email", "person_phone", "invoice_type", "invoice_title",
                  "invoice_tax_id", "invoice_remark", "invoice_url")


def check_invoice(row: Payment) -> None:
    """What an invoice needs, checked in this order (the first missing one is told): on issuing
    an invoice, and on saving a payment that asks for one. An individual's invoice is titled
    with their name and has no tax ID; an organization's has a title and a tax ID."""
    if row.state != "Paid":
        raise ServiceError("Please pay the order first!")
    if not row.person_name.strip():
        raise ServiceError("Please input your real name!")
    if not ID_CARD.match(row.person_id_card):
        raise ServiceError("Please input the correct ID card number!")
    if not EMAIL.match(row.person_email):
        raise ServiceError("The input is not valid Email!")
    if not PHONE.match(row.person_phone):
        raise ServiceError("The input is not valid Phone!")
    individual = row.invoice_type == "Individual"
    if (row.invoice_title != row.person_name) if individual else not row.invoice_title.strip():
        raise ServiceError("The input is not invoice title!")
    if bool(row.invoice_tax_id) if individual else not TAX_ID.match(row.invoice_tax_id):
        raise ServiceError("The input is not invoice Tax ID!")


def validate(db: Session, actor: Actor, row: Payment) -> None:
    if row.invoice_type:
        check_invoice(row)


def protect(kind: Kind, old: Payment, new: Payment | None) -> None:
    """Once invoiced (an invoice URL), the person and invoice fields stay as they were invoiced."""
    if new is None or not old.invoice_url:
        return
    for attribute in INVOICE_LOCKED:
        if getattr(new, attribute) != getattr(old, attribute):
            raise ServiceError("The field %s of an invoiced payment cannot be changed",
                               m.wire_name(Payment, attribute))


RULES = KindRules(choices=(Choice("invoice_type", INVOICE_TYPES),), validate=validate, protect=protect,
                  new=fixed(displayName="New Payment - {suffix}", type="PayPal", currency="USD", price=300.0,
                            state="Paid"))
