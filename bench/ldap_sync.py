"""LDAP sync: every user of a real OpenLDAP directory into an organization.

Target (issue 6): a sync of 10,000 directory users finishes in under 30 s with flat memory.

A slapd (tests/ldap_server.py: slapadd into a temporary mdb database, served on a
free port) holds the users; each scenario syncs all of them into a fresh SQLite
database through the service the auto sync runs (identity/ldap.auto_sync: the
directory read by paged search, users added in batches of 500, each its own
transaction), in a process of its own so that its memory is its own. Then the
same sync again, where every user already exists. Printed per scenario: users,
seconds, users a second, resident memory before and at the peak (psutil, sampled
every 20 ms), the CPU the syncing process and slapd used, and the ratio to the
30 s target. Flat memory shows as the same peak at 1,000 and at 10,000 users.

    .venv/bin/python bench/ldap_sync.py [--users 10000] [--small 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from timing import measured  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TARGET_SECONDS = 30.0
TARGET_USERS = 10_000
ORG = "bench"


def run_sync(database: str, record: dict) -> dict:
    os.environ["IAM_DATABASE_URL"] = f"sqlite:///{database}"
    os.environ["IAM_OUTBOUND_ALLOW"] = "127.0.0.1"  # the benchmark's slapd listens on loopback
    from sqlmodel import func, select

    from iam_console import models as m
    from iam_console.core import crud
    from iam_console.core.access import Actor
    from iam_console.core.resources import REGISTRY
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import migrate, session_scope
    from iam_console.identity import ldap

    migrate()
    with session_scope() as db:
        ensure_first_start_data(db, "bench-admin-password")
        god = Actor(application=db.exec(select(m.Application)).first())
        crud.add_record(db, god, REGISTRY["organization"], {"owner": "admin", "name": ORG})
        crud.add_record(db, god, REGISTRY["group"], {"owner": ORG, "name": "staff", "type": "Physical"})
    with session_scope() as db:
        crud.add_record(db, god, REGISTRY["ldap"], {"owner": ORG, "id": "directory", "autoSync": 1,
                                                     "defaultGroup": f"{ORG}/staff", **record})

    figures: dict = {}
    for run in ("first", "again"):
        def sync() -> tuple:
            # due now: lastSync is pushed back by the interval before the second run
            with session_scope() as db:
                (ident, result), = ldap.auto_sync(db)
            return ident, result

        (ident, result), cost = measured(sync)
        assert result is not None, f"the sync of {ident} failed"
        figures[run] = {"added": result.added, "exist": result.exist_count,
                        "failed": result.failed_count, **cost}
        with session_scope() as db:
            db.exec(m.Ldap.__table__.update().values(last_sync=None))
    with session_scope() as db:
        figures["stored"] = db.exec(select(func.count()).select_from(m.User).where(
            m.User.owner == ORG, m.User.ldap != "")).one()
    return figures


def scenario(users: int, folder: str) -> dict:
    from tests.ldap_server import Directory

    started = time.perf_counter()
    with Directory(users=users) as directory:
        loaded = time.perf_counter() - started
        import psutil

        slapd = psutil.Process(directory.process.pid)
        slapd_before = sum(slapd.cpu_times()[:2])
        database = os.path.join(folder, f"sync-{users}.db")
        done = subprocess.run([sys.executable, __file__, "--sync", database, json.dumps(directory.ldap_record())],
                              check=True, capture_output=True, text=True)
        slapd_cpu = sum(slapd.cpu_times()[:2]) - slapd_before
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures.update(users=users, load_seconds=loaded, slapd_cpu_seconds=slapd_cpu)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--users", type=int, default=TARGET_USERS)
    parser.add_argument("--small", type=int, default=1_000, help="the smaller directory, to show memory is flat")
    parser.add_argument("--sync", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sync:
        print(json.dumps(run_sync(args.sync[0], json.loads(args.sync[1]))))
        return
    from tests import ldap_server

    if not ldap_server.available():
        sys.exit("slapd is not installed: apt-get install slapd ldap-utils")
    print(f"cpus: {os.cpu_count()}; target: {TARGET_USERS:,} directory users synced in {TARGET_SECONDS:.0f} s")
    with tempfile.TemporaryDirectory(prefix="bench-ldap-") as folder:
        for users in (args.small, args.users):
            f = scenario(users, folder)
            first, again = f["first"], f["again"]
            assert first["added"] == f["stored"] == users and first["failed"] == 0, f
            assert again["added"] == 0 and again["exist"] == users, f
            rate = users / first["seconds"]
            print(f"{users:>7,} users (slapadd and start {f['load_seconds']:.1f} s): synced in {first['seconds']:.1f} s"
                  f" = {rate:,.0f} users/s, CPU {first['cpu_seconds']:.1f} s (slapd {f['slapd_cpu_seconds']:.1f} s"
                  f" over both runs); RSS {first['baseline_mb']:.0f} MB before, {first['peak_mb']:.0f} MB peak"
                  f" (+{first['peak_mb'] - first['baseline_mb']:.0f} MB)")
            print(f"{'':>7}  again, all existing: {again['seconds']:.1f} s, RSS peak {again['peak_mb']:.0f} MB;"
                  f" {TARGET_USERS:,} users at this rate: {TARGET_USERS / rate:.1f} s;"
                  f" ratio to the {TARGET_SECONDS:.0f} s target: {TARGET_USERS / rate / TARGET_SECONDS:.2f}")


if __name__ == "__main__":
    main()
