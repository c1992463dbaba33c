"""The payment edit page's own buttons: Issue Invoice (commerce/invoices.py: the invoice checks,
then a PDF, once; 'Successfully invoiced'), Download Invoice (its /api/get-invoice URL, served to
the payment's user and its organization's admins) and Return to Website (the payment's return URL).
The payments screen shows them in a row under its fields (ui/screens.py Screen.parts)."""

from __future__ import annotations

import reflex as rx

from iam_console.commerce import invoices
from iam_console.ui.state.editing import Editing
from iam_console.ui.state.service import call, say
from iam_console.ui.text import t


class PaymentInvoice(rx.State):
    issuing: bool = False

    @rx.event
    async def issue(self, owner: str, name: str):
        if self.issuing:
            return None
        self.issuing = True
        try:
            done = await call(self, lambda db, actor: invoices.invoice_payment(db, actor, owner, name))
        finally:
            self.issuing = False
        if done.failed:
            return done.event
        # the page reads the payment again: its invoice URL, and the invoice fields now read-only
        return [rx.toast.success(await say(self, "Successfully invoiced")), Editing.open("payment")]


def _value(key: str) -> rx.Var:
    return rx.cond(Editing.values.contains(key), Editing.values[key], "")


def payment_actions() -> tuple[rx.Component, ...]:
    """A row under the payment's fields (the screen's `parts`): beside Save they would push it under
    the toasts."""
    invoice_url, return_url = _value("invoiceUrl"), _value("returnUrl")
    can_issue = (_value("state") == "Paid") & (invoice_url == "")
    return (rx.hstack(
        rx.button(rx.icon("file-text", size=14), t("Issue Invoice"), variant="outline", id="payment-issue-invoice",
                  disabled=~can_issue, loading=PaymentInvoice.issuing,
                  on_click=PaymentInvoice.issue(Editing.saved_owner, Editing.saved_name)),
        rx.cond(invoice_url != "", rx.link(rx.button(rx.icon("download", size=14), t("Download Invoice"),
                                                     variant="outline", tab_index=-1),
                                           href=invoice_url, id="payment-download-invoice", is_external=True)),
        rx.cond(return_url != "", rx.link(rx.button(t("Return to Website"), variant="outline", tab_index=-1),
                                          href=return_url, id="payment-return-to-website", is_external=True)),
        spacing="2", wrap="wrap", id="payment-actions"),)
