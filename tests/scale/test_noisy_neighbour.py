"""The noisy neighbour: nothing one organization does stalls another's requests (docs/security.md,
"Availability").

The server is the production command (`python -m iam_console.serve`, one worker process) on a
PostgreSQL database of its own. Organization A drives the slow paths: its Custom HTTP notification,
SMS and SMTP providers, its webhook and its LDAP directory each point at a slow receiver on
loopback (a SwitchProxy of tests/scale/proxy.py on hold in front of a real receiver: the
connection is accepted and nothing answers until the test releases it); its Casbin model matches
with `regexMatch` against the pattern ^(a+)+$ (exponential backtracking on a backtracking engine);
it uploads a 20,000-row workbook and signs a burst of client_credentials grants with an RS256-4096
cert. While each of A's calls is still pending, organization B's get-account, sign-in
(/api/login) and list call (get-users) must complete.

Everything is judged by order, never by a duration: a call's start and end are marks of one
counter, and "pending" means A's call was in the server's hands (it reached the held receiver,
or it was sent) and its answer had not come back. The waits are bounded by the server's own
limits (10 s to an outbound call, the enforcement budget) and by the clients' timeouts; each
receiver is released at the end of its step, whatever happened.

The front end is not exercised: a build already in .web (the browser tests', earlier in
`make test`) is served as it is, with IAM_ORIGIN set to the origin it was built for, as behind a
proxy; without one, the module builds its own."""

from __future__ import annotations

import contextlib
import itertools
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import sqlalchemy as sa

from iam_console.serve import built_origin
from tests import ldap_server
from tests.api.test_migrations import POSTGRES, _reachable
from tests.conftest import require_service
from tests.e2e.conftest import (
    ADMIN_PASSWORD,
    PROJECT_DIR,
    VENV_BIN,
    Server,
    _free_port,
    _server_env,
    _stop,
    _tail,
    wait_serving,
)
from tests.noisy_world import (
    DIRECTORY_USERS,
    LDAP_ID,
    PASSWORD,
    Receivers,
    Tenants,
    arrange,
    ok,
    receivers,
    regex_batch,
    sign_in,
    workbook_upload,
)
from tests.scale.test_scale_out import BUILD_TIMEOUT, _run

CLIENT_TIMEOUT = 60  # a safety net: every wait below ends on the server's own limits first
HEAVY_TIMEOUT = 300  # the same for A's CPU-heavy calls: a 20,000-row import on a busy machine
WORKBOOK_ROWS = 20_000
BURST_GRANTS, BURST_CONNECTIONS = 96, 8
CHEAP_REQUESTS = 100_000  # behind the pathological request in one batch-enforce: enough to last until the
# enforcement budget ends it (B's three calls, a sign-in among them, must not outrun it)
FLOOD = 80  # held directory reads at once: more than a worker pool's default 64 threads
SETTLE_BOUND = 15  # seconds for A's flood to settle before B starts anyway


# --- order ---------------------------------------------------------------------------------------

class Order:
    """One counter for every start and end: `mark()` is the next number."""

    def __init__(self) -> None:
        self._count = itertools.count(1)
        self._lock = threading.Lock()

    def mark(self) -> int:
        with self._lock:
            return next(self._count)


@dataclass
class Call:
    """A call running on a thread of its own: `sent` when it starts, `answered` when its answer
    (or its failure) came back."""

    order: Order
    what: str
    run: Callable[[], object]
    sent: int = 0
    answered: int = 0
    result: object = None
    error: BaseException | None = None
    _done: threading.Event = field(default_factory=threading.Event)

    def start(self) -> Call:
        self.sent = self.order.mark()
        threading.Thread(target=self._go, name=self.what, daemon=True).start()
        return self

    def _go(self) -> None:
        try:
            self.result = self.run()
        except BaseException as exc:  # kept for the assertion that reads it
            self.error = exc
        finally:
            self.answered = self.order.mark()
            self._done.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def wait(self) -> object:
        assert self._done.wait(HEAVY_TIMEOUT + 30), f"{self.what} never returned"
        if self.error is not None:
            raise AssertionError(f"{self.what} failed: {self.error!r}") from self.error
        return self.result


def _until(check: Callable[[], bool], what: str, bound: float = CLIENT_TIMEOUT) -> None:
    """Poll until `check()`; the bound only ends a test that would otherwise hang."""
    deadline = time.monotonic() + bound
    while not check():
        assert time.monotonic() < deadline, f"{what}: not within {bound} s"
        time.sleep(0.02)


# --- the server and the two organizations ---------------------------------------------------------

