"""The console's paging click at scale: the users list of an organization of N users,
in the production server driven by headless Chromium, timed on the websocket.

    .venv/bin/python bench/console_paging.py                 # SQLite, 1,000,000 users
    .venv/bin/python bench/console_paging.py --postgres      # PostgreSQL at 127.0.0.1:5432
    .venv/bin/python bench/console_paging.py --users 100000 --clicks 10

The server is the production command (`python -m iam_console.serve`, one worker, started
as bench/own_server.py starts it) from this worktree on a free port, signed in
as the built-in admin through POST /api/login. An action's server time runs from
the websocket frame the click sends to the first frame received after it that
carries the list's state delta; each frame is stamped twice, by Playwright's
framesent/framereceived events in this process (time.perf_counter) and inside
the page (performance.now() in a WebSocket wrapper), which leaves out the
driver's delay. Actions: next-page clicks, jumps to page 5,000 (quick jumper),
sort clicks on Name, searches on Name (the 300 ms debounce is in the browser,
before the frame is sent). For comparison, the same service calls in this
process: crud.list_records (page 2, page 5,000, sorted, a search, each with its
total), then the same plus the viewer's session lookup and the rows' display strings,
which is all Listing._load does outside Reflex.

SQLite is seeded and cached under bench/.data/ by bench/list_users.py's seed; on
PostgreSQL a scratch database is created, seeded server-side and dropped at the
end (--keep leaves it for the next run)."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from own_server import OwnServer  # bench/own_server.py
from timing import timed  # bench/timing.py

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

TARGET_MS = 100
ADMIN_PASSWORD = "bench-admin-password"  # list_users.seed's first start sets it
PG_SERVER = "postgresql+psycopg://postgres@127.0.0.1:5432"
PG_DATABASE = "iam_console_paging_bench"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SEARCHES = ["user0012345", "user0424242", "user0999", "user07777", "user0031337", "user00555"]
LISTING = "listing____listing"  # the Listing state's key in a delta (reflex___state____state.….listing____listing)

# Stamps every websocket frame inside the page, before the driver sees it.
STAMP_FRAMES = """
(() => {
  const Native = window.WebSocket;
  window.__benchFrames = [];
  window.__benchOpen = false;
  const text = (data) => typeof data === "string" ? data : "";
  class Stamped extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { window.__benchOpen = true; });
      this.addEventListener("close", () => { window.__benchOpen = false; });
      this.addEventListener("message", (e) => {
        window.__benchFrames.push([performance.now(), "received", text(e.data).slice(0, 400)]);
      });
    }
    send(data) {
      window.__benchFrames.push([performance.now(), "sent", text(data).slice(0, 400)]);
      return super.send(data);
    }
  }
  window.WebSocket = Stamped;
})();
"""


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=1_000_000)
    parser.add_argument("--postgres", action="store_true", help=f"a scratch database {PG_DATABASE} at {PG_SERVER}")
    parser.add_argument("--keep", action="store_true", help="keep the PostgreSQL database for the next run")
    parser.add_argument("--clicks", type=int, default=20, help="next-page clicks")
    parser.add_argument("--repeat", type=int, default=5, help="jumps and searches; three times as many sort clicks")
    parser.add_argument("--runs", type=int, default=20, help="runs of each in-process call")
    parser.add_argument("--log", default="", help="copy the server's log to this file")
    return parser.parse_args()


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    return statistics.median(ordered), ordered[max(0, -(-len(ordered) * 95 // 100) - 1)]


# --- the database ----------------------------------------------------------------------------------------


def _pg_admin(statement: str) -> None:
    import psycopg

    with psycopg.connect(PG_SERVER.replace("+psycopg", "") + "/test", autocommit=True) as connection:
        connection.execute(statement)


def prepare_database(args: argparse.Namespace) -> str:
    import list_users

    if args.postgres:
        url = f"{PG_SERVER}/{PG_DATABASE}"
        with contextlib.suppress(Exception):
            _pg_admin(f'CREATE DATABASE "{PG_DATABASE}"')
    else:
        (ROOT / "bench" / ".data").mkdir(exist_ok=True)
        url = f"sqlite:///{ROOT / 'bench' / '.data' / f'users-{args.users}.db'}"
    os.environ["IAM_DATABASE_URL"] = url  # before iam_console is imported
    list_users.seed(url, args.users)
    return url


def drop_database() -> None:
    from iam_console.db import engine

    engine.dispose()
    _pg_admin(f'DROP DATABASE IF EXISTS "{PG_DATABASE}" WITH (FORCE)')


# --- the server -------------------------------------------------------------------------------------------


# --- the browser ------------------------------------------------------------------------------------------


class Frames:
    """The event websocket's frames, stamped by Playwright's events in this process."""

    def __init__(self) -> None:
        self.log: list[tuple[float, str, str]] = []

    def attach(self, ws) -> None:
        if "/_event" not in ws.url:
            return
        ws.on("framesent", lambda payload: self.log.append((time.perf_counter(), "sent", _text(payload))))
        ws.on("framereceived", lambda payload: self.log.append((time.perf_counter(), "received", _text(payload))))


def _text(payload) -> str:
    return payload.decode(errors="replace") if isinstance(payload, bytes) else payload


def _event_name(frame: str) -> str:
    """The handler's name in a socket.io frame `42["event",{"name":"…listing____listing.go_to",…}]`."""
    try:
        body = json.loads(frame[frame.index("["):])
    except ValueError:
        return ""
    if isinstance(body, list) and len(body) > 1 and isinstance(body[1], dict):
        return str(body[1].get("name", "")).rsplit(".", 1)[-1]
    return ""


