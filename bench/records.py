"""The audit trail at scale: GET /api/get-records over HTTP with N records (default 10 million),
beside the same query run bare through SQLAlchemy in this process; and the CSV export's rate.

    .venv/bin/python bench/records.py                      # SQLite, 10,000,000 records
    .venv/bin/python bench/records.py --records 1000000
    .venv/bin/python bench/records.py --url postgresql+psycopg://postgres@127.0.0.1:5432/bench

Seeding is cached (a SQLite file under bench/.data/, or the database at --url) and done in bulk:
Core executemany INSERTs of 50,000 rows, with the indexes and the row-count triggers in place.
The records are spread over 10 organizations, 1,000 users each, 20 actions, 90 days, and the
methods POST (90 %), GET (9 %) and DELETE (1 %). Prints median and p95 per call and the ratio to
the bound (docs/performance.md)."""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from timing import timed  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ORGS = [f"bench-org-{i}" for i in range(10)]
ACTIONS = ["login", "logout", "update-user", "add-user", "delete-user", "add-application", "update-application",
           "signup", "add-token", "delete-token", "update-organization", "add-role", "update-role", "add-permission",
           "update-permission", "add-provider", "update-provider", "add-cert", "add-group", "update-group"]
BOUND_MS = 50  # first page + total
BATCH = 50_000
START = datetime(2026, 8, 1, tzinfo=UTC)
SPAN_SECONDS = 90 * 86_400


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=10_000_000)
    parser.add_argument("--url", default="")
    parser.add_argument("--runs", type=int, default=30)
    return parser.parse_args()


def _row(i: int, total: int) -> dict:
    org = ORGS[i % len(ORGS)]
    method = "DELETE" if i % 100 == 7 else "GET" if i % 100 < 9 else "POST"
    return {
        "owner": org, "name": f"{i:020x}", "organization": org, "user": f"{org}/user{(i // 10) % 1000:04d}",
        "created_time": START + timedelta(seconds=SPAN_SECONDS * i / total), "client_ip": f"10.0.{i % 250}.{i % 199}",
        "method": method, "request_uri": "/api/update-user?id=x", "action": ACTIONS[(i * 7) % len(ACTIONS)],
        "language": "en", "object": '{"owner":"x","name":"y"}', "response": '{"status":"ok","msg":""}',
        "status_code": 200, "detail": "", "is_triggered": False,
    }


def seed(url: str, records: int) -> None:
    import sqlalchemy as sa

    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.models import Organization, Record

    migrate(url)
    engine = make_engine(url)
    with session_scope(engine) as db:
        ensure_first_start_data(db, "bench-admin-password")
        for org in ORGS:
            if not db.exec(sa.select(Organization.pk).where(Organization.name == org)).first():
                db.add(Organization(owner="admin", name=org, display_name=org, password_type="argon2id"))
    with engine.connect() as connection:
        have = connection.execute(sa.select(sa.func.count()).select_from(Record)
                                  .where(Record.owner.in_(ORGS))).scalar()
    started = time.perf_counter()
    for start in range(have, records, BATCH):
        with engine.begin() as connection:
            connection.execute(sa.insert(Record), [_row(i, records) for i in range(start, min(start + BATCH, records))])
        done = min(start + BATCH, records)
        if done % 1_000_000 == 0 or done == records:
            print(f"  seeded {done:,} records ({time.perf_counter() - started:.0f} s)", flush=True)
    if have < records:
        print(f"seeding {records - have:,} records took {time.perf_counter() - started:.0f} s", flush=True)
        with engine.begin() as connection:
            connection.execute(sa.text("ANALYZE"))
    engine.dispose()


def main() -> None:
    args = parse()
    url = args.url or f"sqlite:///{ROOT / 'bench' / '.data' / f'records-{args.records}.db'}"
    (ROOT / "bench" / ".data").mkdir(exist_ok=True)
    os.environ["IAM_DATABASE_URL"] = url
    os.environ.setdefault("IAM_ORIGIN", "http://127.0.0.1:8798")
    print(f"database: {url.split('@')[-1]}  records: {args.records:,}")
    seed(url, args.records)

    import httpx
    import uvicorn
    from sqlmodel import Session, select

    from iam_console import models as m
    from iam_console.api.app import api
    from iam_console.audit import trail
    from iam_console.core import counts, query
    from iam_console.db import engine

    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=8798, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    with Session(engine) as db:
        app = db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()
    client = httpx.Client(base_url="http://127.0.0.1:8798", auth=(app.client_id, app.client_secret), timeout=120)

    def http(params: dict) -> callable:
        def call():
            body = client.get("/api/get-records", params=params).json()
            assert body["status"] == "ok", body
            assert len(body["data"]) == 20 or body["data2"] < 20, body["data2"]
        return call

    def bare(params: dict) -> callable:
        """The service's statements without HTTP, access rules or serialisation."""
        owner = params.get("organizationName", "")

        def call():
            with Session(engine) as db:
                where = ([m.Record.owner == owner] if owner else []) + trail.filters(params)
                counted = None if len(where) > (1 if owner else 0) else (
                    lambda: counts.total(db, "record", owner or None))
                query.run(db, m.Record, where, query.parse_list_query(params), counted)
        return call

    page = {"p": "1", "pageSize": "20"}
    last_day = (START + timedelta(seconds=SPAN_SECONDS - 86_400)).isoformat()
    last_hour = (START + timedelta(seconds=SPAN_SECONDS - 3_600)).isoformat()
    cases = {
        "first page + total": page,
        "organization + total": {**page, "organizationName": ORGS[3]},
        "page 1000 + total": {**page, "p": "1000"},
        "user + total": {**page, "user": f"{ORGS[3]}/user0042"},
        "method DELETE + total": {**page, "method": "DELETE"},
        "action + total": {**page, "action": "delete-token"},
        "last hour + total": {**page, "startTime": last_hour},
        "last day + total": {**page, "startTime": last_day},
        "org + user + day": {**page, "organizationName": ORGS[3], "user": f"{ORGS[3]}/user0042",
                             "startTime": last_day},
    }
    print(f"{'call':<24}{'HTTP median':>12}{'p95':>9}{'bare median':>13}{'total':>12}{'bound':>7}{'/bound':>8}")
    for name, params in cases.items():
        median, p95 = timed(http(params), args.runs)
        bare_median, _ = timed(bare(params), args.runs)
        total = client.get("/api/get-records", params=params).json()["data2"]
        print(f"{name:<24}{median:>10.1f}ms{p95:>7.1f}ms{bare_median:>11.1f}ms{total:>12,}{BOUND_MS:>5}ms"
              f"{median / BOUND_MS:>7.2f}x", flush=True)

    started, size = time.perf_counter(), 0
    with client.stream("GET", "/api/export-records", params={"organizationName": ORGS[3],
                                                              "startTime": last_day}) as answer:
        for chunk in answer.iter_bytes():
            size += len(chunk)
    seconds = time.perf_counter() - started
    print(f"CSV export of one organization's last day: {size / 1e6:.1f} MB in {seconds:.1f} s", flush=True)
    server.should_exit = True


if __name__ == "__main__":
    main()
