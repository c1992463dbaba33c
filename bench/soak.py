"""Soak: does the server's memory level off under mixed traffic, and what does a console session cost?

    .venv/bin/python bench/soak.py                    # 10 minutes against a server of its own
    .venv/bin/python bench/soak.py --minutes 3 --sessions 20
    .venv/bin/python bench/soak.py --url http://localhost:3000 --pid 1234 --password ...

By default the script builds the front end and starts the production command
(`python -m iam_console.serve`, one worker) on a free port with a scratch SQLite database; with
--url it drives a running server instead, and --pid names that server's main process (its
children, the workers, are measured with it).

Traffic, at once, for --minutes:
- API: a signed-in client reading users, organizations, applications, records, its account and
  the version, in turn, without pause;
- sign-ins: POST /api/login with the right password (a new session each time, hashed with the
  organization's argon2id), a wrong password for an unknown name, and a sign-out;
- console: headless Chromium, signed in, opening console pages one after another (lists, edit pages,
  the account page), each page's events and state deltas going over the websocket.

Every minute it prints the resident (RSS) and unique (USS) memory of each process of the server and
the requests done. After the warm-up (the first third of the run, at least one minute) memory
"levels off" when the last half of the samples grows by less than 2% of the worker's RSS.

Then the per-session cost: --sessions new browser contexts each open a console page and keep its
websocket open; the workers' RSS before and after, divided by the number of sessions (and again
after they close)."""

from __future__ import annotations

import argparse
import contextlib
import shutil
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import psutil
from own_server import OwnServer  # bench/own_server.py

ADMIN_PASSWORD = "Soak-admin-pass-1"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"]
CONSOLE_PAGES = ["/users", "/organizations", "/applications", "/records", "/account", "/roles", "/groups",
                 "/organizations/admin/built-in", "/users/built-in/admin", "/applications/admin/app-built-in"]
API_READS = ["/api/get-users?owner=built-in", "/api/get-organizations?owner=admin", "/api/get-applications?owner=admin",
             "/api/get-records?pageSize=20&p=1", "/api/get-account", "/api/get-version-info"]
SOCKET_OPEN = """
(() => {
  const Native = window.WebSocket;
  window.__soakOpen = false;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { window.__soakOpen = true; });
      this.addEventListener("close", () => { window.__soakOpen = false; });
    }
  };
})();
"""


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--minutes", type=float, default=10, help="how long the mixed traffic runs")
    parser.add_argument("--sessions", type=int, default=30, help="console sessions opened for the per-session cost")
    parser.add_argument("--url", default="", help="a running server (else one is started)")
    parser.add_argument("--pid", type=int, default=0, help="with --url: the server's main process")
    parser.add_argument("--organization", default="built-in")
    parser.add_argument("--username", default="admin")
    parser.add_argument("--password", default=ADMIN_PASSWORD)
    parser.add_argument("--workers", type=int, default=1, help="IAM_WORKERS of the server started (needs REDIS_URL)")
    return parser.parse_args()


# --- the server -------------------------------------------------------------------------------------------


def memory(pid: int) -> list[tuple[int, str, float, float]]:
    """(pid, role, RSS MB, USS MB) of the process and its children."""
    root = psutil.Process(pid)
    rows = []
    for index, process in enumerate([root, *root.children(recursive=True)]):
        with contextlib.suppress(psutil.Error):
            info = process.memory_full_info()
            role = "main" if index == 0 else "worker"
            rows.append((process.pid, role, info.rss / 2**20, info.uss / 2**20))
    return rows


def describe(rows: list[tuple[int, str, float, float]]) -> str:
    return ", ".join(f"{role} {pid} RSS {rss:.0f} MB USS {uss:.0f} MB" for pid, role, rss, uss in rows)


def workers_rss(pid: int) -> float:
    """The RSS of the processes that serve: the workers, or the one process when it has none."""
    rows = memory(pid)
    served = [r for r in rows if r[1] == "worker"] or rows
    return sum(r[2] for r in served)


# --- the traffic ------------------------------------------------------------------------------------------


class Counts:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.api = self.sign_ins = self.pages = self.errors = 0

    def add(self, name: str, n: int = 1) -> None:
        with self.lock:
            setattr(self, name, getattr(self, name) + n)


def _login_body(args: argparse.Namespace, password: str, username: str = "") -> dict:
    return {"application": "", "organization": args.organization, "username": username or args.username,
            "password": password, "autoSignin": True, "type": "login", "signinMethod": "Password"}


def api_traffic(base: str, args: argparse.Namespace, stop: threading.Event, counts: Counts) -> None:
    with httpx.Client(base_url=base, timeout=30, headers={"Origin": base}) as client:
        client.post("/api/login", json=_login_body(args, args.password)).raise_for_status()
        index = 0
        while not stop.is_set():
            answer = client.get(API_READS[index % len(API_READS)])
            counts.add("api" if answer.status_code == 200 else "errors")
            index += 1


def sign_in_traffic(base: str, args: argparse.Namespace, stop: threading.Event, counts: Counts) -> None:
    unknown = f"soak-nobody-{uuid.uuid4().hex[:6]}"
    index = 0
    while not stop.is_set():
        # Origin as the console's page sends it: the CSRF guard refuses a cookie's write without it
        with httpx.Client(base_url=base, timeout=30, headers={"Origin": base}) as client:
            if index % 4 == 3:  # a wrong password, for a name no account has
                answer = client.post("/api/login", json=_login_body(args, "Wrong-pass-1", unknown))
            else:
                answer = client.post("/api/login", json=_login_body(args, args.password))
                if answer.json().get("status") == "ok":
                    client.post("/api/logout")
            counts.add("sign_ins" if answer.status_code == 200 else "errors")
        index += 1