def pair(frames: list, since: int, handler: str) -> tuple[float, int] | None:
    """(ms, bytes) from the first frame sent since `since` that calls Listing's `handler`
    to the first frame received after it with a delta of the Listing state."""
    sent = None
    for stamp, direction, text in frames[since:]:
        if sent is None:
            if direction == "sent" and LISTING in text and _event_name(text) == handler:
                sent = stamp
        elif direction == "received" and '"delta"' in text and LISTING in text:
            return (stamp - sent) * 1000, len(text.encode())
    return None


class Console:
    def __init__(self, page, frames: Frames) -> None:
        self.page, self.frames = page, frames
        self.samples: dict[str, list[tuple[float, float, int]]] = {}

    def in_page(self) -> list:
        return [(t / 1000, d, text) for t, d, text in self.page.evaluate("window.__benchFrames")]

    def act(self, label: str, handler: str, action, check=None) -> None:
        """Run `action`, wait for Listing's answer, record both stamps' times and the frame size."""
        since = len(self.frames.log)
        since_page = self.page.evaluate("window.__benchFrames.length")
        action()
        deadline = time.monotonic() + 60
        while True:
            self.page.wait_for_timeout(20)  # lets Playwright dispatch the frame events
            driver = pair(self.frames.log, since, handler)
            browser = pair(self.in_page(), since_page, handler)
            if driver and browser:
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"{label}: no answer to {handler} within 60 s")
        if check:
            check()
        self.samples.setdefault(label, []).append((driver[0], browser[0], driver[1]))

    def current(self, text: str):
        return lambda: self.page.wait_for_function(
            "t => document.querySelector('#page-current')?.textContent.startsWith(t)", arg=text)


