"""Token grants: the password and client_credentials grants a second on one
worker, beside the raw cost of the cryptography each must do, measured in the
same run.

Targets (docs/performance.md, 'Tokens'): the password grant reaches >= 75% of the raw
argon2id verification rate with the same hash parameters; client_credentials
with the default cert (RS256, 4096 bits) >= 75% of the raw signing rate; with
an RS256-2048 or ES256 cert, >= 300 grants a second on one worker.

A fresh database (SQLite in a temporary directory, or the PostgreSQL database
at --url) is migrated and given its first-start data, an organization with one
user (argon2id, the default parameters) and three applications allowing the
password, client_credentials and refresh_token grants: one on cert-built-in
(RS256-4096), one on a new RS256-2048 cert, one on a new ES256 cert. The
server is the API served as production serves it (granian; `--server uvicorn`
for uvicorn), one worker, pinned to core 0; the
load generator (threads, one keep-alive httpx client each) runs on core 1.
Around each scenario's load (half before, half after), while the server is
idle, this process moves to core 0 and measures the raw rate there: argon2id
verification of the user's own hash (services.passwords.verify_password), or
PyJWT signing of the same claims the application's token carries with the
cert's (parsed) key.

Rates are counted per CPU-second of the process doing the work (the server's
from psutil, this process's from time.process_time), beside the wall-clock
grants a second: on a machine that other work shares, a CPU-second is still
a CPU-second, while the wall clock counts the time the others took. On an
otherwise idle machine the server uses ~100% of its core and the two agree.
Printed per scenario: grants a second (wall clock), the server's CPU share,
grants per server CPU-second, the raw rate per CPU-second, their ratio, the
target and the verdict (on the CPU-second figures), and the CPU the load
generator and every other process used meanwhile: an `others` column far from
0% marks a disturbed run. The last scenario, an unknown grant type refused by
the same endpoint (HTTP, middleware, form parsing, no database), is the floor
any grant pays. With --rounds N every scenario runs N times, interleaved, and
the verdict is on the medians.

    .venv/bin/python bench/oauth_grants.py [--seconds 10] [--connections 4] [--rounds 3] [--only ES256]
    createdb -U postgres -h 127.0.0.1 iam_grants   # then:
    .venv/bin/python bench/oauth_grants.py --url postgresql+psycopg://postgres@127.0.0.1:5432/iam_grants

With --url, PostgreSQL runs unpinned and its CPU counts under `others`, not
the server's: the per-CPU-second figures then leave the database's work out.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORG = "bench-grants"
USER, PASSWORD = "alice", "bench-grant-password-1"
GRANTS = ["password", "client_credentials", "refresh_token"]
SERVER_CORE, CLIENT_CORE = 0, 1
SERVER = "granian"  # set from --server
TOKEN_PATH = "/api/login/oauth/access_token"


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="", help="a PostgreSQL database to use instead of a fresh SQLite file")
    parser.add_argument("--seconds", type=float, default=10.0, help="load per scenario")
    parser.add_argument("--raw-seconds", type=float, default=4.0, help="raw measurement per scenario")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="repeat every scenario; the verdict is on medians")
    parser.add_argument("--only", default="", help="run the scenarios whose name contains this")
    parser.add_argument("--server", choices=("granian", "uvicorn"), default="granian",
                        help="granian is what `reflex run --env prod` serves the backend with")
    return parser.parse_args()


def pin(core: int) -> None:
    if hasattr(os, "sched_setaffinity") and core < (os.cpu_count() or 1):
        os.sched_setaffinity(0, {core})


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class App:
    name: str
    cert: str
    client_id: str
    client_secret: str


def seed(url: str) -> dict[str, App]:
    """Migrate, first-start data, the organization, its user, two certs and three applications."""
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.applications import certs
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate, session_scope
    from iam_console.identity.passwords import hash_password

    migrate(url)
    engine = make_engine(url)
    apps: dict[str, App] = {}
    with session_scope(engine) as db:
        ensure_first_start_data(db, "bench-admin-password")
        if db.exec(select(m.Organization).where(m.Organization.name == ORG)).first() is None:
            db.add(m.Organization(owner="admin", name=ORG, display_name="Bench grants", password_type="argon2id"))
            db.add(m.User(owner=ORG, name=USER, uuid=secrets.token_hex(16), display_name="Alice",
                          email="alice@example.com", password=hash_password(PASSWORD), password_type="argon2id"))
        for label, algorithm, bits in (("RS256-4096", "", 4096), ("RS256-2048", "RS256", 2048),
                                       ("ES256", "ES256", 256)):
            cert = "cert-built-in"
            if algorithm:
                cert = f"bench-{label.lower()}"
                if db.exec(select(m.Cert).where(m.Cert.owner == "admin", m.Cert.name == cert)).first() is None:
                    certificate, key = certs.generate(algorithm, bits, 1, cert)
                    db.add(m.Cert(owner="admin", name=cert, display_name=cert, scope="JWT", type="x509",
                                  crypto_algorithm=algorithm, bit_size=bits, expire_in_years=1,
                                  certificate=certificate, private_key=key))
            name = f"bench-grants-{label.lower()}"
            app = db.exec(select(m.Application).where(m.Application.owner == "admin",
                                                      m.Application.name == name)).first()
            if app is None:
                app = m.Application(owner="admin", name=name, display_name=name, organization=ORG, cert=cert,
                                    client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                                    grant_types=GRANTS, enable_password=True, token_format="JWT",
                                    token_signing_method="RS256", expire_in_hours=168, refresh_expire_in_hours=168)
                db.add(app)
            apps[label] = App(name, cert, app.client_id, app.client_secret)
    engine.dispose()
    return apps


# --- raw rates, on the server's core while it is idle ---

def rate(call, seconds: float) -> float:
    """Calls per CPU-second of this process (time.process_time): what another
    process on the same core takes does not count."""
    for _ in range(3):
        call()  # warm up
    count, started, deadline = 0, time.process_time(), time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        call()
        count += 1
    return count / (time.process_time() - started)


def raw_verify(url: str) -> callable:
    """argon2id verification of the user's stored hash, through the server's own function."""
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.db import make_engine, session_scope
    from iam_console.identity.passwords import verify_password

    engine = make_engine(url)
    with session_scope(engine) as db:
        user = db.exec(select(m.User).where(m.User.owner == ORG, m.User.name == USER)).one()
    engine.dispose()

    def call() -> None:
        assert verify_password(PASSWORD, user.password, user.password_type, user.password_salt)
    return call


def raw_sign(url: str, app: App) -> callable:
    """PyJWT signing, with the cert's parsed key, of the claims the application's own token carries."""
    import uuid

    import jwt
    from cryptography.hazmat.primitives import serialization
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.db import make_engine, session_scope
    from iam_console.models.base import utcnow
    from iam_console.oauth import jwt_tokens

    engine = make_engine(url)
    with session_scope(engine) as db:
        application = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        cert = jwt_tokens.signing_cert(db, application)
        algorithm = jwt_tokens.signing_algorithm(cert, application.token_signing_method)
        now = utcnow().replace(microsecond=0)
        grant = jwt_tokens.Grant(application=application, token_name=str(uuid.uuid4()), scope="", issued_at=now)
        claims = jwt_tokens.claims(db, grant, jwt_tokens.ACCESS, now)
    engine.dispose()
    key = serialization.load_pem_private_key(cert.private_key.encode(), password=None)

    def call() -> None:
        jwt.encode(claims, key, algorithm=algorithm, headers={"kid": cert.name})
    return call


# --- the server and the load ---

def start_server(url: str, port: int) -> subprocess.Popen:
    env = {**os.environ, "IAM_DATABASE_URL": url, "IAM_ORIGIN": f"http://127.0.0.1:{port}"}
    if SERVER == "granian":  # what `reflex run --env prod` serves the backend with
        command = [sys.executable, "-m", "granian", "--interface", "asgi", "--host", "127.0.0.1",
                   "--port", str(port), "--workers", "1", "--log-level", "warning", "iam_console.api.app:api"]
    else:
        command = [sys.executable, "-m", "uvicorn", "iam_console.api.app:api", "--host", "127.0.0.1",
                   "--port", str(port), "--workers", "1", "--log-level", "warning", "--no-access-log"]
    server = subprocess.Popen(command, cwd=ROOT, env=env, preexec_fn=lambda: pin(SERVER_CORE))
    import httpx
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/.well-known/openid-configuration", timeout=2).status_code == 200:
                return server
        except httpx.HTTPError:
            time.sleep(0.1)
        if server.poll() is not None:
            break
    server.kill()
    raise SystemExit("the server did not start")


@dataclass
class Load:
    answers: int  # answered as expected inside the window
    errors: list[str]
    elapsed: float
    server_cpu: float  # CPU-seconds the server used inside the window
    load_cpu: float  # and this process (the load generator)
    others_cpu: float  # and every other process on the machine


def cpu(process) -> float:
    """CPU-seconds of a process and its children (granian serves from a worker process)."""
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        try:
            times = each.cpu_times()
        except Exception:  # a child that just ended
            continue
        total += times.user + times.system
    return total


def machine_cpu() -> float:
    import psutil
    times = psutil.cpu_times()
    return times.user + times.nice + times.system + getattr(times, "irq", 0) + getattr(times, "softirq", 0)


def load(port: int, form: dict[str, str], seconds: float, connections: int, server, expect: int = 200,
         headers=None) -> Load:
    """POST the token request from `connections` threads, each on its own keep-alive
    connection, for `seconds`. `headers`: a function giving each request's own headers (a new
    DPoP proof each: bench/dpop_grants.py)."""
    import httpx
    import psutil

    def answered(response: httpx.Response) -> bool:
        return response.status_code == expect and (expect != 200 or "access_token" in response.json())

    done, errors = [0] * connections, []
    stop = threading.Event()

    def worker(index: int) -> None:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            while not stop.is_set():
                response = client.post(TOKEN_PATH, data=form, headers=headers() if headers else None)
                if answered(response):
                    done[index] += 1
                else:
                    errors.append(f"{response.status_code} {response.text[:200]}")
                    stop.set()

    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:  # warm up: keys, caches
        for _ in range(5):
            response = client.post(TOKEN_PATH, data=form, headers=headers() if headers else None)
            if not answered(response):
                return Load(0, [f"{response.status_code} {response.text[:200]}"], 1.0, 0.0, 0.0, 0.0)
    me = psutil.Process()
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(connections)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)  # every connection open and busy
    before = sum(done), time.perf_counter(), cpu(server), cpu(me), machine_cpu()
    time.sleep(seconds)
    after = sum(done), time.perf_counter(), cpu(server), cpu(me), machine_cpu()
    stop.set()
    for thread in threads:
        thread.join()
    server_cpu, load_cpu = after[2] - before[2], after[3] - before[3]
    return Load(after[0] - before[0], errors, after[1] - before[1], server_cpu, load_cpu,
                after[4] - before[4] - server_cpu - load_cpu)


@dataclass
class Scenario:
    label: str
    app: str
    grant: str
    raw: str  # "verify", "sign", or "" (no raw rate: the HTTP floor)
    min_ratio: float = 0.0
    min_rate: float = 0.0


SCENARIOS = [
    Scenario("password, RS256-4096", "RS256-4096", "password", "verify", min_ratio=0.75),
    Scenario("client_credentials, RS256-4096", "RS256-4096", "client_credentials", "sign", min_ratio=0.75),
    Scenario("client_credentials, RS256-2048", "RS256-2048", "client_credentials", "sign", min_rate=300),
    Scenario("client_credentials, ES256", "ES256", "client_credentials", "sign", min_rate=300),
    # the same endpoint refusing an unknown grant type: HTTP, middleware and form parsing, no database
    Scenario("HTTP floor (unknown grant)", "ES256", "bench-unknown", ""),
]


def judge(scenario: Scenario, per_cpu: float, ratio: float) -> tuple[str, str]:
    if scenario.min_ratio:
        return f">={scenario.min_ratio:.0%} raw", "pass" if ratio >= scenario.min_ratio else "FAIL"
    if scenario.min_rate:
        return f">={scenario.min_rate:g}/s", "pass" if per_cpu >= scenario.min_rate else "FAIL"
    return "", ""


def main() -> None:
    global SERVER
    args = parse()
    SERVER = args.server
    import statistics

    import psutil

    with tempfile.TemporaryDirectory(prefix="oauth-grants-") as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        os.environ["IAM_DATABASE_URL"] = url
        port = free_port()
        os.environ["IAM_ORIGIN"] = f"http://127.0.0.1:{port}"
        sys.path.insert(0, str(ROOT))
        print(f"database: {url.split('@')[-1]}  server on core {SERVER_CORE}, load on core {CLIENT_CORE}  "
              f"{args.connections} connections  {args.seconds:g} s a scenario", flush=True)
        apps = seed(url)
        raws = {"verify": lambda app: raw_verify(url), "sign": lambda app: raw_sign(url, app)}
        server = start_server(url, port)
        server_process = psutil.Process(server.pid)
        scenarios = [s for s in SCENARIOS if args.only in s.label]
        results: dict[str, list[tuple[float, float, float]]] = {s.label: [] for s in scenarios}
        header = (f"{'scenario':<32}{'grants/s':>9}{'server':>8}{'per CPU-s':>10}{'raw/CPU-s':>10}{'ratio':>7}"
                  f"{'target':>12}{'':>6}{'load':>6}{'others':>8}")
        try:
            for round_ in range(args.rounds):
                if args.rounds > 1:
                    print(f"round {round_ + 1}")
                print(header, flush=True)
                for scenario in scenarios:
                    app = apps[scenario.app]
                    call = raws[scenario.raw](app) if scenario.raw else None
                    pin(SERVER_CORE)  # the server is idle: its core measures the raw rate
                    before = rate(call, args.raw_seconds / 2) if call else 0.0
                    pin(CLIENT_CORE)
                    form = {"grant_type": scenario.grant, "client_id": app.client_id,
                            "client_secret": app.client_secret}
                    if scenario.grant == "password":
                        form |= {"username": USER, "password": PASSWORD}
                    measured = load(port, form, args.seconds, args.connections, server_process,
                                    expect=200 if scenario.raw else 400)
                    if measured.errors:
                        raise SystemExit(f"{scenario.label}: {measured.errors[0]}")
                    pin(SERVER_CORE)
                    after = rate(call, args.raw_seconds / 2) if call else 0.0
                    pin(CLIENT_CORE)
                    raw = (before + after) / 2
                    per_second = measured.answers / measured.elapsed
                    per_cpu = measured.answers / measured.server_cpu
                    ratio = per_cpu / raw if raw else 0.0
                    results[scenario.label].append((per_second, per_cpu, raw))
                    target, verdict = judge(scenario, per_cpu, ratio)
                    print(f"{scenario.label:<32}{per_second:>9.1f}{measured.server_cpu / measured.elapsed:>8.0%}"
                          f"{per_cpu:>10.1f}{raw or float('nan'):>10.1f}{ratio or float('nan'):>7.2f}{target:>12}"
                          f"{verdict:>6}{measured.load_cpu / measured.elapsed:>6.0%}"
                          f"{measured.others_cpu / measured.elapsed:>8.0%}", flush=True)
        finally:
            server.terminate()
            server.wait(10)
        if args.rounds > 1:
            print(f"\nmedians of {args.rounds} rounds\n{header}")
        verdicts = []
        for scenario in scenarios:
            runs = results[scenario.label]
            per_second, per_cpu, raw = (statistics.median(r[i] for r in runs) for i in range(3))
            ratio = statistics.median(r[1] / r[2] for r in runs) if raw else 0.0  # each round's own ratio
            target, verdict = judge(scenario, per_cpu, ratio)
            verdicts.append(verdict)
            if args.rounds > 1:
                print(f"{scenario.label:<32}{per_second:>9.1f}{'':>8}{per_cpu:>10.1f}{raw or float('nan'):>10.1f}"
                      f"{ratio or float('nan'):>7.2f}{target:>12}{verdict:>6}")
        print("all targets met" if "FAIL" not in verdicts else "some targets missed")


if __name__ == "__main__":
    main()
