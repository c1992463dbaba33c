"""What the server counts about itself: the Prometheus metrics of /api/metrics and the API
latency and throughput tables of the System Info page (docs/operations.md, "Metrics").

Memory stays bounded whatever the traffic: a request is labelled by the route template that
served it (`/api/get-user`, `/api/{path:path}` for an unknown API path), never by its raw
path, and every other label takes a fixed set of values (a method, a status class, a grant
type, a sign-in result). Figures are those of the worker process that answers."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator

from prometheus_client import (
    CollectorRegistry,
    Counter,
    GCCollector,
    Histogram,
    PlatformCollector,
    ProcessCollector,
    generate_latest,
)

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)
PlatformCollector(registry=REGISTRY)
GCCollector(registry=REGISTRY)

REQUESTS = Counter("iam_http_requests", "HTTP requests answered, by route template, method and status class",
                   ["route", "method", "status"], registry=REGISTRY)
LATENCY = Histogram("iam_http_request_duration_seconds", "Time to answer an HTTP request, by route template",
                    ["route", "method"], registry=REGISTRY,
                    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
SIGN_INS = Counter("iam_sign_ins", "Sign-in attempts, by method and result (success, second_factor, refused)",
                   ["method", "result"], registry=REGISTRY)
TOKENS = Counter("iam_tokens_issued", "OAuth tokens issued, by grant type", ["grant"], registry=REGISTRY)
WEBHOOK_DELIVERIES = Counter("iam_webhook_deliveries", "Webhook delivery attempts, by result",
                             ["result"], registry=REGISTRY)
SYNC_RUNS = Counter("iam_sync_runs", "User synchronisation runs, by kind (ldap, syncer) and result",
                    ["kind", "result"], registry=REGISTRY)

OTHER_ROUTE = "other"  # a request no route template answered (the front end's static files)
WINDOW_SECONDS = 10  # the throughput table's rate: requests a second over the last ten seconds


class Throughput:
    """Requests a second per (route, method), over the last WINDOW_SECONDS whole seconds:
    one ring of per-second counts for each key, so memory grows with the route table only."""

    def __init__(self, window: int = WINDOW_SECONDS, clock=time.monotonic) -> None:
        self.window, self.clock = window, clock
        self.rings: dict[tuple[str, str], list[list[int]]] = {}  # key -> [[second, count], ...]
        self.lock = threading.Lock()

    def add(self, route: str, method: str) -> None:
        second = int(self.clock())
        with self.lock:
            ring = self.rings.setdefault((route, method), [[-1, 0] for _ in range(self.window)])
            slot = ring[second % self.window]
            if slot[0] != second:
                slot[0], slot[1] = second, 0
            slot[1] += 1

    def rates(self) -> Iterator[tuple[str, str, float]]:
        """(route, method, requests a second) over the whole seconds of the window before now."""
        now = int(self.clock())
        with self.lock:
            snapshot = {key: [tuple(slot) for slot in ring] for key, ring in self.rings.items()}
        for (route, method), ring in snapshot.items():
            count = sum(n for second, n in ring if now - self.window <= second < now)
            yield route, method, count / self.window


THROUGHPUT = Throughput()


def route_of(scope: dict) -> str:
    """The template of the route that answered (Starlette records it in the scope)."""
    route = scope.get("route")
    return getattr(route, "path", None) or OTHER_ROUTE


def observe(route: str, method: str, status: int, seconds: float) -> None:
    REQUESTS.labels(route, method, f"{status // 100}xx").inc()
    LATENCY.labels(route, method).observe(seconds)
    THROUGHPUT.add(route, method)


def prometheus_info() -> dict:
    """get-prometheus-info: per route and method the request count and mean latency in ms
    (apiLatency), the requests a second (apiThroughput) and their sum (totalThroughput)."""
    sums: dict[tuple[str, str], list[float]] = {}
    for metric in LATENCY.collect():
        for sample in metric.samples:
            key = (sample.labels["route"], sample.labels["method"])
            if sample.name.endswith("_sum"):
                sums.setdefault(key, [0.0, 0.0])[0] = sample.value
            elif sample.name.endswith("_count"):
                sums.setdefault(key, [0.0, 0.0])[1] = sample.value
    latency = [{"name": route, "method": method, "count": int(count),
                "latency": f"{total * 1000 / count:.3f}" if count else "0.000"}
               for (route, method), (total, count) in sorted(sums.items())]
    throughput = [{"name": route, "method": method, "throughput": rate}
                  for route, method, rate in sorted(THROUGHPUT.rates()) if rate]
    return {"apiLatency": latency, "apiThroughput": throughput,
            "totalThroughput": sum(row["throughput"] for row in throughput)}


def exposition() -> bytes:
    """Every metric in the Prometheus text format (version 0.0.4)."""
    return generate_latest(REGISTRY)


SIGN_IN_METHODS = frozenset({"Password", "WebAuthn", "LDAP", "Verification code", "Device", "Impersonation",
                             "Signup", "Web3"})


def count_sign_in(method: str, result: str) -> None:
    """`method` as the sign-in names it; a second factor's `Password+totp` counts as Password,
    and a name outside SIGN_IN_METHODS (clients choose signinMethod) as 'other'."""
    first = method.split("+", 1)[0]
    SIGN_INS.labels(first if first in SIGN_IN_METHODS else "other", result).inc()


@contextlib.contextmanager
def counted_run(kind: str) -> Iterator[None]:
    """Count one synchronisation run of `kind` by how it ended."""
    try:
        yield
    except BaseException:
        SYNC_RUNS.labels(kind, "failure").inc()
        raise
    SYNC_RUNS.labels(kind, "success").inc()
