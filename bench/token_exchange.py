"""Token exchange (RFC 8693) against plain client_credentials, in the same run: exchanges a
second on one worker beside client_credentials grants of the same application.

Target (docs/performance.md, 'Token exchange'): an exchange (verify the subject token, read its
row and user, build the user's claims, sign) reaches >= 40% of the client_credentials rate with
the same cert; with an actor token (one more token verified) >= 30%.

The setup is bench/oauth_grants.py's (a fresh SQLite database, or PostgreSQL at --url; the API
served by granian, one worker, pinned to core 0; the load on core 1, threads with keep-alive httpx
clients), its applications given the token exchange grant. The subject token is alice's, from the
password grant, taken once; the actor token is the application's client_credentials token. Each
scenario posts the same request for --seconds; rates are counted per wall-clock second and per
CPU-second of the server. With --rounds N every scenario runs N times, interleaved, and the
verdict is on the medians.

    .venv/bin/python bench/token_exchange.py [--seconds 8] [--connections 4] [--rounds 2] [--only ES256]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import oauth_grants as grants  # noqa: E402 (bench/ on the path first)

EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
CERTS = ("ES256", "RS256-4096")
TARGETS = {"exchange": 0.40, "exchange + actor": 0.30}


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="", help="a PostgreSQL database to use instead of a fresh SQLite file")
    parser.add_argument("--seconds", type=float, default=8.0, help="load per scenario")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1, help="repeat every scenario; the verdict is on medians")
    parser.add_argument("--only", default="", help="run the scenarios whose cert contains this")
    return parser.parse_args()


def allow_exchange(url: str, apps: dict[str, grants.App]) -> None:
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.db import make_engine, session_scope

    engine = make_engine(url)
    with session_scope(engine) as db:
        for app in apps.values():
            row = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
            row.grant_types = [*grants.GRANTS, EXCHANGE]
            db.add(row)
    engine.dispose()


def token(port: int, form: dict[str, str]) -> str:
    import httpx

    answer = httpx.post(f"http://127.0.0.1:{port}{grants.TOKEN_PATH}", data=form, timeout=30).json()
    return answer["access_token"]


def forms(port: int, app: grants.App) -> dict[str, dict[str, str]]:
    """The three requests of one application: client_credentials, an exchange, one with an actor."""
    client = {"client_id": app.client_id, "client_secret": app.client_secret}
    subject = token(port, {**client, "grant_type": "password", "username": grants.USER,
                           "password": grants.PASSWORD, "scope": "openid profile"})
    actor = token(port, {**client, "grant_type": "client_credentials"})
    exchange = {**client, "grant_type": EXCHANGE, "subject_token": subject, "subject_token_type": ACCESS,
                "scope": "openid"}
    return {"client_credentials": {**client, "grant_type": "client_credentials"}, "exchange": exchange,
            "exchange + actor": {**exchange, "actor_token": actor, "actor_token_type": ACCESS}}


def main() -> None:
    args = parse()
    import psutil

    with tempfile.TemporaryDirectory(prefix="token-exchange-") as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        os.environ["IAM_DATABASE_URL"] = url
        port = grants.free_port()
        os.environ["IAM_ORIGIN"] = f"http://127.0.0.1:{port}"
        print(f"database: {url.split('@')[-1]}  server on core {grants.SERVER_CORE}, load on core "
              f"{grants.CLIENT_CORE}  {args.connections} connections  {args.seconds:g} s a scenario", flush=True)
        apps = grants.seed(url)
        allow_exchange(url, apps)
        server = grants.start_server(url, port)
        server_process = psutil.Process(server.pid)
        grants.pin(grants.CLIENT_CORE)
        results: dict[tuple[str, str], list[tuple[float, float]]] = {}
        header = f"{'cert':<12}{'grant':<20}{'grants/s':>9}{'server':>8}{'per CPU-s':>10}{'vs cc':>7}{'others':>8}"
        try:
            requests = {cert: forms(port, apps[cert]) for cert in CERTS if args.only in cert}
            for round_ in range(args.rounds):
                print(f"round {round_ + 1}\n{header}", flush=True)
                for cert, by_grant in requests.items():
                    for grant, form in by_grant.items():
                        measured = grants.load(port, form, args.seconds, args.connections, server_process)
                        if measured.errors:
                            raise SystemExit(f"{cert} {grant}: {measured.errors[0]}")
                        per_second = measured.answers / measured.elapsed
                        per_cpu = measured.answers / measured.server_cpu
                        results.setdefault((cert, grant), []).append((per_second, per_cpu))
                        base = results[(cert, "client_credentials")][-1][1]
                        print(f"{cert:<12}{grant:<20}{per_second:>9.1f}"
                              f"{measured.server_cpu / measured.elapsed:>8.0%}{per_cpu:>10.1f}"
                              f"{per_cpu / base:>7.2f}{measured.others_cpu / measured.elapsed:>8.0%}", flush=True)
        finally:
            server.terminate()
            server.wait(10)
        print(f"\nmedians of {args.rounds} round(s)\n{header}{'target':>8}")
        missed = False
        for (cert, grant), runs in results.items():
            per_second, per_cpu = (statistics.median(r[i] for r in runs) for i in range(2))
            base = statistics.median(r[1] for r in results[(cert, "client_credentials")])
            target = TARGETS.get(grant)
            verdict = "" if target is None else "pass" if per_cpu / base >= target else "FAIL"
            missed |= verdict == "FAIL"
            print(f"{cert:<12}{grant:<20}{per_second:>9.1f}{'':>8}{per_cpu:>10.1f}{per_cpu / base:>7.2f}{'':>8}"
                  f"{f'>={target:.0%}' if target else '':>8} {verdict}")
        print("some targets missed" if missed else "all targets met")


if __name__ == "__main__":
    main()
