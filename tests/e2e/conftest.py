"""Fixtures of the browser tests: the production server, seeded accounts, Chromium.

The server is the real thing (the production command, `python -m iam_console.serve`
after its `build`: pages, websocket and /api/* on one port), started once per session on
a free port with its own SQLite database in a temporary directory. Each test gets a fresh browser
context, so no cookie or localStorage value leaks from one test to the next.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PROJECT_DIR = Path(__file__).resolve().parents[2]
VENV_BIN = PROJECT_DIR / ".venv" / "bin"
BUN_BIN = PROJECT_DIR / "bunpkg" / "node_modules" / ".bin"
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]

ADMIN_PASSWORD = "E2e-admin-pass-1"
ACME_PASSWORD = "E2e-acme-pass-1"
# a cold .web needs a full production build; a busy machine may take longer (IAM_E2E_STARTUP_TIMEOUT)
STARTUP_TIMEOUT = int(os.environ.get("IAM_E2E_STARTUP_TIMEOUT", "300"))
LOG_TAIL_LINES = 80


@dataclass(frozen=True)
class Account:
    organization: str
    username: str
    password: str
    display_name: str


ADMIN = Account("built-in", "admin", ADMIN_PASSWORD, "Admin")
ACME_BOSS = Account("acme", "boss", ACME_PASSWORD, "Acme Boss")
ACME_ALICE = Account("acme", "alice", ACME_PASSWORD, "Alice Liddell")


@dataclass(frozen=True)
class Server:
    base_url: str
    port: int
    log_path: Path
    database_url: str

    def url(self, path: str) -> str:
        return self.base_url + path

    def log_tail(self, lines: int = LOG_TAIL_LINES) -> str:
        return _tail(self.log_path, lines)


def _tail(path: Path, lines: int) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError as exc:
        return f"(no log: {exc})"


def _free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _get(url: str, timeout: float = 5) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except (urllib.error.URLError, OSError):
        return 0, ""


def _server_env(port: int, database_url: str, files_dir: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        PATH=os.pathsep.join([str(BUN_BIN), str(VENV_BIN), env.get("PATH", "")]),
        REFLEX_TELEMETRY_ENABLED="false",
        IAM_PORT=str(port),
        IAM_ORIGIN=f"http://localhost:{port}",
        IAM_DATABASE_URL=database_url,
        IAM_ADMIN_PASSWORD=ADMIN_PASSWORD,
        IAM_FILES_DIR=str(files_dir),
        IAM_OUTBOUND_ALLOW="127.0.0.1",  # the SMTP, SMS gateway and LDAP servers of the tests
        IAM_IP_LOOKUP_URL="https://ip-lookup.example/{ip}",  # the lists' client addresses link there
        # pages for widgets no screen shows yet; the console states it holds (state_probe)
        IAM_EXTRA_PAGES="tests.e2e.widget_pages,tests.e2e.field_pages,tests.e2e.state_probe",
    )
    return env


def _seed(database_url: str) -> None:
    """The organization acme with an organization admin and an ordinary user."""
    # Importing iam_console builds a default engine from the environment: point
    # it at the test database so that the import touches nothing of the project.
    os.environ.setdefault("IAM_DATABASE_URL", database_url)
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    engine = make_engine(database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(
                owner="admin", name="acme", display_name="Acme", password_type="argon2id",
                languages=["en", "zh"], nav_items=["all"], password_options=["AtLeast6"],
            ))
            for account, is_admin in ((ACME_BOSS, True), (ACME_ALICE, False)):
                db.add(User(
                    owner=account.organization, name=account.username, uuid=str(uuid.uuid4()),
                    type="normal-user", display_name=account.display_name, is_admin=is_admin,
                    password=hash_password(account.password, "argon2id"), password_type="argon2id",
                    signup_application="app-built-in",
                ))
            db.commit()
    finally:
        engine.dispose()


def _check_build_targets_port(server_base: str, port: int) -> str:
    """The production bundle bakes in the websocket URL: make sure it is ours.

    Another build in the same project directory rebuilds .web for its own
    port; a bundle pointing elsewhere would make every test talk to that server."""
    status, html = _get(server_base + "/")
    if status != 200 or "<html" not in html.lower():
        return f"GET / answered {status} without HTML"
    found = re.search(r"/assets/reflex-env-[\w-]+\.js", html)
    if not found:
        return ""  # bundle layout changed; nothing to check
    status, script = _get(server_base + found.group(0))
    if status == 200 and f"localhost:{port}/_event" not in script:
        return (f"the served bundle {found.group(0)} does not point at port {port} (another build in "
                f"{PROJECT_DIR} rebuilt .web concurrently?):\n{script[:400]}")
    return ""


@pytest.fixture(scope="session")
def google_stub():
    """Google's stand-in for the session's server: its ID token keys (IAM_GOOGLE_JWKS) and a fake
    of its One Tap script (IAM_GOOGLE_GSI_SCRIPT); tests/upstream_stub.py."""
    from tests.upstream_stub import UpstreamStub

    with UpstreamStub() as stub:
        yield stub


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, google_stub) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("iam-e2e")
    port = _free_port()
    database_url = f"sqlite:///{tmp / 'iam.db'}"
    env = {**_server_env(port, database_url, tmp / "files"), "IAM_GOOGLE_JWKS": google_stub.base + "/jwks",
           "IAM_GOOGLE_GSI_SCRIPT": google_stub.base + "/gsi/client"}
    log_path = tmp / "server.log"

    startup = subprocess.run([str(VENV_BIN / "python"), "-m", "iam_console.startup"], cwd=PROJECT_DIR, env=env,
                             capture_output=True, text=True, timeout=180)
    if startup.returncode != 0:
        pytest.fail(f"iam_console.startup failed ({startup.returncode}):\n"
                    + "\n".join((startup.stdout + startup.stderr).splitlines()[-LOG_TAIL_LINES:]))
    _seed(database_url)

    build = subprocess.run([str(VENV_BIN / "python"), "-m", "iam_console.serve", "build"], cwd=PROJECT_DIR,
                           env=env, capture_output=True, text=True, timeout=STARTUP_TIMEOUT)
    if build.returncode != 0:
        pytest.fail(f"the front end's build failed ({build.returncode}):\n"
                    + "\n".join((build.stdout + build.stderr).splitlines()[-LOG_TAIL_LINES:]))
    with log_path.open("wb") as log:
        process = subprocess.Popen([str(VENV_BIN / "python"), "-m", "iam_console.serve"], cwd=PROJECT_DIR, env=env,
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                   start_new_session=True)
    base_url = f"http://localhost:{port}"
    running = Server(base_url, port, log_path, database_url)
    try:
        wait_serving(process, running)
        mismatch = _check_build_targets_port(base_url, port)
        if mismatch:
            pytest.fail(mismatch)
        yield running
    finally:
        _stop(process)


def wait_serving(process: subprocess.Popen, running: Server, timeout: float = STARTUP_TIMEOUT) -> None:
    """Wait until the server answers /ping and serves the console's HTML; fail with its log's tail."""
    deadline = time.monotonic() + timeout
    problem = "timed out"
    while True:
        if process.poll() is not None:
            problem = f"the server exited with code {process.returncode}"
            break
        if _get(running.base_url + "/ping")[0] == 200:
            status, html = _get(running.base_url + "/")
            if status == 200 and "<html" in html.lower():
                return
        if time.monotonic() > deadline:
            break
        time.sleep(1)
    pytest.fail(f"the IAM console did not start on port {running.port} within {timeout} s: {problem}\n"
                f"--- last {LOG_TAIL_LINES} lines of {running.log_path} ---\n{running.log_tail()}")


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)
    else:
        # the leader is gone; its children (bun, workers) may still be in the group
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)


@pytest.fixture(scope="session")
def engine(server: Server):
    """An engine on the server's database, for tests that arrange records directly."""
    from iam_console.db import make_engine

    created = make_engine(server.database_url)
    yield created
    created.dispose()


