"""Lists at scale: GET /api/get-users over HTTP with N users in one organization,
beside the same query run bare through SQLAlchemy in this process.

    .venv/bin/python bench/list_users.py                    # SQLite, 1,000,000 users
    .venv/bin/python bench/list_users.py --users 100000
    .venv/bin/python bench/list_users.py --url postgresql+psycopg://postgres@127.0.0.1:5432/bench

Seeding is cached: a SQLite file under bench/.data/, or the database at --url,
is reused when it already holds the users. Prints median and p95 per call, the
ratio of HTTP to bare time, and the ratio to the target (docs/performance.md)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

from timing import timed  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORG = "bench-org"
TARGETS_MS = {"first page + total": 50, "search name + total": 100, "search display + total": 100,
              "search email + total": 100, "page 5000 + total": 100, "user count": 50}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--url", default="")
    parser.add_argument("--runs", type=int, default=30)
    return parser.parse_args()


def seed(url: str, users: int, created_time=None, created_sql: str = "now()") -> None:
    """Migrate, first-start data, then the organization and its users in big batches.
    `created_time(i)`, when given, dates user i (bench/dashboard.py spreads them over
    time); `created_sql` does the same on PostgreSQL, where `i` is the user's number."""
    import sqlalchemy as sa

    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    migrate(url)
    engine = make_engine(url)
    with session_scope(engine) as db:
        ensure_first_start_data(db, "bench-admin-password")
        if not db.exec(sa.select(Organization.pk).where(Organization.name == ORG)).first():
            db.add(Organization(owner="admin", name=ORG, display_name="Bench", password_type="argon2id"))
    password = hash_password("bench-user-password")
    batch, started = 20_000, time.perf_counter()
    with engine.begin() as connection:
        have = connection.execute(sa.select(sa.func.count()).select_from(User).where(User.owner == ORG)).scalar()
        if engine.dialect.name == "postgresql" and have < users:
            _seed_server_side(connection, User, password, have, users, created_sql)
            print(f"  seeded {users:,} users server-side ({time.perf_counter() - started:.0f} s)", flush=True)
            have = users
        for start in range(have, users, batch):
            rows = [{
                "owner": ORG, "name": f"user{i:07d}", "uuid": str(uuid.uuid4()), "display_name": f"User {i}",
                "email": f"user{i}@example.com", "phone": f"1{i:010d}", "password": password,
                "password_type": "argon2id", "type": "normal-user", "affiliation": "Example Inc.", "tag": "staff",
                **({"created_time": created_time(i)} if created_time else {}),
            } for i in range(start, min(start + batch, users))]
            connection.execute(sa.insert(User), rows)
            print(f"  seeded {start + len(rows):,} users ({time.perf_counter() - started:.0f} s)", flush=True)
    engine.dispose()


def _seed_server_side(connection, user_table, password: str, start: int, stop: int,
                      created_sql: str = "now()", extra: dict | None = None) -> None:
    """PostgreSQL: one INSERT ... SELECT over generate_series (triggers and indexes still run);
    `extra` gives more columns as SQL over `i`."""
    import sqlalchemy as sa

    given = {**(extra or {}),
        "owner": sa.literal(ORG), "name": sa.text("'user' || lpad(i::text, 7, '0')"),
        "uuid": sa.text("gen_random_uuid()::text"), "display_name": sa.text("'User ' || i"),
        "email": sa.text("'user' || i || '@example.com'"), "phone": sa.text("'1' || lpad(i::text, 10, '0')"),
        "password": sa.literal(password), "password_type": sa.literal("argon2id"), "type": sa.literal("normal-user"),
        "affiliation": sa.literal("Example Inc."), "tag": sa.literal("staff"), "created_time": sa.text(created_sql),
    }
    columns, values = [], []
    for column in user_table.__table__.columns:
        if column.key == "pk":
            continue
        columns.append(column.key)
        if column.key in given:
            values.append(given[column.key])
        else:
            default = user_table.model_fields[column.key].get_default(call_default_factory=True)
            values.append(sa.cast(sa.literal(default, type_=column.type), column.type))
    select = sa.select(*values).select_from(sa.text(f"generate_series({start}, {stop - 1}) AS i"))
    # trigram indexes are built far faster in bulk than row by row: set them aside and
    # rebuild them from their own definitions afterwards
    saved = connection.execute(sa.text(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'user' AND indexname LIKE '%_trgm'")).all()
    for name, _ in saved:
        connection.execute(sa.text(f"DROP INDEX {name}"))
    connection.execute(sa.insert(user_table.__table__).from_select(columns, select))
    for _, definition in saved:
        connection.execute(sa.text(definition))
    connection.execute(sa.text('ANALYZE "user"'))  # what autovacuum would do after a bulk load


def main() -> None:
    args = parse()
    url = args.url or f"sqlite:///{ROOT / 'bench' / '.data' / f'users-{args.users}.db'}"
    os.environ["IAM_DATABASE_URL"] = url
    os.environ.setdefault("IAM_ORIGIN", "http://127.0.0.1:8799")
    print(f"database: {url.split('@')[-1]}  users: {args.users:,}")
    seed(url, args.users)

    import httpx
    import uvicorn
    from sqlmodel import Session, select

    from iam_console import models as m
    from iam_console.api.app import api
    from iam_console.core import counts, query
    from iam_console.db import engine

    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=8799, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with Session(engine) as db:
        app = db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()
    client = httpx.Client(base_url="http://127.0.0.1:8799", auth=(app.client_id, app.client_secret), timeout=60)

    def http(params: dict) -> callable:
        def call():
            body = client.get("/api/get-users", params={"owner": ORG, **params}).json()
            assert body["status"] == "ok", body
        return call

    def bare(params: dict) -> callable:
        """The same statements the service runs, without HTTP, access rules or serialisation."""
        def call():
            with Session(engine) as db:
                query.run(db, m.User, [m.User.owner == ORG], query.parse_list_query(params),
                          lambda: counts.total(db, "user", ORG))
        return call

    def count_http():
        assert client.get("/api/get-user-count", params={"owner": ORG}).json()["status"] == "ok"

    def count_bare():
        with Session(engine) as db:
            counts.total(db, "user", ORG)

    def naive_count():
        with Session(engine) as db:
            db.exec(select(query.func.count()).select_from(m.User).where(m.User.owner == ORG)).one()

    page = {"p": "1", "pageSize": "20"}
    cases = {
        "first page + total": page,
        "search name + total": {**page, "field": "name", "value": "user0012345"},
        "search display + total": {**page, "field": "displayName", "value": "User 4242"},
        "search email + total": {**page, "field": "email", "value": "4242@ex"},
        "page 5000 + total": {"p": "5000", "pageSize": "20"},
    }
    print(f"{'call':<22}{'HTTP median':>12}{'p95':>9}{'bare median':>13}{'HTTP/bare':>11}{'target':>8}{'/target':>9}")
    rows = [(name, http(params), bare(params)) for name, params in cases.items()]
    rows.append(("user count", count_http, count_bare))
    for name, over_http, direct in rows:
        median, p95 = timed(over_http, args.runs)
        bare_median, _ = timed(direct, args.runs)
        target = TARGETS_MS[name]
        print(f"{name:<22}{median:>10.1f}ms{p95:>7.1f}ms{bare_median:>11.1f}ms{median / bare_median:>10.2f}x"
              f"{target:>6}ms{median / target:>8.2f}x", flush=True)
    naive, _ = timed(naive_count, args.runs)
    print(f"(for scale: a plain count(*) of the organization's users takes {naive:.1f} ms)")
    server.should_exit = True


if __name__ == "__main__":
    main()
