"""The Stripe provider, through the official `stripe` library: a Checkout Session per payment.

- Paying creates a Checkout Session (one line of the payment's price) and sends the buyer to its
  URL; the session's id is the payment's outOrderId.
- A notification (Stripe's webhook) must carry a valid `Stripe-Signature` made with the provider's
  webhook signing secret (its Client secret 2); anything else is refused and changes nothing. A
  valid one only prompts a check: the session is read back from Stripe, and its amount and
  currency must be the payment's.
- The library's HTTP calls go through the outbound guard (core/outbound.py) with its time
  limit; IAM_STRIPE_API sets the API base (Stripe's own by default, a local stand-in in tests)."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

import httpx
import stripe
from sqlmodel import Session

from iam_console import models as m
from iam_console.commerce.payments.base import (
    CREATED,
    ERROR,
    PAID,
    TIMEOUT,
    Check,
    PayAnswer,
    PayRequest,
    from_minor_units,
    minor_units,
)
from iam_console.commerce.tables import Payment
from iam_console.core import outbound
from iam_console.core.errors import ServiceError

# IAM_STRIPE_API: the API base; Stripe's own by default, a local stand-in in tests
API_BASE = os.environ.get("IAM_STRIPE_API", "https://api.stripe.com").rstrip("/")

TIMEOUT_SECONDS = 15
SESSION_MINUTES = 30


class GuardedHttp(stripe.HTTPClient):
    """The stripe library's HTTP client, sending through the outbound guard."""

    name = "iam-outbound"

    def request(self, method: str, url: str, headers: Mapping[str, str] | None, post_data: Any = None,
                *, _usage: Any = None) -> tuple[bytes, int, Mapping[str, str]]:
        try:
            with outbound.http_client(timeout=TIMEOUT_SECONDS, follow_redirects=False) as client:
                answer = client.request(method.upper(), url, headers=dict(headers or {}), content=post_data)
        except (httpx.HTTPError, outbound.OutboundError) as exc:
            raise stripe.APIConnectionError(f"Stripe could not be reached: {exc}") from None
        return answer.content, answer.status_code, answer.headers

    def request_stream(self, method, url, headers, post_data=None, *, _usage=None):
        content, status, answer_headers = self.request(method, url, headers, post_data)
        return iter([content]), status, answer_headers

    def close(self) -> None:
        return None


def _failed(exc: stripe.StripeError) -> ServiceError:
    return ServiceError("Stripe refused the request: %s", str(exc.user_message or exc)[:300])


class StripeCheckout:
    instant = False
    def __init__(self, provider: m.Provider) -> None:
        self.provider = provider
        if not provider.client_secret:
            raise ServiceError("The Stripe provider %s has no secret key", provider.name)
        self.client = stripe.StripeClient(provider.client_secret, base_addresses={"api": API_BASE},
                                          http_client=GuardedHttp(), max_network_retries=0)

    def pay(self, db: Session, request: PayRequest) -> PayAnswer:
        import time
        params = {
            "mode": "payment",
            "line_items": [{"quantity": 1, "price_data": {
                "currency": request.currency.lower(), "unit_amount": minor_units(request.price, request.currency),
                "product_data": {"name": request.product_display_names[:250] or request.product_names[:250],
                                 **({"description": request.description[:500]} if request.description else {})}}}],
            "success_url": request.return_url, "cancel_url": request.return_url,
            "client_reference_id": request.payment_name,
            "expires_at": int(time.time()) + SESSION_MINUTES * 60,
            "metadata": {"payment": f"{request.owner}/{request.payment_name}"},
        }
        try:
            session = self.client.v1.checkout.sessions.create(params=params)
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        return PayAnswer(pay_url=session.url or "", out_order_id=session.id)

    def verify(self, body: bytes, headers: Mapping[str, str]) -> None:
        secret = self.provider.client_secret2
        if not secret:
            raise ServiceError("The Stripe provider %s has no webhook signing secret", self.provider.name)
        try:
            stripe.Webhook.construct_event(body, headers.get("stripe-signature", ""), secret)
        except (stripe.SignatureVerificationError, ValueError, json.JSONDecodeError):
            raise ServiceError("The notification's signature is not valid") from None

    def check(self, payment: Payment) -> Check:
        if not payment.out_order_id:
            return Check(state=ERROR, message="The payment has no Stripe session")
        try:
            session = self.client.v1.checkout.sessions.retrieve(payment.out_order_id)
        except stripe.StripeError as exc:
            raise _failed(exc) from None
        if session.status == "expired":
            return Check(state=TIMEOUT, message="The Stripe checkout session expired")
        if session.status == "open" or (session.status == "complete" and session.payment_status == "unpaid"):
            return Check(state=CREATED)
        if session.status == "complete" and session.payment_status in ("paid", "no_payment_required"):
            currency = (session.currency or "").upper()
            return Check(state=PAID, price=from_minor_units(session.amount_total or 0, currency), currency=currency,
                         message="Paid through Stripe")
        return Check(state=ERROR, message=f"Unexpected Stripe checkout state: {session.status}/"
                                          f"{session.payment_status}")
