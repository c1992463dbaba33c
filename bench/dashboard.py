"""Dashboard at scale: home/dashboard.counts (the 14 series of 31 days behind
the dashboard page and GET /api/get-dashboard) with N users in one organization,
in this process, beside bare statements measured in the same run.

    .venv/bin/python bench/dashboard.py                    # SQLite, 1,000,000 users
    .venv/bin/python bench/dashboard.py --users 100000 --runs 20
    .venv/bin/python bench/dashboard.py --days 30           # every user new: a bulk import's month
    .venv/bin/python bench/dashboard.py --url postgresql+psycopg://postgres@127.0.0.1:5432/iam_dash_bench

The users are created over the last --days days, evenly (the newest today), so
about users * 31 / days of them fall in the chart's window. Seeding is cached in
bench/.data/ (bench/list_users.py's seeding, with created times). Prints the
median and p95 per call, the ratio to the target (300 ms, docs/performance.md), the
bounds, and the process's resident memory before and after the runs."""

from __future__ import annotations

import argparse
import os
import sys
from datetime import timedelta
from pathlib import Path

from timing import timed  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_MS = 300


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--days", type=int, default=1_000, help="the users' created times span this many days")
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--url", default="", help="another database (PostgreSQL), seeded server-side")
    return parser.parse_args()


def rss_mb() -> float:
    import psutil

    return psutil.Process().memory_info().rss / 2**20


def main() -> None:
    args = parse()
    url = args.url or f"sqlite:///{ROOT / 'bench' / '.data' / f'dashboard-{args.users}-{args.days}d.db'}"
    (ROOT / "bench" / ".data").mkdir(exist_ok=True)
    os.environ["IAM_DATABASE_URL"] = url
    print(f"database: {url.split('@')[-1]}  users: {args.users:,} created over {args.days} days")

    import list_users

    from iam_console.models.base import utcnow

    newest, step = utcnow(), timedelta(days=args.days) / args.users
    list_users.seed(url, args.users, created_time=lambda i: newest - step * (args.users - 1 - i),
                    created_sql=f"now() - ({args.users - 1} - i) * interval '{step.total_seconds()} seconds'")

    if url.startswith("postgresql"):
        _vacuum(url)

    from sqlmodel import Session, func, select

    from iam_console import models as m
    from iam_console.core import counts
    from iam_console.core.access import Actor
    from iam_console.db import engine
    from iam_console.home import dashboard

    org = list_users.ORG
    with Session(engine) as db:
        admin = db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one()
        window_start = (utcnow() - timedelta(days=dashboard.DAYS - 1)).replace(hour=0, minute=0, second=0,
                                                                              microsecond=0)
        in_window = db.exec(select(func.count()).select_from(m.User)
                            .where(m.User.created_time >= window_start)).one()
    global_admin = Actor(user=admin)
    org_admin = Actor(user=m.User(owner=org, name="bench-boss", is_admin=True))
    print(f"users created in the chart's window: {in_window:,}")

    def service(actor: Actor, organization: str):
        def call():
            with Session(engine) as db:
                series = dashboard.counts(db, actor, organization)
            assert len(series) == 14 and series["userCounts"][-1] >= args.users
        return call

    def bare(statement):
        def call():
            with Session(engine) as db:
                db.exec(statement).all()
        return call

    day = func.date(m.User.created_time)
    cases = [
        ("counts: all organizations", service(global_admin, ""), True),
        ("counts: the organization (global admin)", service(global_admin, org), True),
        ("counts: the organization (its admin)", service(org_admin, org), True),
        ("bound: users per day in the window", bare(select(day, func.count()).where(
            m.User.owner == org, m.User.created_time >= window_start).group_by(day)), False),
        ("bound: count(*) of the organization", bare(select(func.count()).select_from(m.User)
                                                     .where(m.User.owner == org)), False),
        ("bound: maintained count", lambda: _maintained(engine, counts, org), False),
        ("bound: users per day, every user", bare(select(day, func.count()).group_by(day)), False),
    ]
    before = rss_mb()
    print(f"{'call':<42}{'median':>10}{'p95':>10}{'/target':>9}")
    for label, call, is_service in cases:
        runs = args.runs if is_service or "every user" not in label else max(3, args.runs // 4)
        median, p95 = timed(call, runs)
        ratio = f"{median / TARGET_MS:>8.2f}x" if is_service else ""
        print(f"{label:<42}{median:>8.1f}ms{p95:>8.1f}ms{ratio}", flush=True)
    print(f"resident memory: {before:.0f} MB before the runs, {rss_mb():.0f} MB after")


def _vacuum(url: str) -> None:
    """What autovacuum does after a bulk insert (PostgreSQL 13+ vacuums after inserts too): without
    the visibility map it sets, counting over an index still reads every row from the table."""
    import sqlalchemy as sa

    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(sa.text('VACUUM (ANALYZE) "user"'))
    engine.dispose()


def _maintained(engine, counts, org: str) -> None:
    from sqlmodel import Session

    with Session(engine) as db:
        counts.total(db, "user", org)


if __name__ == "__main__":
    main()
