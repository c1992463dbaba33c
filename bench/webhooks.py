"""Webhook delivery under load: records written at a steady rate (default 1,000 a minute) by
several writer threads, each with an enabled webhook listening for it, delivered by the delivery
worker (operations/webhooks.py, the thread the server runs) to a local HTTP sink; the time from a
record's commit to its arrival at the sink, median and p95, and whether every event arrived once.

    .venv/bin/python bench/webhooks.py                        # SQLite, 60 s at 1,000 a minute
    .venv/bin/python bench/webhooks.py --seconds 180 --rate 2000
    .venv/bin/python bench/webhooks.py --url postgresql+psycopg://postgres@127.0.0.1:5432/bench

The database is a fresh SQLite file in a temporary folder (or the database at --url, migrated);
the sink answers 200 at once. The bound: p95 at most 2 s (docs/performance.md)."""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from timing import percentiles  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
BOUND_MS = 2000
WRITERS = 4


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--rate", type=int, default=1000, help="records a minute")
    parser.add_argument("--url", default="")
    return parser.parse_args()


class Sink:
    """An HTTP endpoint on 127.0.0.1 keeping when each record id arrived (and how often)."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.repeats = 0
        lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                at = time.monotonic()
                record = int(json.loads(body)["requestUri"].rpartition("n=")[2])
                with lock:
                    if record in sink.arrived:
                        sink.repeats += 1
                    sink.arrived.setdefault(record, at)
                self.send_response(200)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/hook"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()


def main() -> None:
    args = parse()
    url = args.url or f"sqlite:///{Path(tempfile.mkdtemp(prefix='bench-webhooks-')) / 'webhooks.db'}"
    os.environ["IAM_DATABASE_URL"] = url
    os.environ["IAM_OUTBOUND_ALLOW"] = "127.0.0.1"
    import sqlalchemy as sa

    from iam_console import models as m
    from iam_console.audit import records
    from iam_console.db import migrate, session_scope
    from iam_console.operations import webhooks

    migrate(url)
    sink = Sink()
    org = f"bench-hooks-{int(time.time())}"
    with session_scope() as db:
        db.add(m.Organization(owner="admin", name=org, password_type="argon2id"))
        db.add(m.Webhook(owner="admin", name=f"{org}-hook", organization=org, url=sink.url, method="POST",
                         content_type="application/json", events=["update-user"], is_enabled=True,
                         secret="bench-secret", max_retries=3, retry_interval=1))

    committed: dict[int, float] = {}
    lock = threading.Lock()
    total = args.rate * args.seconds // 60
    interval = 60 / args.rate * WRITERS  # each writer's pace

    def writer(index: int) -> None:
        start = time.monotonic() + index * 60 / args.rate
        for n in range(index, total, WRITERS):
            wait = start + (n // WRITERS) * interval - time.monotonic()
            if wait > 0:
                time.sleep(wait)
            with session_scope() as db:
                records.audit(db, organization=org, user=f"{org}/user{n % 100}", action="update-user",
                              request_uri=f"/api/update-user?n={n}", obj={"owner": org, "name": f"user{n % 100}"})
            at = time.monotonic()
            with lock:
                committed[n] = at

    stop = threading.Event()
    worker = threading.Thread(target=webhooks.run, args=(stop, session_scope), daemon=True)
    worker.start()
    began = time.monotonic()
    writers = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for thread in writers:
        thread.start()
    for thread in writers:
        thread.join()
    wrote = time.monotonic() - began
    deadline = time.monotonic() + 30
    while len(sink.arrived) < total and time.monotonic() < deadline:
        time.sleep(0.1)
    stop.set()
    webhooks.WAKE.set()

    latencies = [(sink.arrived[n] - at) * 1000 for n, at in committed.items() if n in sink.arrived]
    median, p95 = percentiles(latencies)
    with session_scope() as db:
        states = dict(db.exec(sa.select(m.WebhookEvent.state, sa.func.count()).group_by(m.WebhookEvent.state)).all())
    print(f"database: {url.split('://')[0]}; {total} records in {wrote:.1f} s "
          f"({total / wrote * 60:.0f} a minute, {WRITERS} writers)")
    print(f"delivered: {len(sink.arrived)} of {total}, repeated: {sink.repeats}, event states: {states}")
    print(f"record -> delivery: median {median:.0f} ms, p95 {p95:.0f} ms, max {max(latencies):.0f} ms "
          f"(bound p95 {BOUND_MS} ms: {'ok' if p95 <= BOUND_MS else 'OVER'})")


if __name__ == "__main__":
    main()