def _signed_in_context(browser, base: str, args: argparse.Namespace):
    context = browser.new_context(base_url=base, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(30_000)
    context.add_init_script(SOCKET_OPEN)
    answer = context.request.post("/api/login", data=_login_body(args, args.password))
    assert answer.ok and answer.json().get("status") == "ok", answer.text()
    return context


def console_traffic(base: str, args: argparse.Namespace, stop: threading.Event, counts: Counts) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        context = _signed_in_context(browser, base, args)
        page = context.new_page()
        index = 0
        while not stop.is_set():
            try:
                page.goto(CONSOLE_PAGES[index % len(CONSOLE_PAGES)])
                page.wait_for_function("window.__soakOpen === true")
                page.wait_for_load_state("networkidle")
                counts.add("pages")
            except Exception as exc:  # a slow page on a busy machine: counted, and on to the next
                counts.add("errors")
                print(f"  console page {CONSOLE_PAGES[index % len(CONSOLE_PAGES)]}: {type(exc).__name__}", flush=True)
            index += 1
        context.close()
        browser.close()


def session_cost(base: str, args: argparse.Namespace, pid: int) -> tuple[float, float, float]:
    """(before, with the sessions open, after closing them), the workers' RSS in MB."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        warm = _signed_in_context(browser, base, args)  # the pages' first compile and caches, not counted
        warm_page = warm.new_page()
        warm_page.goto("/users")
        warm_page.wait_for_function("window.__soakOpen === true")
        time.sleep(3)
        before = workers_rss(pid)
        contexts = []
        for _ in range(args.sessions):
            context = _signed_in_context(browser, base, args)
            page = context.new_page()
            page.goto("/users")
            page.wait_for_function("window.__soakOpen === true")
            page.wait_for_load_state("networkidle")
            contexts.append(context)
        time.sleep(3)
        opened = workers_rss(pid)
        for context in contexts:
            context.close()
        time.sleep(5)
        after = workers_rss(pid)
        warm.close()
        browser.close()
    return before, opened, after


# --- the run ----------------------------------------------------------------------------------------------


def levels_off(samples: list[float], minutes: float) -> tuple[bool, float]:
    """Whether the samples after the warm-up stop growing: the growth over their last half, in MB."""
    warm_up = max(1, round(len(samples) / 3))
    later = samples[warm_up:]
    if len(later) < 2:
        return True, 0.0
    half = later[len(later) // 2:]
    growth = max(half) - half[0]
    return growth < 0.02 * samples[-1], growth


def main() -> None:
    args = parse()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} is missing: the console traffic needs Debian's chromium package")
    workdir = Path(tempfile.mkdtemp(prefix="iam-soak-"))
    server = None
    if args.url:
        if not args.pid:
            raise SystemExit("--url needs --pid (the server's main process) to measure its memory")
        base, pid = args.url.rstrip("/"), args.pid
    else:
        server = OwnServer(workdir, ADMIN_PASSWORD, workers=args.workers)
        print(f"building and starting the production command on {server.base} ...", flush=True)
        server.start()
        base, pid = server.base, server.process.pid
    try:
        time.sleep(5)
        print(f"idle: {describe(memory(pid))}", flush=True)
        stop, counts = threading.Event(), Counts()
        threads = [threading.Thread(target=work, args=(base, args, stop, counts), daemon=True)
                   for work in (api_traffic, sign_in_traffic, console_traffic)]
        for thread in threads:
            thread.start()
        samples: list[float] = []
        started = time.monotonic()
        end = started + args.minutes * 60
        minute = 0
        while time.monotonic() < end:
            time.sleep(max(0.0, min(60.0, end - time.monotonic())))
            minute += 1
            rows = memory(pid)
            samples.append(workers_rss(pid))
            print(f"minute {minute:>2}: {describe(rows)} | api {counts.api}, sign-ins {counts.sign_ins}, "
                  f"console pages {counts.pages}, errors {counts.errors}", flush=True)
        stop.set()
        for thread in threads:
            thread.join(120)
        flat, growth = levels_off(samples, args.minutes)
        total = counts.api + counts.sign_ins + counts.pages
        print(f"\n{total} requests and pages in {args.minutes:g} min; serving RSS {samples[0]:.0f} MB after the first "
              f"minute, {samples[-1]:.0f} MB at the end, peak {max(samples):.0f} MB")
        print(f"after the warm-up: {'levels off' if flat else 'KEEPS GROWING'} "
              f"(growth over the last half of the samples {growth:.1f} MB; limit 2% of RSS)")
        before, opened, after = session_cost(base, args, pid)
        per = (opened - before) / args.sessions
        print(f"\n{args.sessions} console sessions: serving RSS {before:.1f} MB -> {opened:.1f} MB open "
              f"({per:.2f} MB a session), {after:.1f} MB after closing them")
    finally:
        if server is not None:
            server.stop()
            print(f"(server log: {server.log_path})")
        shutil.rmtree(workdir / "files", ignore_errors=True)


if __name__ == "__main__":
    main()
