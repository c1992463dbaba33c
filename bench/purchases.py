"""Concurrent Balance purchases: 100 at once of a product with quantity 50.

Target (issue 18): exactly 50 succeed, the product's sold is 50, and no balance goes below 0.

Each backend runs in a process of its own (the database URL is read at import) on a fresh
database: SQLite (a temporary file), and with `--backends` also PostgreSQL and MariaDB on the
local servers. 70 buyers, each with money for one purchase and a half; 30 of them try twice, so
100 purchases race from 100 real threads through the service the routes use
(commerce/commerce.buy_product: an order, sold + 1 by a conditional UPDATE, the price taken from
the balance by another, a payment and a transaction, one transaction per purchase). Printed per
backend: purchases tried, paid, refused (by reason), the product's sold, the lowest balance, the
transactions written, the wall time and purchases a second.

    .venv/bin/python bench/purchases.py [--backends sqlite,postgres,mariadb]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SERVERS = {"postgres": "postgresql+psycopg://postgres@127.0.0.1:5432",
           "mariadb": "mysql+pymysql://root@127.0.0.1:3306"}
PURCHASES, QUANTITY, BUYERS, TWICE = 100, 50, 70, 30
PRICE, BALANCE = "2.50", "3.75"  # money for one purchase and a half


def child() -> None:
    """Runs in its own process, with IAM_DATABASE_URL set: one backend's race."""
    from decimal import Decimal

    from sqlmodel import func, select

    from iam_console import models as m
    from iam_console.commerce import commerce
    from iam_console.commerce.tables import Product, Transaction
    from iam_console.core.access import Actor
    from iam_console.core.errors import ServiceError
    from iam_console.db import migrate, session_scope

    migrate()
    org = "bench-shop"
    with session_scope() as db:
        db.add(m.Organization(owner="admin", name=org, password_type="argon2id"))
        db.add(m.Provider(owner=org, name="balance", category="Payment", type="Balance"))
        db.add(Product(owner=org, name="ticket", price=Decimal(PRICE), currency="USD", quantity=QUANTITY,
                         state="Published", providers=["balance"]))
        for i in range(BUYERS):
            db.add(m.User(owner=org, name=f"buyer{i:03d}", uuid=str(uuid.uuid4()), balance=Decimal(BALANCE)))
    with session_scope() as db:
        users = {u.name: u for u in db.exec(select(m.User).where(m.User.owner == org)).all()}
    attempts = [users[f"buyer{i:03d}"] for i in range(BUYERS)] + [users[f"buyer{i:03d}"] for i in range(TWICE)]
    outcomes: Counter[str] = Counter()
    lock = threading.Lock()
    start = threading.Barrier(len(attempts) + 1)

    def purchase(user: m.User) -> None:
        start.wait()
        try:
            with session_scope() as db:
                commerce.buy_product(db, Actor(user=user), (org, "ticket"), "balance")
            outcome = "paid"
        except ServiceError as exc:
            outcome = "out of stock" if "out of stock" in exc.template else "insufficient balance" \
                if exc.template.startswith("Insufficient balance") else exc.template
        except Exception as exc:  # a database error would break the target: counted, shown
            outcome = f"error {type(exc).__name__}"
        with lock:
            outcomes[outcome] += 1

    threads = [threading.Thread(target=purchase, args=(u,)) for u in attempts]
    for thread in threads:
        thread.start()
    start.wait()
    began = time.perf_counter()
    for thread in threads:
        thread.join()
    seconds = time.perf_counter() - began
    with session_scope() as db:
        sold = db.exec(select(Product.sold).where(Product.owner == org, Product.name == "ticket")).one()
        lowest = db.exec(select(func.min(m.User.balance)).where(m.User.owner == org)).one()
        spent = sum((Decimal(BALANCE) - u.balance for u in db.exec(select(m.User).where(m.User.owner == org))),
                    Decimal(0))
        transactions = db.exec(select(func.count()).select_from(Transaction)
                               .where(Transaction.owner == org)).one()
    print(json.dumps({"tried": len(attempts), "outcomes": dict(outcomes), "sold": sold,
                      "lowest_balance": str(lowest), "spent": str(spent), "transactions": transactions,
                      "seconds": round(seconds, 3), "per_second": round(len(attempts) / seconds, 1)}))


def _database(backend: str, tmp: Path) -> tuple[str, object]:
    """The URL of a fresh database of the backend, and what drops it afterwards."""
    if backend == "sqlite":
        return f"sqlite:///{tmp / 'bench.db'}", lambda: None
    import sqlalchemy as sa

    server = SERVERS[backend]
    name = f"bench_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{server}/{'postgres' if backend == 'postgres' else 'mysql'}",
                             isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))

    def drop() -> None:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE {name}" + (" WITH (FORCE)" if backend == "postgres" else "")))
        admin.dispose()
    return f"{server}/{name}", drop


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    failed = False
    for backend in args.backends.split(","):
        with tempfile.TemporaryDirectory() as tmp:
            url, drop = _database(backend, Path(tmp))
            try:
                env = {**os.environ, "IAM_DATABASE_URL": url, "IAM_FILES_DIR": str(Path(tmp) / "files")}
                run = subprocess.run([sys.executable, __file__, "--child"], env=env, capture_output=True, text=True,
                                     timeout=600)
            finally:
                drop()
        if run.returncode != 0:
            print(f"{backend}: failed\n{run.stderr[-3000:]}")
            failed = True
            continue
        figures = json.loads(run.stdout.strip().splitlines()[-1])
        ok = (figures["outcomes"].get("paid") == QUANTITY and figures["sold"] == QUANTITY
              and not figures["lowest_balance"].startswith("-") and figures["transactions"] == QUANTITY)
        failed |= not ok
        print(f"{backend:9} tried {figures['tried']}, outcomes {figures['outcomes']}, sold {figures['sold']}, "
              f"lowest balance {figures['lowest_balance']}, spent {figures['spent']}, transactions "
              f"{figures['transactions']}, {figures['seconds']} s ({figures['per_second']} purchases/s) "
              f"-> {'target met' if ok else 'TARGET MISSED'}")
    return 1 if failed else 0


if __name__ == "__main__":
    if "--child" in sys.argv:
        child()
    else:
        sys.exit(main())
