"""Casdoor's commerce routes: buy-product, place-order, pay-order, cancel-order, get-user-orders,
get-user-payments, notify-payment, invoice-payment, and get-invoice (the invoice's download).
The rules are in commerce/commerce.py and commerce/invoices.py. A call that may reach a payment
provider (Stripe, PayPal) runs in a worker thread, as every outbound call from async code does."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse

from iam_console import models as m
from iam_console import workers
from iam_console.api.bodies import MAX_BODY_BYTES, json_body
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.commerce import commerce, invoices
from iam_console.commerce.tables import Order, Payment
from iam_console.core import crud
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope

router = APIRouter(prefix="/api", tags=["commerce"])


@router.post("/buy-product", summary="Buy a product at once (id=owner/name, providerName; pricingName and "
             "planName for a plan, customPrice for a recharge, userName for an admin buying for a user)")
async def buy_product(request: Request) -> JSONResponse:
    query = request.query_params

    def run() -> dict[str, Any]:
        with session_scope() as db:
            payment = commerce.buy_product(
                db, actor(db, request), crud.split_id(query.get("id", "")), query.get("providerName", ""),
                pricing=query.get("pricingName", ""), plan=query.get("planName", ""),
                user_name=query.get("userName", ""), custom_price=query.get("customPrice") or None)
            return m.to_wire(payment)

    payment = await workers.run(run)
    return ok(payment, {"payUrl": payment["payUrl"]})


@router.post("/place-order", summary="Place an order (owner; body productInfos: name, quantity, price for a "
             "recharge, pricingName and planName for a plan; userName for an admin ordering for a user)")
async def place_order(request: Request) -> JSONResponse:
    body = await json_body(request)
    if body.get("couponCode"):
        raise ServiceError("Coupons are not supported")
    query = request.query_params
    with session_scope() as db:
        order = commerce.place_order(db, actor(db, request), query.get("owner", ""), body.get("productInfos"),
                                     query.get("userName", ""))
        return ok(m.to_wire(order))


@router.post("/pay-order", summary="Pay an order (id=owner/name) through providerName")
async def pay_order(request: Request) -> JSONResponse:
    query = request.query_params

    def run() -> dict[str, Any]:
        with session_scope() as db:
            owner, name = crud.split_id(query.get("id", ""))
            return m.to_wire(commerce.pay_order(db, actor(db, request), owner, name,
                                                      query.get("providerName", "")))

    payment = await workers.run(run)
    return ok(payment, {"payUrl": payment["payUrl"]})


@router.post("/cancel-order", summary="Cancel an order that is not paid yet (id=owner/name)")
async def cancel_order(request: Request) -> JSONResponse:
    with session_scope() as db:
        owner, name = crud.split_id(request.query_params.get("id", ""))
        commerce.cancel_order(db, actor(db, request), owner, name)
        return ok("Affected")


@router.get("/get-user-orders", summary="A user's orders (owner, user): their own, or an admin's users'")
async def get_user_orders(request: Request) -> JSONResponse:
    query = request.query_params
    with session_scope() as db:
        rows = commerce.user_rows(db, actor(db, request), Order, query.get("owner", ""), query.get("user", ""))
        return ok([m.to_wire(row) for row in rows])


@router.get("/get-user-payments", summary="A user's payments (owner, user): their own, or an admin's users'")
async def get_user_payments(request: Request) -> JSONResponse:
    query = request.query_params
    with session_scope() as db:
        rows = commerce.user_rows(db, actor(db, request), Payment, query.get("owner", ""), query.get("user", ""))
        return ok([m.to_wire(row) for row in rows])


@router.post("/notify-payment/{owner}/{payment}", summary="A payment provider's notification: verified, "
             "then the payment is checked with the provider; a final payment changes in nothing")
async def notify_payment(owner: str, payment: str, request: Request) -> JSONResponse:
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise ServiceError("The request body is too large")
    headers = {key.lower(): value for key, value in request.headers.items()}

    def run() -> dict[str, Any]:
        with session_scope() as db:
            return m.to_wire(commerce.notify_payment(db, owner, payment, body, headers))

    return ok(await workers.run(run))


@router.post("/invoice-payment", summary="Issue the invoice of a paid payment (id=owner/name): a PDF")
async def invoice_payment(request: Request) -> JSONResponse:
    with session_scope() as db:
        owner, name = crud.split_id(request.query_params.get("id", ""))
        return ok(invoices.invoice_payment(db, actor(db, request), owner, name))


@router.get("/get-invoice", summary="Download a payment's invoice (id=owner/name): its user and its "
            "organization's admins")
async def get_invoice(request: Request):
    with session_scope() as db:
        owner, name = crud.split_id(request.query_params.get("id", ""))
        target = invoices.invoice_file(db, actor(db, request), owner, name)
    return FileResponse(target, media_type="application/pdf", filename=f"invoice-{name}.pdf",
                        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "private, no-store"})
