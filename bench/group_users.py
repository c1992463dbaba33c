"""Users of a group at scale: the group tree's users list (get-users?groupName=)
with N users in one organization, through the service the console and the API call.

    .venv/bin/python bench/group_users.py                  # SQLite, 1,000,000 users
    .venv/bin/python bench/group_users.py --users 200000
    .venv/bin/python bench/group_users.py --postgres       # a scratch database at 127.0.0.1:5432

Every 1,000th user is in the sparse group, every 2nd in the dense one. Membership
is the users' `groups` JSON list (Casdoor's model), read through the user_group
table its triggers keep (migration 0007). Seeding is cached in bench/.data/
(SQLite) or in the scratch database (PostgreSQL, kept with --keep)."""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

ORG = "bench-org"
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
PG_DATABASE = "iam_group_users_bench"


def _pg_admin(statement: str) -> None:
    import psycopg

    with psycopg.connect(PG_SERVER.replace("+psycopg", "") + "/test", autocommit=True) as connection:
        connection.execute(statement)


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--postgres", action="store_true", help=f"a scratch database {PG_DATABASE} at {PG_SERVER}")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database for the next run")
    return parser.parse_args()


def seed(url: str, users: int) -> None:
    import sqlalchemy as sa

    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.models import Organization, User

    migrate(url)
    engine = make_engine(url)
    with session_scope(engine) as db:
        ensure_first_start_data(db, "bench-admin-password")
        if not db.exec(sa.select(Organization.pk).where(Organization.name == ORG)).first():
            db.add(Organization(owner="admin", name=ORG, display_name="Bench", password_type="argon2id"))
    batch, started, analyze = 20_000, time.perf_counter(), False
    with engine.begin() as connection:
        have = connection.execute(sa.select(sa.func.count()).select_from(User).where(User.owner == ORG)).scalar()
        if engine.dialect.name == "postgresql" and have < users:
            import list_users

            # the same lists as below, in one INSERT ... SELECT (the membership trigger runs once, on 1M rows)
            groups = sa.text(f"""(CASE WHEN i % 1000 = 0 THEN '["{ORG}/sparse", "{ORG}/dense"]'
                                  WHEN i % 2 = 0 THEN '["{ORG}/dense"]' ELSE '[]' END)::json""")
            list_users._seed_server_side(connection, User, "", have, users, extra={"groups": groups})
            print(f"  seeded {users:,} users server-side ({time.perf_counter() - started:.0f} s)", flush=True)
            have = users
            analyze = True
        for start in range(have, users, batch):
            rows = [{
                "owner": ORG, "name": f"user{i:07d}", "uuid": str(uuid.uuid4()), "display_name": f"User {i}",
                "email": f"user{i}@example.com", "type": "normal-user",
                "groups": [g for g, every in ((f"{ORG}/sparse", 1000), (f"{ORG}/dense", 2)) if i % every == 0],
            } for i in range(start, min(start + batch, users))]
            connection.execute(sa.insert(User), rows)
            if (start + len(rows)) % 100_000 == 0 or start + len(rows) == users:
                print(f"  seeded {start + len(rows):,} users ({time.perf_counter() - started:.0f} s)", flush=True)
    if analyze:  # what autovacuum does after a bulk load: statistics, and the visibility map for index-only scans
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as connection:
            connection.execute(sa.text("VACUUM (ANALYZE) user_group"))
    engine.dispose()


def timed(call, runs: int) -> tuple[float, float]:
    """Median wall and CPU milliseconds (SQLite runs in this process: its CPU time
    says what a call costs when other processes share the cores)."""
    call()
    wall, cpu = [], []
    for _ in range(runs):
        started, started_cpu = time.perf_counter(), time.process_time()
        call()
        wall.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main() -> None:
    args = parse()
    if args.postgres:
        url = f"{PG_SERVER}/{PG_DATABASE}"
        with contextlib.suppress(Exception):
            _pg_admin(f'CREATE DATABASE "{PG_DATABASE}"')
    else:
        (ROOT / "bench" / ".data").mkdir(exist_ok=True)
        url = f"sqlite:///{ROOT / 'bench' / '.data' / f'groups-{args.users}.db'}"
    os.environ["IAM_DATABASE_URL"] = url
    print(f"database: {url}  users: {args.users:,}")
    seed(url, args.users)

    from sqlmodel import Session, select

    from iam_console import models as m
    from iam_console.core import crud
    from iam_console.core.access import Actor
    from iam_console.core.resources import REGISTRY
    from iam_console.db import engine

    with Session(engine) as db:
        admin = Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())

    def page(params: dict):
        def call():
            with Session(engine) as db:
                crud.list_records(db, admin, REGISTRY["user"], params, owner=ORG)
        return call

    first = {"p": "1", "pageSize": "20"}
    cases = {
        "all users, first page + total": first,
        "dense group, first page + total": {**first, "groupName": "dense"},
        "dense group, page 100 + total": {**first, "p": "100", "groupName": "dense"},
        "sparse group, first page + total": {**first, "groupName": "sparse"},
        "empty group, first page + total": {**first, "groupName": "nobody"},
    }
    print(f"{'call':<36}{'wall median':>12}{'CPU median':>12}")
    for name, params in cases.items():
        wall, cpu = timed(page(params), args.runs)
        print(f"{name:<36}{wall:>10.1f}ms{cpu:>10.1f}ms", flush=True)
    print(f"(load average while running: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    if args.postgres and not args.keep:
        engine.dispose()
        _pg_admin(f'DROP DATABASE IF EXISTS "{PG_DATABASE}" WITH (FORCE)')


if __name__ == "__main__":
    main()
