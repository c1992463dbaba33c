"""Invoices: invoice-payment checks the payment (the invoice checks of commerce/kinds/payment.py),
writes a PDF (fpdf2), keeps it as a Resource of the payment's organization and sets the payment's
invoiceUrl. Once made, an invoice is not made again and its fields stay (the kind's rules).

The file holds a person's name, ID card number, email and phone, so it is not one of the public
/files/: it is stored in the files directory's invoice folder, which /files/ never serves, and its
URL is /api/get-invoice?id=owner/payment, which serves it only to the payment's user and the admins
of its organization."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from fpdf import FPDF
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit import records
from iam_console.commerce.kinds.payment import check_invoice
from iam_console.commerce.tables import Payment
from iam_console.core import storage
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError, Unauthorized
from iam_console.models.base import format_time, utcnow
from iam_console.settings import settings

# a Unicode font when the system has one (names in any script); else the PDF core font, latin-1 only
UNICODE_FONTS = (Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"),
                 Path("/usr/share/fonts/dejavu/DejaVuSans.ttf"))
# invoice/{organization}/{payment}.pdf: personal data, which /files/ never serves (get-invoice does,
# to the payment's readers; COMMERCE declares the folder)
INVOICE_FOLDER = "invoice"


def relative_path(payment: Payment) -> str:
    return f"{INVOICE_FOLDER}/{payment.owner}/{payment.name}.pdf"


def invoice_url(payment: Payment) -> str:
    return f"{settings.origin}/api/get-invoice?id={quote(payment.owner)}/{quote(payment.name)}"


def render(payment: Payment, issued: str) -> bytes:
    """The invoice of a paid payment as a PDF document."""
    pdf = FPDF(format="A4")
    pdf.set_title(f"Invoice {payment.name}")
    pdf.set_creator("iam-console")
    font = next((f for f in UNICODE_FONTS if f.is_file()), None)
    if font is not None:
        pdf.add_font("Body", "", str(font))
        family = "Body"
    else:
        family = "Helvetica"

    def clean(value: str) -> str:
        return value if font is not None else value.encode("latin-1", "replace").decode("latin-1")

    pdf.add_page()
    pdf.set_font(family, size=20)
    pdf.cell(0, 12, "Invoice", new_x="LMARGIN", new_y="NEXT")
    pdf.set_font(family, size=11)
    rows = [
        ("Invoice number", payment.name), ("Issued", issued), ("Seller", payment.owner),
        ("Invoice type", payment.invoice_type), ("Invoice title", payment.invoice_title),
        ("Tax ID", payment.invoice_tax_id or "-"), ("Name", payment.person_name),
        ("ID card", payment.person_id_card), ("Email", payment.person_email), ("Phone", payment.person_phone),
        ("Products", payment.products_display_name or payment.product_display_name or payment.product_name),
        ("Payment provider", f"{payment.provider} ({payment.type})"),
        ("Paid", format_time(payment.created_time)),
        ("Amount", f"{payment.price.normalize():f} {payment.currency}"),
        ("Remark", payment.invoice_remark or "-"),
    ]
    for label, value in rows:
        pdf.set_font(family, size=10)
        pdf.cell(45, 8, clean(label))
        pdf.set_font(family, size=11)
        pdf.multi_cell(0, 8, clean(str(value)), new_x="LMARGIN", new_y="NEXT")
    return bytes(pdf.output())


def _write(relative: str, content: bytes) -> None:
    target = storage.folder(relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_suffix(".part")
    temporary.write_bytes(content)
    temporary.replace(target)


def _payment(db: Session, owner: str, name: str) -> Payment:
    found = db.exec(select(Payment).where(Payment.owner == owner, Payment.name == name)
                    .with_for_update()).first()
    if found is None:
        raise ServiceError("the payment: %s does not exist", name)
    return found


def _may_read(actor: Actor, payment: Payment) -> None:
    if actor.is_anonymous:
        raise ServiceError("Please login first")
    if actor.is_global_admin or (actor.is_org_admin and actor.organization == payment.owner):
        return
    if actor.user is None or actor.user.owner != payment.owner or actor.user.name != payment.user:
        raise ServiceError("Unauthorized operation")


def invoice_payment(db: Session, actor: Actor, owner: str, name: str) -> str:
    """The payment's invoice URL, the invoice made (once) if the payment passes the checks."""
    if actor.is_anonymous:
        raise Unauthorized()
    payment = _payment(db, owner, name)
    _may_read(actor, payment)
    if payment.invoice_url:
        return payment.invoice_url
    check_invoice(payment)
    content = render(payment, format_time(utcnow()))
    relative = relative_path(payment)
    payment.invoice_url = invoice_url(payment)
    db.add(payment)
    resource_name = f"invoice_{payment.name}"
    if db.exec(select(m.Resource.pk).where(m.Resource.owner == owner, m.Resource.name == resource_name)).first() \
            is None:
        db.add(m.Resource(owner=owner, name=resource_name, user=payment.user, tag="invoice",
                          file_name=f"{payment.name}.pdf", file_type="application", file_format=".pdf",
                          file_size=len(content), url=payment.invoice_url,
                          description=f"The invoice of the payment {payment.name}"))
    records.audit(db, organization=owner, user=actor.name, action="invoice-payment",
                  obj={"owner": owner, "name": name, "invoiceUrl": payment.invoice_url})
    db.flush()
    _write(relative, content)
    return payment.invoice_url


def invoice_file(db: Session, actor: Actor, owner: str, name: str) -> Path:
    """The stored invoice of a payment, for its user and its organization's admins."""
    if actor.is_anonymous:
        raise Unauthorized()
    found = db.exec(select(Payment).where(Payment.owner == owner, Payment.name == name)).first()
    if found is None:
        raise ServiceError("the payment: %s does not exist", name)
    _may_read(actor, found)
    target = storage.folder(relative_path(found))
    if not found.invoice_url or not target.is_file():
        raise ServiceError("The payment %s has no invoice yet", name)
    return target
