"""Migration 0024 makes every amount exact (integer millionths) and keeps the amounts already
stored, on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal

import sqlalchemy as sa
from sqlmodel import Session, select, update

from alembic import command
from iam_console import models as m
from iam_console.commerce.tables import Order, Payment, Plan, Product, Transaction
from iam_console.db import alembic_config, make_engine
from tests.api.test_migrations import empty_database  # noqa: F401  (the fixture: one empty database per backend)

AMOUNTS = {"product": ("price", 12.34), "payment": ("price", 0.1), "plan": ("price", 9.99),
           "transaction": ("amount", -1234.56), "order": ("price", 300.0)}


def _filler(column: sa.Column):
    kind = column.type
    if isinstance(kind, sa.DateTime):
        return datetime(2026, 1, 1, tzinfo=UTC).replace(tzinfo=None)
    if isinstance(kind, sa.Boolean):
        return False
    if isinstance(kind, sa.Integer | sa.Float | sa.Numeric):
        return 0
    if isinstance(kind, sa.JSON | sa.Text) or getattr(kind, "length", 0) is None:
        return "[]"  # JSON (which MariaDB reflects as LONGTEXT, checked by JSON_VALID) and long texts
    return ""


def _insert(connection: sa.Connection, table: str, values: dict) -> None:
    reflected = sa.Table(table, sa.MetaData(), autoload_with=connection)
    row = {c.name: _filler(c) for c in reflected.columns if not c.nullable and not c.primary_key}
    connection.execute(reflected.insert().values({**row, **values}))


def test_existing_amounts_are_kept_exactly(empty_database):  # noqa: F811
    config = alembic_config(empty_database)
    command.upgrade(config, "0020")
    engine = sa.create_engine(empty_database)
    with engine.begin() as connection:
        for table, (column, value) in AMOUNTS.items():
            _insert(connection, table, {"owner": "org", "name": "old", column: value})
        _insert(connection, "user", {"owner": "org", "name": "old", "balance": 0.3, "balance_credit": 2.5})
    engine.dispose()
    command.upgrade(config, "head")
    engine = make_engine(empty_database)
    try:
        with Session(engine) as db:
            assert db.exec(select(Product.price).where(Product.name == "old")).one() == Decimal("12.34")
            assert db.exec(select(Payment.price).where(Payment.name == "old")).one() == Decimal("0.1")
            assert db.exec(select(Plan.price).where(Plan.name == "old")).one() == Decimal("9.99")
            assert db.exec(select(Transaction.amount).where(Transaction.name == "old")).one() \
                == Decimal("-1234.56")
            assert db.exec(select(Order.price).where(Order.name == "old")).one() == Decimal("300")
            user = db.exec(select(m.User).where(m.User.name == "old")).one()
            assert (user.balance, user.balance_credit) == (Decimal("0.3"), Decimal("2.5"))
            # arithmetic in the database is exact: 0.3 - 0.1 - 0.2 is 0, not -2.8e-17
            db.exec(update(m.User).where(m.User.pk == user.pk).values(balance=m.User.balance - Decimal("0.1")))
            db.exec(update(m.User).where(m.User.pk == user.pk).values(balance=m.User.balance - Decimal("0.2")))
            db.commit()
            assert db.exec(select(m.User.balance).where(m.User.pk == user.pk)).one() == 0
            assert db.exec(select(m.User.pk).where(m.User.pk == user.pk, m.User.balance >= 0)).first()
        command.downgrade(config, "0020")
        with engine.connect() as connection:
            kept = connection.execute(sa.text("SELECT price FROM product WHERE name = 'old'")).scalar()
        assert kept == 12.34
    finally:
        engine.dispose()