@contextlib.contextmanager
def chromium() -> Iterator:
    """Debian's Chromium under Playwright (skipped without it, a failure under CI)."""
    if not Path(CHROMIUM).exists():
        reason = f"{CHROMIUM} is missing: the browser tests need Debian's chromium package"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="session")
def browser():
    with chromium() as launched:
        yield launched


# Reflex talks to the server over a websocket that opens once React has
# hydrated the page: before that a click on a button does nothing. Tracking the
# socket gives the tests a reliable "the page is live" signal.
TRACK_SOCKET = """
(() => {
  const Native = window.WebSocket;
  window.__e2eSocketOpen = false;
  class Tracked extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { window.__e2eSocketOpen = true; });
      this.addEventListener("close", () => { window.__e2eSocketOpen = false; });
    }
  }
  window.WebSocket = Tracked;
})();
"""


def console_context(browser, base_url: str):
    """A fresh browser context on the console: the viewport, the waits and the socket tracking
    every browser test uses."""
    created = browser.new_context(base_url=base_url, viewport={"width": 1280, "height": 800})
    created.set_default_timeout(15_000)
    created.add_init_script(TRACK_SOCKET)
    return created


@pytest.fixture
def context(browser, server):
    created = console_context(browser, server.base_url)
    try:
        yield created
    finally:
        created.close()


@pytest.fixture
def page(context):
    return context.new_page()


class Visitor:
    """Opens paths and waits until the page is live (hydrated, websocket open)."""

    def __init__(self, page) -> None:
        self.page = page

    def __call__(self, path: str):
        self.page.goto(path)
        self.live()
        return self.page

    def reload(self):
        self.page.reload()
        self.live()
        return self.page

    def live(self) -> None:
        self.page.wait_for_function("window.__e2eSocketOpen === true")


@pytest.fixture
def visit(page) -> Visitor:
    return Visitor(page)


@pytest.fixture(autouse=True)
def _server_log_on_failure(request):
    """Attach the server log's tail to a failing test's report."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "server" in request.fixturenames:
        running = request.getfixturevalue("server")
        sys.stderr.write(f"\n--- server log tail ({running.log_path}) ---\n{running.log_tail(40)}\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report


class Accounts:
    admin = ADMIN
    boss = ACME_BOSS
    alice = ACME_ALICE


@pytest.fixture
def accounts() -> type[Accounts]:
    return Accounts


@pytest.fixture
def api_login(page):
    """Sign in through the HTTP API within the page's context, so the cookie lands there."""

    def sign_in(account: Account, auto_signin: bool = True) -> None:
        response = page.request.post("/api/login", data={
            "application": "", "organization": account.organization, "username": account.username,
            "password": account.password, "autoSignin": auto_signin, "type": "login", "signinMethod": "Password",
        })
        assert response.ok, response.status
        body = response.json()
        assert body.get("status") == "ok", body

    return sign_in
