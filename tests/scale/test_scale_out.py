"""Two servers of the console on one PostgreSQL database and one Redis, behind one origin.

The servers run the production command (`python -m iam_console.serve`, docs/deployment.md) on
ports of their own, A with one worker process and B with two; the browser and the HTTP clients
reach them through a switchable proxy (tests/scale/proxy.py) that is the origin the front end was
built for, as a load balancer would be.
Each test proves that something kept by one server is seen by the other: the session, the failed
sign-in count, the webhook outbox, the scheduler's claims, and the console's state (in Redis).

The front end is built once for the proxy's origin in the project's `.web/`, so this file runs on
its own (`make test` runs it after the browser tests; docs/architecture.md, "Tests")."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa
from playwright.sync_api import expect
from sqlmodel import Session, select

from tests.api.test_migrations import POSTGRES, _reachable
from tests.api.test_syncers import COLUMNS, _people
from tests.conftest import require_service
from tests.e2e.conftest import (
    ACME_BOSS,
    ADMIN,
    LOG_TAIL_LINES,
    PROJECT_DIR,
    TRACK_SOCKET,
    VENV_BIN,
    Account,
    Server,
    Visitor,
    _free_port,
    _seed,
    _server_env,
    _stop,
    _tail,
    wait_serving,
)
from tests.e2e.steps import save
from tests.scale.proxy import SwitchProxy
from tests.sinks import HttpSink

REDIS = ("127.0.0.1", 6379)
REDIS_DB = 11  # a database number of its own, emptied before and after
TICK_SECONDS = 1  # the servers' scheduler tick (IAM_SCHEDULER_TICK_SECONDS)
WORKERS = {"A": 1, "B": 2}  # B runs two worker processes: three schedulers and delivery workers in all
SETTLE_SECONDS = 5  # long enough for several ticks and delivery polls on both servers
BUILD_TIMEOUT = 600
# counts the websocket's openings, on top of the browser tests' open/closed flag
COUNT_OPENINGS = """
(() => {
  const Tracked = window.WebSocket;
  window.__opened = 0;
  window.WebSocket = class extends Tracked {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { window.__opened += 1; });
    }
  };
})();
"""


def _redis_answers() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=2) as connection:
            connection.sendall(b"PING\r\n")
            return connection.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _redis_keys(pattern: str = "*") -> list[bytes]:
    import redis

    client = redis.Redis(host=REDIS[0], port=REDIS[1], db=REDIS_DB)
    try:
        return client.keys(pattern)
    finally:
        client.close()


def _flush_redis() -> None:
    import redis

    client = redis.Redis(host=REDIS[0], port=REDIS[1], db=REDIS_DB)
    try:
        client.flushdb()
    finally:
        client.close()


@dataclass
class Cluster:
    origin: str
    proxy: SwitchProxy
    servers: dict[str, Server]
    processes: dict[str, subprocess.Popen]
    database_url: str
    engine: sa.Engine
    tmp: Path
    clients: list[httpx.Client] = field(default_factory=list)

    def client(self, name: str) -> httpx.Client:
        """An HTTP client straight to one server (not through the proxy), sending the console's
        Origin as its page does: the CSRF guard refuses a cookie's write without it."""
        created = httpx.Client(base_url=self.servers[name].base_url, timeout=30, headers={"Origin": self.origin})
        self.clients.append(created)
        return created

    def stop(self, name: str) -> None:
        _stop(self.processes[name])

    def db(self) -> Session:
        return Session(self.engine, expire_on_commit=False)


