"""DPoP-bound client_credentials grants (RFC 9449) against plain ones, in the same run: what a
proof costs the token endpoint.

The database, applications and server are bench/oauth_grants.py's (a fresh SQLite file or the
PostgreSQL database at --url; the API served by granian, one worker, pinned to core 0; the load
from threads with keep-alive httpx clients on core 1). For each application (the default cert,
RS256-4096, and a generated ES256 cert) two scenarios run, interleaved round by round: plain
client_credentials, and the same grant with a new DPoP proof (ES256, made by the load generator
on its own core) on every request, which the server verifies, marks in the throttle table
(one more committed INSERT: the replay check every worker shares) and binds the token to.

Printed per scenario: grants a second (wall clock), the server's CPU share, grants per server
CPU-second, and the CPU of the load generator and of every other process (`others` far from 0%
marks a disturbed run); then, per application, the DPoP rate over the plain rate (per server
CPU-second, the medians with --rounds). No target: the figure is recorded in
docs/performance.md.

    .venv/bin/python bench/dpop_grants.py [--seconds 8] [--connections 4] [--rounds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import oauth_grants as grants  # noqa: E402  (the database, server and load of the token grants bench)

APPS = ("RS256-4096", "ES256")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="", help="a PostgreSQL database to use instead of a fresh SQLite file")
    parser.add_argument("--seconds", type=float, default=8.0, help="load per scenario")
    parser.add_argument("--connections", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3, help="repeat every scenario; the ratio is on medians")
    return parser.parse_args()


def proofs(port: int):
    """A function giving a new DPoP proof header for the token endpoint, by one ES256 key."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    public = jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    htu = f"http://127.0.0.1:{port}{grants.TOKEN_PATH}"
    header = {"typ": "dpop+jwt", "jwk": public}

    def next_proof() -> dict[str, str]:
        claims = {"jti": uuid.uuid4().hex, "htm": "POST", "htu": htu, "iat": int(time.time())}
        return {"DPoP": jwt.encode(claims, key, algorithm="ES256", headers=header)}
    return next_proof


def main() -> None:
    args = parse()
    import psutil

    with tempfile.TemporaryDirectory(prefix="dpop-grants-") as directory:
        url = args.url or f"sqlite:///{Path(directory) / 'bench.db'}"
        os.environ["IAM_DATABASE_URL"] = url
        port = grants.free_port()
        os.environ["IAM_ORIGIN"] = f"http://127.0.0.1:{port}"
        print(f"database: {url.split('@')[-1]}  server on core {grants.SERVER_CORE}, load on core "
              f"{grants.CLIENT_CORE}  {args.connections} connections  {args.seconds:g} s a scenario", flush=True)
        apps = grants.seed(url)
        server = grants.start_server(url, port)
        server_process = psutil.Process(server.pid)
        grants.pin(grants.CLIENT_CORE)
        per_cpu: dict[tuple[str, bool], list[float]] = {}
        per_second: dict[tuple[str, bool], list[float]] = {}
        header = f"{'scenario':<36}{'grants/s':>9}{'server':>8}{'per CPU-s':>10}{'load':>6}{'others':>8}"
        try:
            for round_ in range(args.rounds):
                print(f"round {round_ + 1}\n{header}", flush=True)
                for label in APPS:
                    app = apps[label]
                    form = {"grant_type": "client_credentials", "client_id": app.client_id,
                            "client_secret": app.client_secret}
                    for bound in (False, True):
                        measured = grants.load(port, form, args.seconds, args.connections, server_process,
                                               headers=proofs(port) if bound else None)
                        if measured.errors:
                            raise SystemExit(f"{label}: {measured.errors[0]}")
                        name = f"client_credentials, {label}{', DPoP' if bound else ''}"
                        rate, cpu_rate = measured.answers / measured.elapsed, measured.answers / measured.server_cpu
                        per_second.setdefault((label, bound), []).append(rate)
                        per_cpu.setdefault((label, bound), []).append(cpu_rate)
                        print(f"{name:<36}{rate:>9.1f}{measured.server_cpu / measured.elapsed:>8.0%}"
                              f"{cpu_rate:>10.1f}{measured.load_cpu / measured.elapsed:>6.0%}"
                              f"{measured.others_cpu / measured.elapsed:>8.0%}", flush=True)
        finally:
            server.terminate()
            server.wait(10)
        print(f"\nmedians of {args.rounds} rounds: DPoP over plain")
        print(f"{'cert':<12}{'plain/s':>9}{'DPoP/s':>9}{'plain/CPU-s':>13}{'DPoP/CPU-s':>12}{'ratio':>7}")
        for label in APPS:
            plain, bound = (statistics.median(per_cpu[(label, b)]) for b in (False, True))
            wall_plain, wall_bound = (statistics.median(per_second[(label, b)]) for b in (False, True))
            print(f"{label:<12}{wall_plain:>9.1f}{wall_bound:>9.1f}{plain:>13.1f}{bound:>12.1f}{bound / plain:>7.2f}")


if __name__ == "__main__":
    main()
