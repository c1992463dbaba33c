"""Syncer: every row of an external user table into an organization.

Target (issue 17): 100,000 rows synced in under 60 s, in batches, with flat memory (Casdoor's
syncer reads the whole table into memory at once).

The upstream table (id, username, display name, email, phone, a password hash, score) is
generated in a SQLite file, or with `--upstream postgres` / `--upstream mariadb` in a fresh
database of the local server. Each scenario syncs it into a fresh SQLite server database
through the service the scheduler runs (operations/syncers.auto_sync: the table read by keyset
in batches of 500, users added through add-user's rules, one transaction a batch), in a
process of its own so that its memory is its own; then the same sync again, where every user
exists and nothing changed; then again after 1% of the rows changed upstream. Printed per
scenario: rows, seconds, rows a second, resident memory before and at the peak (psutil,
sampled every 20 ms). Flat memory shows as the same peak at 10,000 and at 100,000 rows.

    .venv/bin/python bench/syncer.py [--rows 100000] [--small 10000] [--upstream sqlite|postgres|mariadb]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from timing import measured  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 60.0
TARGET_ROWS = 100_000
ORG = "bench"
SERVERS = {"postgres": ("postgresql+psycopg://postgres@127.0.0.1:5432", "postgres", 5432),
           "mariadb": ("mysql+pymysql://root@127.0.0.1:3306", "root", 3306)}
HASH = "$2b$10$Ffd7RcTGZxK3X2mVOqCjNeS7d9eGq0nHwGdC9c0sWqk3ZlmQ1v0iK"  # a bcrypt hash, stored as it is
COLUMNS = [
    {"name": "id", "type": "integer", "casdoorName": "Id", "isKey": True, "isHashed": True, "values": []},
    {"name": "username", "type": "string", "casdoorName": "Name", "isKey": False, "isHashed": True, "values": []},
    {"name": "display", "type": "string", "casdoorName": "DisplayName", "isKey": False, "isHashed": True,
     "values": []},
    {"name": "email", "type": "string", "casdoorName": "Email", "isKey": False, "isHashed": True, "values": []},
    {"name": "phone", "type": "string", "casdoorName": "Phone", "isKey": False, "isHashed": True, "values": []},
    {"name": "pwd", "type": "string", "casdoorName": "Password", "isKey": False, "isHashed": True, "values": []},
    {"name": "score", "type": "integer", "casdoorName": "Score", "isKey": False, "isHashed": True, "values": []},
]


def fill(url: str, rows: int) -> None:
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    meta = sa.MetaData()
    people = sa.Table("people", meta, sa.Column("id", sa.Integer, primary_key=True),
                      sa.Column("username", sa.String(100)), sa.Column("display", sa.String(100)),
                      sa.Column("email", sa.String(100)), sa.Column("phone", sa.String(100)),
                      sa.Column("pwd", sa.String(200)), sa.Column("score", sa.Integer))
    meta.create_all(engine)
    with engine.begin() as connection:
        for start in range(0, rows, 10_000):
            connection.execute(people.insert(), [
                {"id": i + 1, "username": f"user{i:07d}", "display": f"User {i}", "email": f"user{i}@example.com",
                 "phone": f"555{i:07d}", "pwd": HASH, "score": i % 100}
                for i in range(start, min(rows, start + 10_000))])
    engine.dispose()


def touch(url: str) -> int:
    """Change 1% of the rows upstream."""
    import sqlalchemy as sa

    engine = sa.create_engine(url)
    with engine.begin() as connection:
        changed = connection.execute(sa.text("UPDATE people SET email = 'changed-' || email WHERE id % 100 = 0")
                                     if engine.dialect.name != "mysql" else
                                     sa.text("UPDATE people SET email = CONCAT('changed-', email) WHERE id % 100 = 0"))
    engine.dispose()
    return changed.rowcount


def run_sync(database: str, fields: dict, upstream_url: str) -> dict:
    os.environ["IAM_DATABASE_URL"] = f"sqlite:///{database}"
    os.environ["IAM_OUTBOUND_ALLOW"] = "127.0.0.1"  # the benchmark's database servers listen on loopback
    from sqlmodel import func, select

    from iam_console import models as m
    from iam_console.core import crud
    from iam_console.core.access import Actor
    from iam_console.core.resources import REGISTRY
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import migrate, session_scope
    from iam_console.operations import syncers

    migrate()
    with session_scope() as db:
        ensure_first_start_data(db, "bench-admin-password")
        god = Actor(application=db.exec(select(m.Application)).first())
        crud.add_record(db, god, REGISTRY["organization"], {"owner": "admin", "name": ORG,
                                                           "passwordType": "bcrypt"})
        crud.add_record(db, god, REGISTRY["syncer"], {
            "owner": "admin", "name": "people", "organization": ORG, "type": "Database", "table": "people",
            "tableColumns": COLUMNS, "syncInterval": 1, "isEnabled": True, "isReadOnly": True, **fields})

    figures: dict = {}
    for run in ("first", "again", "changed"):
        if run == "changed":
            figures["touched"] = touch(upstream_url)

        def sync() -> tuple:
            with session_scope() as db:
                (ident, result), = syncers.auto_sync(db)
            return ident, result

        (ident, result), cost = measured(sync)
        assert result is not None, f"the sync of {ident} failed"
        figures[run] = {"added": result.added, "updated": result.updated,
                        "failed": result.failed, **cost}
        with session_scope() as db:
            db.exec(m.Syncer.__table__.update().values(last_sync=None))
    with session_scope() as db:
        figures["stored"] = db.exec(select(func.count()).select_from(m.User).where(m.User.owner == ORG)).one()
    return figures


def scenario(rows: int, folder: str, upstream: str) -> dict:
    import sqlalchemy as sa

    admin = None
    if upstream == "sqlite":
        path = os.path.join(folder, f"upstream-{rows}.db")
        url, fields = f"sqlite:///{path}", {"databaseType": "sqlite3", "database": path}
    else:
        server, user, port = SERVERS[upstream]
        name = f"iam_bench_{uuid.uuid4().hex[:8]}"
        admin = sa.create_engine(f"{server}/test", isolation_level="AUTOCOMMIT")
        with admin.connect() as connection:
            connection.execute(sa.text(f"CREATE DATABASE {name}"))
        url = f"{server}/{name}"
        fields = {"databaseType": "postgres" if upstream == "postgres" else "mysql", "host": "127.0.0.1",
                  "port": port, "user": user, "database": name}
    try:
        started = time.perf_counter()
        fill(url, rows)
        loaded = time.perf_counter() - started
        database = os.path.join(folder, f"server-{rows}.db")
        done = subprocess.run([sys.executable, __file__, "--sync", database, json.dumps(fields), url],
                              check=True, capture_output=True, text=True)
    finally:
        if admin is not None:
            with admin.connect() as connection:
                connection.execute(sa.text(f"DROP DATABASE {name}" + (" WITH (FORCE)" if upstream == "postgres"
                                                                       else "")))
            admin.dispose()
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(rows=rows, load_seconds=loaded)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=TARGET_ROWS)
    parser.add_argument("--small", type=int, default=10_000, help="the smaller table, to show memory is flat")
    parser.add_argument("--upstream", choices=("sqlite", "postgres", "mariadb"), default="sqlite")
    parser.add_argument("--sync", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sync:
        print(json.dumps(run_sync(args.sync[0], json.loads(args.sync[1]), args.sync[2])))
        return
    print(f"cpus: {os.cpu_count()}; upstream: {args.upstream}; target: {TARGET_ROWS:,} rows in {TARGET_SECONDS:.0f} s")
    with tempfile.TemporaryDirectory(prefix="bench-syncer-") as folder:
        for rows in (args.small, args.rows):
            f = scenario(rows, folder, args.upstream)
            first, again, changed = f["first"], f["again"], f["changed"]
            assert first["added"] == f["stored"] == rows and first["failed"] == 0, f
            assert again["added"] == again["updated"] == 0, f
            assert changed["updated"] == f["touched"] == rows // 100, f
            rate = rows / first["seconds"]
            print(f"{rows:>8,} rows (generated in {f['load_seconds']:.1f} s): synced in {first['seconds']:.1f} s"
                  f" = {rate:,.0f} rows/s, CPU {first['cpu_seconds']:.1f} s; RSS {first['baseline_mb']:.0f} MB"
                  f" before, {first['peak_mb']:.0f} MB peak (+{first['peak_mb'] - first['baseline_mb']:.0f} MB);"
                  f" {TARGET_ROWS:,} rows at this rate: {TARGET_ROWS / rate:.1f} s,"
                  f" ratio to the target {TARGET_ROWS / rate / TARGET_SECONDS:.2f}")
            print(f"{'':>8}  again, unchanged: {again['seconds']:.1f} s, RSS peak {again['peak_mb']:.0f} MB;"
                  f" 1% changed upstream ({f['touched']:,} rows): {changed['seconds']:.1f} s,"
                  f" RSS peak {changed['peak_mb']:.0f} MB")


if __name__ == "__main__":
    main()