def drive(server: OwnServer, args: argparse.Namespace, org: str) -> tuple[dict, str]:
    """The browser's part; answers the samples and the session cookie's value."""
    from playwright.sync_api import sync_playwright

    from iam_console.api.callers import SESSION_COOKIE

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            context = browser.new_context(base_url=server.base, viewport={"width": 1280, "height": 800})
            context.set_default_timeout(60_000)
            context.add_init_script(STAMP_FRAMES)
            page = context.new_page()
            frames = Frames()
            page.on("websocket", frames.attach)
            response = page.request.post("/api/login", data={
                "application": "", "organization": "built-in", "username": "admin", "password": ADMIN_PASSWORD,
                "autoSignin": True, "type": "login", "signinMethod": "Password"})
            assert response.ok and response.json().get("status") == "ok", response.text()
            token = next(c["value"] for c in context.cookies() if c["name"] == SESSION_COOKIE)

            page.goto(f"/organizations/{org}/users")
            page.wait_for_function("window.__benchOpen === true")
            pages = -(-args.users // 20)
            page.wait_for_function(
                "n => document.querySelector('#list-total')?.textContent.replace(/\\D/g, '') === n",
                arg=str(args.users))
            page.wait_for_function("document.querySelectorAll('#list-table tbody tr').length === 20")
            console = Console(page, frames)

            for i in range(args.clicks + 1):  # the first one warms up
                console.act("next page" if i else "warm-up", "go_to", lambda: page.click("#page-next"),
                            console.current(f"{i + 2} / {pages}"))
            for i in range(args.repeat):
                target = 5000 - i
                page.fill("#page-jump", str(target))
                page.wait_for_timeout(400)  # set_jump_to has reached the server
                console.act("jump to page 5,000", "jump", lambda: page.press("#page-jump", "Enter"),
                            console.current(f"{target} / {pages}"))
            for i in range(args.repeat * 3):  # ascend, descend, the default order, ...
                order = ("ascending", "descending", "default order")[i % 3]
                console.act(f"sort on name: {order}", "sort", lambda: page.click("#sort-name"),
                            console.current("1 / "))
            page.click("#search-field")
            page.get_by_role("option", name="Name", exact=True).click()
            page.wait_for_timeout(400)
            for value in SEARCHES[:args.repeat]:
                console.act("search on name", "search", lambda v=value: page.fill("#search-value", v))
            del console.samples["warm-up"]
            return console.samples, token
        finally:
            browser.close()


# --- the service in this process --------------------------------------------------------------------------


def in_process(token: str, org: str, runs: int) -> list[tuple[str, float, float]]:
    from iam_console.core import crud
    from iam_console.core.access import Actor
    from iam_console.db import session_scope
    from iam_console.identity.ui.users import USERS
    from iam_console.signin import auth
    from iam_console.ui.state.listing import _display

    def service(params: dict, full: bool):
        def call():
            with session_scope() as db:
                found = auth.account_for_token(db, token)
                actor = Actor(user=found[0])
                page = crud.list_records(db, actor, USERS.kind, params, owner=org, organization="")
                if full:
                    [_display(USERS, row, actor.id) for row in page.rows]
            assert page.total >= 1
        return call

    cases = {
        "page 2 + total": {"p": "2", "pageSize": "20"},
        "page 5,000 + total": {"p": "5000", "pageSize": "20"},
        "sorted on name, page 1": {"p": "1", "pageSize": "20", "sortField": "name", "sortOrder": "ascend"},
        "sorted on name desc, page 1": {"p": "1", "pageSize": "20", "sortField": "name", "sortOrder": "descend"},
        "search name user0012345": {"p": "1", "pageSize": "20", "field": "name", "value": "user0012345"},
    }
    figures = []
    for label, params in cases.items():
        measured = []
        for full in (False, True):
            measured.append(timed(service(params, full), runs)[0])
        figures.append((label, *measured))
    return figures


def main() -> None:
    args = parse()
    url = prepare_database(args)
    import list_users

    org = list_users.ORG
    print(f"database: {url.split('@')[-1]}  users: {args.users:,}  load average before: {load()}", flush=True)
    try:
        with tempfile.TemporaryDirectory(prefix="console-paging-") as workdir:
            server = OwnServer(Path(workdir), ADMIN_PASSWORD, database_url=url)
            started = time.perf_counter()
            server.start()
            print(f"server up on port {server.port} ({time.perf_counter() - started:.0f} s)", flush=True)
            try:
                samples, token = drive(server, args, org)
            finally:
                server.stop()
                if args.log:
                    shutil.copyfile(server.log_path, args.log)
        print(f"load average after the browser run: {load()}")
        print("\nserver time of each action, ms: Playwright's frame events | stamps in the page")
        print(f"{'action':<28}{'n':>3}{'median':>8}{'p95':>8}{'max':>8}{'/100ms':>8} |{'median':>8}{'p95':>8}"
              f"{'max':>8}{'/100ms':>8}{'delta':>9}")
        for label, values in samples.items():
            driver, page = [v[0] for v in values], [v[1] for v in values]
            (median, p95), (page_median, page_p95) = stats(driver), stats(page)
            size = statistics.median(v[2] for v in values)
            print(f"{label:<28}{len(values):>3}{median:>8.1f}{p95:>8.1f}{max(driver):>8.1f}"
                  f"{median / TARGET_MS:>8.2f} |{page_median:>8.1f}{page_p95:>8.1f}{max(page):>8.1f}"
                  f"{page_median / TARGET_MS:>8.2f}{size:>7.0f} B")
        print("in the page, in order: " + "; ".join(
            f"{label}: " + " ".join(f"{v[1]:.0f}" for v in values) for label, values in samples.items()
            if label != "next page"))
        over = [label for label, values in samples.items()
                if max(stats([v[0] for v in values])[0], stats([v[1] for v in values])[0]) > TARGET_MS]
        print(f"verdict: {'every median within' if not over else 'over'} the {TARGET_MS} ms bound"
              + (f": {', '.join(over)}" if over else ""))
        print(f"\nin this process, ms ({args.runs} runs, median): crud.list_records"
              " | + session lookup and display rows")
        for label, bare, full in in_process(token, org, args.runs):
            print(f"  {label:<30}{bare:>8.1f}{full:>10.1f}")
        print(f"load average at the end: {load()}")
    finally:
        if args.postgres and not args.keep:
            drop_database()


if __name__ == "__main__":
    main()