@dataclass
class World:
    server: Server
    origin: str
    order: Order
    found: Receivers
    tenants: Tenants
    clients: list[httpx.Client] = field(default_factory=list)
    b_boss: httpx.Client | None = None  # B's admin, signed in once

    @property
    def a(self) -> str:
        return self.tenants.a

    @property
    def b(self) -> str:
        return self.tenants.b

    def client(self) -> httpx.Client:
        """A client of the server sending the console's Origin, as its page does (the CSRF guard
        refuses a cookie's write without it)."""
        made = httpx.Client(base_url=self.server.base_url, timeout=CLIENT_TIMEOUT, headers={"Origin": self.origin})
        self.clients.append(made)
        return made

    def signed_in(self, organization: str, name: str, password: str = PASSWORD) -> httpx.Client:
        return sign_in(self.client(), organization, name, password)


@contextlib.contextmanager
def _scratch_database() -> Iterator[str]:
    require_service(_reachable(f"{POSTGRES}/test"), "PostgreSQL on 127.0.0.1:5432")
    name = f"iam_noisy_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{POSTGRES}/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    try:
        yield f"{POSTGRES}/{name}"
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        admin.dispose()


@contextlib.contextmanager
def _production_server(tmp: Path, database_url: str) -> Iterator[tuple[Server, str]]:
    """The production command, one worker; the front end already built in .web if there is one
    (IAM_ORIGIN is then the origin it was built for), else built here."""
    port = _free_port()
    env = _server_env(port, database_url, tmp / "files")
    env.update(IAM_EXTRA_PAGES="", IAM_WORKERS="1")
    python = str(VENV_BIN / "python")
    _run([python, "-m", "iam_console.startup"], env, 180, "iam_console.startup")
    origin = built_origin(PROJECT_DIR / ".web")
    if origin:
        env["IAM_ORIGIN"] = origin
    else:
        origin = env["IAM_ORIGIN"]
        _run([python, "-m", "iam_console.serve", "build"], env, BUILD_TIMEOUT, "the front end's build")
    log_path = tmp / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen([python, "-m", "iam_console.serve"], cwd=PROJECT_DIR, env=env, stdout=log,
                                   stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    running = Server(f"http://127.0.0.1:{port}", port, log_path, database_url)
    try:
        wait_serving(process, running, timeout=180)
        yield running, origin
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    if not ldap_server.available():
        pytest.skip("OpenLDAP's slapd is not installed")
    tmp = tmp_path_factory.mktemp("iam-noisy")
    with contextlib.ExitStack() as stack:
        database_url = stack.enter_context(_scratch_database())
        found = receivers(stack)
        server, origin = stack.enter_context(_production_server(tmp, database_url))
        made = World(server, origin, Order(), found, Tenants("", "", [], "", ("", "")))
        try:
            made.tenants = arrange(made.signed_in("built-in", "admin", ADMIN_PASSWORD), found)
            made.b_boss = made.signed_in(made.b, "boss")
            yield made
        finally:
            for client in made.clients:
                client.close()


@pytest.fixture(autouse=True)
def _log_on_failure(request):
    yield
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed and "world" in request.fixturenames:
        running = request.getfixturevalue("world").server
        print(f"\n--- server log tail ({running.log_path}) ---\n{_tail(running.log_path, 60)}")


# --- organization B: the calls that must get through ----------------------------------------------

def _quiet_calls(world: World) -> Call:
    """B's get-account, sign-in and get-users, one after another on a thread: each must answer ok."""
    boss = world.b_boss

    def run() -> list[int]:
        ends = []
        account = ok(boss.get("/api/get-account"))
        assert account["data"]["owner"] == world.b and account["data"]["name"] == "boss", account
        ends.append(world.order.mark())
        with httpx.Client(base_url=world.server.base_url, timeout=CLIENT_TIMEOUT,
                          headers={"Origin": world.origin}) as fresh:
            ok(fresh.post("/api/login", json={"organization": world.b, "username": "alice", "password": PASSWORD,
                                               "autoSignin": True, "type": "login"}))
        ends.append(world.order.mark())
        listed = ok(boss.get("/api/get-users", params={"owner": world.b}))
        assert {u["name"] for u in listed["data"]} == {"boss", "alice"}, listed
        ends.append(world.order.mark())
        return ends

    return Call(world.order, "B's get-account, sign-in and get-users", run)


def _assert_got_through(quiet: Call, pending_until: int, what: str) -> None:
    """Each of B's three calls ended before `pending_until`, the mark at which A's call was no
    longer pending."""
    ends = quiet.wait()
    names = ("get-account", "sign-in", "get-users")
    late = [name for name, end in zip(names, ends, strict=True) if end > pending_until]
    assert not late, f"B's {', '.join(late)} completed only after A's {what} was answered: it waited for A"


def _while_held(world: World, gate_name: str, what: str, noise: Callable[[], object],
                answered: Callable[[], bool] | None = None) -> object:
    """A's `noise` reaches the held receiver `gate_name`; B's calls run while it is held; then
    the receiver is released and A's call must complete. `answered` says when A's call is over
    (by default: its HTTP answer came back)."""
    gate = world.found.gates[gate_name]
    gate.hold()
    try:
        a_call = Call(world.order, what, noise).start()
        # a webhook's trigger answers at once: only its delivery reaches the receiver
        _until(lambda: gate.waiting > 0 or (a_call.done and answered is None), f"A's {what} reaching its receiver")
        assert gate.waiting > 0, f"A's {what} never reached its receiver: {a_call.error or a_call.result!r}"
        quiet = _quiet_calls(world).start()
        _until(lambda: quiet.done or (answered() if answered else a_call.done), f"B's calls during A's {what}")
        still_held = world.order.mark() if gate.waiting > 0 else 0  # 0: the delivery was over first
    finally:
        gate.release()
    result = a_call.wait()
    pending_until = a_call.answered if answered is None else still_held
    _assert_got_through(quiet, pending_until, what)
    return result


# --- the slow receivers ---------------------------------------------------------------------------

def test_send_notification_to_a_slow_receiver(world):
    boss = world.signed_in(world.a, "boss")
    before = len(world.found.sink.calls)
    answer = _while_held(world, "notification", "send-notification", lambda: boss.post(
        "/api/send-notification", json={"content": "Deploy done", "recipient": "ops"}))
    ok(answer)
    assert len(world.found.sink.calls) > before and world.found.sink.calls[-1].path == "/notify"


def test_send_sms_to_a_slow_gateway(world):
    boss = world.signed_in(world.a, "boss")
    answer = _while_held(world, "sms", "send-sms", lambda: boss.post(
        "/api/send-sms", json={"content": "Your parcel is here", "receivers": ["+15550123"]}))
    ok(answer)
    assert world.found.sink.wait_for("+15550123").path == "/sms"


def test_send_email_to_a_slow_smtp_server(world):
    boss = world.signed_in(world.a, "boss")
    to = f"reader-{uuid.uuid4().hex[:6]}@mail.test"
    answer = _while_held(world, "smtp", "send-email", lambda: boss.post(
        "/api/send-email", json={"title": "Hello", "content": "<p>News</p>", "sender": "A",
                                 "receivers": [to], "provider": f"{world.a}-mail"}))
    ok(answer)
    assert world.found.smtp.wait_for(to).message["Subject"] == "Hello"


def test_ldap_directory_read_from_a_slow_directory(world):
    boss = world.signed_in(world.a, "boss")
    answer = _while_held(world, "ldap", "get-ldap-users", lambda: boss.get(
        "/api/get-ldap-users", params={"id": f"{world.a}/{LDAP_ID}"}))
    assert len(ok(answer)["data"]["users"]) == DIRECTORY_USERS


def test_webhook_to_a_slow_receiver(world):
    """The delivery is A's slow call here: update-user answers at once, its event waits in the
    held receiver."""
    boss = world.signed_in(world.a, "boss")
    before = len([c for c in world.found.sink.calls if c.path == "/hook"])
    gate = world.found.gates["webhook"]

    def update() -> httpx.Response:
        return boss.post("/api/update-user", params={"id": f"{world.a}/boss"},
                         json={"owner": world.a, "name": "boss", "displayName": "Noisy Boss", "isAdmin": True})

    _while_held(world, "webhook", "webhook delivery", update, answered=lambda: gate.waiting == 0)
    _until(lambda: len([c for c in world.found.sink.calls if c.path == "/hook"]) > before, "the released delivery")


def test_many_held_calls_at_once(world):
    """A parks more directory reads on its slow directory than a worker pool has threads (a cap
    on A's concurrent calls may refuse some at once). Once each of them is held or answered, B's
    calls start, and must complete before any call still pending then is answered."""
    boss = world.signed_in(world.a, "boss")
    gate = world.found.gates["ldap"]
    gate.hold()
    flood: list[Call] = []
    try:
        flood = [Call(world.order, f"get-ldap-users #{i}", lambda: boss.get(
            "/api/get-ldap-users", params={"id": f"{world.a}/{LDAP_ID}"})).start() for i in range(FLOOD)]
        _until(lambda: gate.waiting > 0, "A's directory reads reaching the directory")
        # settled: every read held or answered; with a server that serves one at a time, never:
        # the bound then only says when B starts anyway
        with contextlib.suppress(AssertionError):
            _until(lambda: gate.waiting + sum(c.done for c in flood) == FLOOD, "A's reads settling", SETTLE_BOUND)
        quiet = _quiet_calls(world).start()
        pending = [c for c in flood if not c.done]
        _until(lambda: quiet.done or any(c.done for c in pending), "B's calls during A's flood")
    finally:
        gate.release()
    for call in flood:
        call.wait()  # answered: read, or refused by a cap on A's concurrent calls
    assert pending, "every one of A's reads was answered while the directory held them"
    _assert_got_through(quiet, min(c.answered for c in pending), f"{len(pending)} held directory reads")


# --- CPU-heavy calls ------------------------------------------------------------------------------

class _Sent:
    """A request body that marks when its last byte has been handed to the connection."""

    def __init__(self, body: bytes, sent: threading.Event) -> None:
        self.body, self.sent = body, sent

    def __iter__(self) -> Iterator[bytes]:
        for start in range(0, len(self.body), 65536):
            yield self.body[start:start + 65536]
        self.sent.set()


def _post_then(world: World, client: httpx.Client, path: str, what: str, body: bytes, content_type: str,
               wait: bool = True, **params) -> object:
    """A sends one POST of `body` (heavy on the CPU); B's calls start once all of it was sent, and must
    complete before A's answer. With `wait` false, A's answer is not waited for once B's calls are
    over (it must still be pending then); None is returned."""
    sent = threading.Event()

    def noise() -> httpx.Response:
        return client.post(path, params=params, content=_Sent(body, sent), timeout=HEAVY_TIMEOUT,
                           headers={"Content-Type": content_type, "Content-Length": str(len(body))})

    a_call = Call(world.order, what, noise).start()
    _until(lambda: sent.is_set() or a_call.done, f"A's {what} sent")
    quiet = _quiet_calls(world).start()
    if not wait:
        quiet.wait()
        over = world.order.mark()
        _assert_got_through(quiet, a_call.answered if a_call.done else over, what)
        return None
    result = a_call.wait()
    _assert_got_through(quiet, a_call.answered, what)
    return result


def test_pathological_regex_in_the_casbin_model(world):
    """The policy ^(a+)+$ against "a"*26+"!" backtracks for seconds on a backtracking engine;
    on a linear-time one it is quick, and the cheap requests behind it keep the batch in the
    server's hands (or its time budget ends it, with a clear refusal)."""
    boss = world.signed_in(world.a, "boss")
    answer = _post_then(world, boss, "/api/batch-enforce", "batch-enforce", regex_batch(CHEAP_REQUESTS),
                        "application/json", enforcerId=world.tenants.enforcer)
    body = answer.json()
    if body["status"] == "ok":
        assert body["data"] == [[False] * (1 + CHEAP_REQUESTS)], str(body)[:300]
    else:
        assert "too long" in body["msg"], body


def test_a_burst_of_rs256_4096_signatures(world):
    """BURST_GRANTS client_credentials grants on BURST_CONNECTIONS connections, each signed with
    the 4096-bit key; B's calls start once the first grant is answered (the burst is under way)
    and must complete before the last."""
    client_id, client_secret = world.tenants.client
    per_connection = BURST_GRANTS // BURST_CONNECTIONS
    first = threading.Event()

    def grants() -> int:
        with httpx.Client(base_url=world.server.base_url, timeout=CLIENT_TIMEOUT) as client:
            for _ in range(per_connection):
                answer = client.post("/api/login/oauth/access_token", data={
                    "grant_type": "client_credentials", "client_id": client_id, "client_secret": client_secret})
                assert answer.status_code == 200 and "access_token" in answer.json(), answer.text[:300]
                first.set()
        return per_connection

    burst = [Call(world.order, f"grants #{i}", grants).start() for i in range(BURST_CONNECTIONS)]
    _until(lambda: first.is_set() or any(c.done for c in burst), "the burst's first grant")
    quiet = _quiet_calls(world).start()
    assert sum(call.wait() for call in burst) == BURST_GRANTS
    _assert_got_through(quiet, max(c.answered for c in burst), "burst of RS256-4096 grants")


def test_a_large_workbook_upload(world):
    """Last of the module: the import goes on after B's calls are judged, and the server stopping
    at the module's end ends it (an import is one transaction: nothing is left half done)."""
    boss = world.signed_in(world.a, "boss")
    body, content_type = workbook_upload(WORKBOOK_ROWS)
    _post_then(world, boss, "/api/upload-users", "upload-users", body, content_type, wait=False)
