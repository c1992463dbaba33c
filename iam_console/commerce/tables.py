"""Commerce tables: products, payments, plans, pricings, subscriptions, transactions and orders."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from iam_console.models.base import (
    Named,
    json_dict,
    json_list,
    long_text,
    moment,
    money,
    named_keys,
    text,
)


class Product(Named, table=True):
    __tablename__ = "product"
    __table_args__ = named_keys("product")

    display_name: str = text(100)
    image: str = text(255)
    detail: str = text(1000)
    description: str = text(500)
    tag: str = text(100)  # auto_created_product_for_plan marks a plan's product
    currency: str = text(100)
    price: Decimal = money()
    quantity: int = 0
    sold: int = 0
    is_recharge: bool = False
    recharge_options: list[float] = json_list()
    disable_custom_recharge: bool = False
    providers: list[str] = json_list()  # payment provider names
    success_url: str = text(1000)
    return_url: str = text(1000)
    state: str = text(100)  # Published or Draft
    properties: dict[str, Any] = json_dict()
    # response-only in Casdoor (the providers expanded on read)
    provider_objs: list[Any] = json_list()


class Payment(Named, table=True):
    __tablename__ = "payment"
    __table_args__ = named_keys(
        "payment",
        sa.Index("ix_payment_owner_user", "owner", "user", "created_time"),
    )

    display_name: str = text(100)
    provider: str = text(100)
    type: str = text(100)
    products: list[str] = json_list()
    products_display_name: str = text(1000)
    product_name: str = text(100)
    product_display_name: str = text(100)
    detail: str = text(1000)
    tag: str = text(100)
    currency: str = text(100)
    price: Decimal = money()
    user: str = text(100)
    person_name: str = text(100)
    person_id_card: str = text(100)
    person_email: str = text(255)
    person_phone: str = text(100)
    invoice_type: str = text(100)  # Individual or Organization
    invoice_title: str = text(255)
    invoice_tax_id: str = text(100)
    invoice_remark: str = text(500)
    invoice_url: str = text(1000)
    order: str = text(100)  # an order name
    # response-only in Casdoor (the order expanded on read)
    order_obj: dict[str, Any] = json_dict()
    out_order_id: str = text(100)
    pay_url: str = long_text()  # signed provider URLs can run past 2000 chars
    success_url: str = text(1000)
    return_url: str = text(1000)
    state: str = text(100)
    message: str = long_text()


class Plan(Named, table=True):
    __tablename__ = "plan"
    __table_args__ = named_keys("plan")

    display_name: str = text(100)
    description: str = text(500)
    price: Decimal = money()
    currency: str = text(100)
    period: str = text(100)  # Monthly or Yearly
    product: str = text(100)
    payment_providers: list[str] = json_list()
    is_enabled: bool = False
    is_exclusive: bool = False
    role: str = text(100)
    options: list[str] = json_list()


class Pricing(Named, table=True):
    __tablename__ = "pricing"
    __table_args__ = named_keys("pricing")

    display_name: str = text(100)
    description: str = text(500)
    plans: list[str] = json_list()
    is_enabled: bool = False
    trial_duration: int = 0  # days
    application: str = text(100)


class Subscription(Named, table=True):
    __tablename__ = "subscription"
    __table_args__ = named_keys(
        "subscription",
        sa.Index("ix_subscription_owner_user", "owner", "user", "created_time"),
    )

    display_name: str = text(100)
    description: str = text(500)
    user: str = text(100)
    pricing: str = text(100)
    plan: str = text(100)
    payment: str = text(100)
    start_time: datetime | None = moment()
    end_time: datetime | None = moment()
    period: str = text(100)
    state: str = text(100)
    approver: str = text(100)
    approve_time: datetime | None = moment()


class Transaction(Named, table=True):
    __tablename__ = "transaction"
    __table_args__ = named_keys(
        "transaction",
        sa.Index("ix_transaction_owner_user", "owner", "user", "created_time"),
    )

    display_name: str = text(100)
    application: str = text(100)
    domain: str = text(255)
    category: str = text(100)
    type: str = text(100)
    subtype: str = text(100)
    provider: str = text(100)
    user: str = text(100)
    tag: str = text(100)
    amount: Decimal = money()
    currency: str = text(100)
    payment: str = text(100)
    state: str = text(100)
    product_name: str = text(100)
    product_display_name: str = text(100)
    detail: str = text(1000)
    return_url: str = text(1000)


class Order(Named, table=True):
    __tablename__ = "order"
    __table_args__ = named_keys(
        "order",
        sa.Index("ix_order_owner_user", "owner", "user", "created_time"),
    )

    updated_time: datetime | None = moment()
    display_name: str = text(100)
    products: list[Any] = json_list()  # product infos: name, displayName, price, ...
    user: str = text(100)
    payment: str = text(100)
    price: Decimal = money()
    currency: str = text(100)
    state: str = text(100)
    message: str = long_text()