def _run(command: list[str], env: dict[str, str], timeout: float, what: str) -> None:
    done = subprocess.run(command, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(f"{what} failed ({done.returncode}):\n"
                    + "\n".join((done.stdout + done.stderr).splitlines()[-LOG_TAIL_LINES:]))


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    require_service(_reachable(f"{POSTGRES}/test"), "PostgreSQL on 127.0.0.1:5432")
    require_service(_redis_answers(), "a Redis server on 127.0.0.1:6379")
    tmp = tmp_path_factory.mktemp("iam-scale")
    name = f"iam_scale_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{POSTGRES}/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    database_url = f"{POSTGRES}/{name}"
    _flush_redis()
    origin_port = _free_port()
    origin = f"http://localhost:{origin_port}"
    ports = {"A": _free_port(), "B": _free_port()}
    processes: dict[str, subprocess.Popen] = {}
    engine = sa.create_engine(database_url)
    python = str(VENV_BIN / "python")

    def env_for(port: int, workers: int = 1) -> dict[str, str]:
        env = _server_env(port, database_url, tmp / "files")
        env.update(IAM_ORIGIN=origin, REDIS_URL=f"redis://{REDIS[0]}:{REDIS[1]}/{REDIS_DB}",
                   IAM_SCHEDULER_TICK_SECONDS=str(TICK_SECONDS), IAM_EXTRA_PAGES="", IAM_WORKERS=str(workers))
        return env

    try:
        _run([python, "-m", "iam_console.startup"], env_for(ports["A"]), 180, "iam_console.startup")
        _seed(database_url)
        # one front end for both servers: it bakes in the one origin, the proxy's
        _run([python, "-m", "iam_console.serve", "build"], env_for(ports["A"]), BUILD_TIMEOUT, "the front end's build")
        servers = {}
        for label, port in ports.items():
            log_path = tmp / f"server-{label}.log"
            with log_path.open("wb") as log:
                processes[label] = subprocess.Popen(
                    [python, "-m", "iam_console.serve"], cwd=PROJECT_DIR, env=env_for(port, WORKERS[label]), stdout=log,
                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
            servers[label] = Server(f"http://localhost:{port}", port, log_path, database_url)
        for label, running in servers.items():
            wait_serving(processes[label], running, timeout=120)
        proxy = SwitchProxy(ports, "A")
        proxy.bind(origin_port)
        with proxy:
            made = Cluster(origin, proxy, servers, processes, database_url, engine, tmp)
            try:
                yield made
            finally:
                for client in made.clients:
                    client.close()
    finally:
        for process in processes.values():
            _stop(process)
        engine.dispose()
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()
        _flush_redis()


@pytest.fixture(autouse=True)
def _logs_on_failure(request):
    """The servers' log tails in a failing test's report (rep_call: tests/scale/conftest.py)."""
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "cluster" in request.fixturenames:
        made = request.getfixturevalue("cluster")
        for label, running in made.servers.items():
            print(f"\n--- server {label} log tail ({running.log_path}) ---\n{_tail(running.log_path, 40)}")


def _login(client: httpx.Client, account: Account, password: str = "") -> dict:
    return client.post("/api/login", json={
        "application": "", "organization": account.organization, "username": account.username,
        "password": password or account.password, "autoSignin": True, "type": "login", "signinMethod": "Password",
    }).json()


def _signed_in(client: httpx.Client, account: Account) -> None:
    answer = _login(client, account)
    assert answer["status"] == "ok", answer


def _wait(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout} s")
        time.sleep(0.2)


def _user(cluster: Cluster, organization: str, password: str) -> Account:
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    name = f"u{uuid.uuid4().hex[:8]}"
    with cluster.db() as db:
        db.add(User(owner=organization, name=name, uuid=str(uuid.uuid4()), type="normal-user", display_name=name,
                    password=hash_password(password, "argon2id"), password_type="argon2id",
                    signup_application="app-built-in"))
        db.commit()
    return Account(organization, name, password, name)


@contextlib.contextmanager
def _browser_page(browser, cluster: Cluster):
    context = browser.new_context(base_url=cluster.origin, viewport={"width": 1280, "height": 800})
    context.set_default_timeout(20_000)
    context.add_init_script(TRACK_SOCKET)
    context.add_init_script(COUNT_OPENINGS)
    try:
        page = context.new_page()
        answer = page.request.post("/api/login", data={
            "application": "", "organization": ADMIN.organization, "username": ADMIN.username,
            "password": ADMIN.password, "autoSignin": True, "type": "login", "signinMethod": "Password"})
        assert answer.ok and answer.json()["status"] == "ok", answer.text()
        yield page
    finally:
        context.close()


def test_a_session_made_on_one_server_works_on_the_other(cluster, browser):
    on_a, on_b = cluster.client("A"), cluster.client("B")
    refused = on_b.get("/api/get-account").json()
    assert refused["status"] == "error", refused  # B does not know this client yet

    _signed_in(on_a, ADMIN)
    on_b.cookies.update(on_a.cookies)
    account = on_b.get("/api/get-account").json()
    assert account["status"] == "ok", account
    assert account["data"]["owner"] == "built-in" and account["data"]["name"] == "admin"

    # the console: signed in through the proxy while it points at A, a page served by B
    cluster.proxy.switch("A")
    with _browser_page(browser, cluster) as page:
        cluster.proxy.switch("B")
        before = cluster.proxy.connections["B"]
        Visitor(page)("/account")
        expect(page.locator("#account-name")).to_have_text(ADMIN.display_name)
        assert cluster.proxy.connections["B"] > before
    cluster.proxy.switch("A")


def test_a_lockout_reached_on_one_server_holds_on_the_other(cluster):
    from iam_console.core import builtin as b

    account = _user(cluster, "acme", "Scale-pass-1")
    on_a, on_b = cluster.client("A"), cluster.client("B")
    answers = [_login(on_a, account, "Wrong-pass-1") for _ in range(b.DEFAULT_FAILED_SIGNIN_LIMIT)]
    assert all(a["status"] == "error" for a in answers), answers
    assert "too many times" in answers[-1]["msg"], answers[-1]

    # the right password, on the other server: still frozen
    answer = _login(on_b, account)
    assert answer["status"] == "error", answer
    assert answer["msg"].startswith("You have entered the wrong password or code too many times"), answer
    assert "get-account" not in str(on_b.cookies)


def test_each_webhook_event_is_delivered_once_though_both_servers_deliver(cluster):
    from iam_console.models import Webhook, WebhookEvent

    sign_ins = 6
    with HttpSink() as sink:
        hook = f"scale-hook-{uuid.uuid4().hex[:6]}"
        with cluster.db() as db:
            db.add(Webhook(owner="admin", name=hook, organization="acme", url=f"{sink.url}/hook", method="POST",
                           content_type="application/json", events=["login"], is_enabled=True,
                           secret="scale-secret", max_retries=3, retry_interval=60))
            db.commit()
        # records written on both servers, alternately; each server's delivery worker runs
        for index in range(sign_ins):
            _signed_in(cluster.client("AB"[index % 2]), ACME_BOSS)

        _wait(lambda: len(sink.calls) >= sign_ins, 30, f"{sign_ins} deliveries")
        time.sleep(SETTLE_SECONDS)  # both workers poll every second: a second delivery would come now
        assert len(sink.calls) == sign_ins, [c.body[:120] for c in sink.calls]
        assert len({c.body for c in sink.calls}) == sign_ins  # six distinct records, none twice
    with cluster.db() as db:
        events = db.exec(select(WebhookEvent).where(WebhookEvent.webhook == f"admin/{hook}")).all()
    assert len(events) == sign_ins
    assert {e.state for e in events} == {"Success"} and {e.attempt_count for e in events} == {1}


def test_a_scheduled_sync_runs_once_per_interval_across_both_servers(cluster, tmp_path):
    from iam_console.models import Record, Syncer, User

    upstream = tmp_path / "upstream.db"
    upstream_engine = sa.create_engine(f"sqlite:///{upstream}")
    _people(upstream_engine)
    upstream_engine.dispose()
    admin = cluster.client("A")
    _signed_in(admin, ADMIN)
    organization = f"scale{uuid.uuid4().hex[:6]}"
    assert admin.post("/api/add-organization", json={
        "owner": "admin", "name": organization, "passwordType": "argon2id"}).json()["status"] == "ok"
    name = f"scale-syncer-{uuid.uuid4().hex[:6]}"
    added = admin.post("/api/add-syncer", json={
        "owner": "admin", "name": name, "organization": organization, "type": "Database", "table": "people",
        "tableColumns": COLUMNS, "databaseType": "sqlite3", "database": str(upstream), "syncInterval": 1,
        "isEnabled": True}).json()
    assert added["status"] == "ok", added

    def runs() -> int:
        with cluster.db() as db:
            rows = db.exec(select(Record.object).where(Record.action == "run-syncer")).all()
        return sum(1 for obj in rows if f'"admin/{name}"' in obj)

    def pk_and_last():
        with cluster.db() as db:
            row = db.exec(select(Syncer).where(Syncer.name == name)).one()
            return row.pk, row.last_sync

    _wait(lambda: runs() >= 1, 30, "the first scheduled run")
    time.sleep(SETTLE_SECONDS)  # several ticks of both servers within the 1-minute interval
    assert runs() == 1
    with cluster.db() as db:
        users = db.exec(select(User.name).where(User.owner == organization)).all()
    assert sorted(users) == ["alice", "bob", "carol"]  # came over once

    # a minute later (lastSync moved back by the interval): one more run, not two
    pk, last = pk_and_last()
    with cluster.db() as db:
        db.exec(sa.update(Syncer).where(Syncer.pk == pk).values(last_sync=last - timedelta(minutes=1, seconds=1)))
        db.commit()
    _wait(lambda: runs() >= 2, 30, "the second scheduled run")
    time.sleep(SETTLE_SECONDS)
    assert runs() == 2


def test_the_console_keeps_working_when_its_websocket_moves_to_the_other_server(cluster, browser):
    from iam_console.models import Group

    group = f"scale-{uuid.uuid4().hex[:6]}"
    with cluster.db() as db:
        db.add(Group(owner="acme", name=group, display_name=group))
        db.commit()
    cluster.proxy.switch("A")
    with _browser_page(browser, cluster) as page:
        Visitor(page)(f"/groups/acme/{group}")
        expect(page.locator("#field-displayName")).to_have_value(group)
        assert page.evaluate("window.__opened") == 1
        # the page's state is in the shared Redis (under the browser tab's token), not in A
        token = page.evaluate("window.sessionStorage.getItem('token')")
        assert token and _redis_keys(f"{token}*"), (token, _redis_keys()[:10])

        # A leaves: the proxy sends everything to B and A's connections (the websocket) drop
        cluster.proxy.switch("B")
        cluster.stop("A")
        cluster.proxy.drop()
        page.wait_for_function("window.__opened >= 2 && window.__e2eSocketOpen === true")

        # the page still edits and saves: B serves it from the state A left in Redis
        page.fill("#field-displayName", "Edited through B")
        save(page)
        expect(page.locator("#field-displayName")).to_have_value("Edited through B")
    with cluster.db() as db:
        stored = db.exec(select(Group).where(Group.owner == "acme", Group.name == group)).one()
    assert stored.display_name == "Edited through B"
    assert cluster.processes["A"].poll() is not None  # A really is gone
