"""The PayPal provider: PayPal's REST Orders API (v2) over httpx, through the outbound guard.

- Paying gets an OAuth token with the provider's client id and secret, creates an order (intent
  CAPTURE, the payment's price) and sends the buyer to its approval link; the order id is the
  payment's outOrderId.
- A notification (the buyer's return, or a webhook) is never believed: it prompts a check, which
  reads the order from PayPal, captures it once the buyer approved it, and takes its amount and
  currency from PayPal's answer.
- IAM_PAYPAL_API sets the API base (PayPal's sandbox by default, the live API in production, a
  local stand-in in tests)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from decimal import Decimal, InvalidOperation
from typing import Any

import httpx
from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce.payments.base import (
    CANCELED,
    CREATED,
    ERROR,
    PAID,
    Check,
    PayAnswer,
    PayRequest,
    decimals,
    minor_units,
)
from iam_console.commerce.tables import Payment
from iam_console.core import outbound
from iam_console.core.errors import ServiceError

# IAM_PAYPAL_API: the API base; PayPal's sandbox by default (https://api-m.paypal.com for live
# payments), a local stand-in in tests
API_BASE = os.environ.get("IAM_PAYPAL_API", "https://api-m.sandbox.paypal.com").rstrip("/")

TIMEOUT_SECONDS = 15


class PayPal:
    instant = False
    def __init__(self, provider: m.Provider) -> None:
        self.provider = provider
        if not provider.client_id or not provider.client_secret:
            raise ServiceError("The PayPal provider %s has no client ID or secret", provider.name)

    def _call(self, client: httpx.Client, method: str, path: str, **options: Any) -> dict:
        try:
            answer = client.request(method, f"{API_BASE}{path}", **options)
        except httpx.HTTPError as exc:
            raise ServiceError("PayPal could not be reached: %s", str(exc)[:200]) from None
        try:
            body = answer.json()
        except ValueError:
            body = {}
        if answer.status_code >= 400 or not isinstance(body, dict):
            detail = body.get("message") or body.get("error_description") or body.get("name") \
                if isinstance(body, dict) else ""
            raise ServiceError("PayPal refused the request: %s", str(detail or answer.status_code)[:300])
        return body

    @contextmanager
    def _session(self) -> Iterator[httpx.Client]:
        """A guarded client holding an access token for the provider's client id and secret."""
        with outbound.http_client(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client:
            token = self._call(client, "POST", "/v1/oauth2/token", data={"grant_type": "client_credentials"},
                               auth=(self.provider.client_id, self.provider.client_secret)).get("access_token")
            if not isinstance(token, str) or not token:
                raise ServiceError("PayPal gave no access token")
            client.headers["Authorization"] = f"Bearer {token}"
            yield client

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        minor_units(request.price, request.currency)  # refuses a price finer than the currency
        value = f"{request.price:.{decimals(request.currency)}f}"
        body = {"intent": "CAPTURE", "purchase_units": [{
                    "reference_id": request.payment_name, "custom_id": f"{request.owner}/{request.payment_name}",
                    "description": request.product_display_names[:127],
                    "amount": {"currency_code": request.currency.upper(), "value": value}}],
                "application_context": {"return_url": request.return_url, "cancel_url": request.return_url,
                                        "user_action": "PAY_NOW"}}
        with self._session() as client:
            order = self._call(client, "POST", "/v2/checkout/orders", json=body)
        link = next((x.get("href", "") for x in order.get("links", []) if isinstance(x, dict)
                     and x.get("rel") in ("approve", "payer-action")), "")
        if not order.get("id") or not link:
            raise ServiceError("PayPal gave no order to approve")
        return PayAnswer(pay_url=link, out_order_id=str(order["id"]))

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        return None  # the check asks PayPal itself; the notification's body is not read

    def check(self, payment: Payment) -> Check:
        if not payment.out_order_id:
            return Check(state=ERROR, message="The payment has no PayPal order")
        path = f"/v2/checkout/orders/{payment.out_order_id}"
        with self._session() as client:
            order = self._call(client, "GET", path)
            if order.get("status") == "APPROVED":
                order = self._call(client, "POST", f"{path}/capture", json={})
        status = order.get("status")
        if status in ("CREATED", "SAVED", "PAYER_ACTION_REQUIRED", "APPROVED"):
            return Check(state=CREATED)
        if status == "VOIDED":
            return Check(state=CANCELED, message="The PayPal order was voided")
        if status != "COMPLETED":
            return Check(state=ERROR, message=f"Unexpected PayPal order status: {status}")
        try:
            unit = order["purchase_units"][0]
            captures = unit.get("payments", {}).get("captures") or []
            amount = captures[0]["amount"] if captures else unit["amount"]
            price = Decimal(str(amount["value"]))
            currency = str(amount["currency_code"]).upper()
        except (KeyError, IndexError, TypeError, InvalidOperation):
            return Check(state=ERROR, message="PayPal's order has no amount")
        return Check(state=PAID, price=price, currency=currency, message="Paid through PayPal")
