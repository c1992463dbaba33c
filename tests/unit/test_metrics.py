"""The server's own figures: bounded labels, the throughput window, the text format, the
release and the host readings (operations/metrics.py, operations/system_info.py)."""

from __future__ import annotations

import psutil
from prometheus_client.parser import text_string_to_metric_families

from iam_console import __version__
from iam_console.i18n.formats import size_text
from iam_console.operations import metrics, system_info


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _sample(name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    return 0.0


def test_throughput_is_requests_a_second_over_the_last_whole_seconds():
    clock = Clock()
    window = metrics.Throughput(window=10, clock=clock)
    for _ in range(30):
        window.add("/api/get-users", "GET")
    window.add("/api/login", "POST")
    assert sorted(window.rates()) == [("/api/get-users", "GET", 0.0), ("/api/login", "POST", 0.0)]  # second not over
    clock.now += 1
    assert sorted(window.rates()) == [("/api/get-users", "GET", 3.0), ("/api/login", "POST", 0.1)]
    clock.now += 10  # the window has passed: nothing left, and a slot is reused, not grown
    window.add("/api/get-users", "GET")
    assert [rate for _, _, rate in window.rates()] == [0.0, 0.0]
    assert all(len(ring) == 10 for ring in window.rings.values())


def test_a_request_is_labelled_by_its_route_template_never_its_path():
    class Route:
        path = "/api/{path:path}"

    assert metrics.route_of({"route": Route()}) == "/api/{path:path}"
    assert metrics.route_of({}) == metrics.OTHER_ROUTE
    before = _sample("iam_http_requests_total", route="/api/{path:path}", method="GET", status="2xx")
    for _ in range(3):
        metrics.observe("/api/{path:path}", "GET", 200, 0.002)
    assert _sample("iam_http_requests_total", route="/api/{path:path}", method="GET", status="2xx") == before + 3
    info = metrics.prometheus_info()
    row = next(r for r in info["apiLatency"] if r["name"] == "/api/{path:path}" and r["method"] == "GET")
    assert row["count"] >= 3 and float(row["latency"]) > 0
    assert set(info) == {"apiLatency", "apiThroughput", "totalThroughput"}


def test_sign_in_methods_a_client_names_cannot_grow_the_labels():
    before = _sample("iam_sign_ins_total", method="other", result="success")
    metrics.count_sign_in("made-up-method-1", "success")
    metrics.count_sign_in("made-up-method-2", "success")
    metrics.count_sign_in("Password+totp", "success")
    assert _sample("iam_sign_ins_total", method="other", result="success") == before + 2
    assert _sample("iam_sign_ins_total", method="made-up-method-1", result="success") == 0


def test_a_sync_run_counts_by_how_it_ended():
    ok = _sample("iam_sync_runs_total", kind="ldap", result="success")
    failed = _sample("iam_sync_runs_total", kind="ldap", result="failure")
    with metrics.counted_run("ldap"):
        pass
    try:
        with metrics.counted_run("ldap"):
            raise RuntimeError("directory down")
    except RuntimeError:
        pass
    assert _sample("iam_sync_runs_total", kind="ldap", result="success") == ok + 1
    assert _sample("iam_sync_runs_total", kind="ldap", result="failure") == failed + 1


def test_the_text_format_holds_the_process_and_every_family():
    names = {family.name for family in text_string_to_metric_families(metrics.exposition().decode())}
    assert {"iam_http_requests", "iam_http_request_duration_seconds", "iam_sign_ins", "iam_tokens_issued",
            "iam_webhook_deliveries", "iam_sync_runs", "process_resident_memory_bytes"} <= names


def test_the_host_figures():
    info = system_info.system_info()
    assert len(info["cpuUsage"]) == psutil.cpu_count()
    assert all(0 <= value <= 100 for value in info["cpuUsage"])
    assert 0 < info["memoryUsed"] < info["memoryTotal"]
    assert 0 < info["diskUsed"] <= info["diskTotal"]
    assert info["networkTotal"] == info["networkSent"] + info["networkRecv"]


def test_the_release_and_how_far_ahead_the_checkout_is():
    info = system_info.version_info()
    assert set(info) == {"version", "commitId", "commitOffset"}
    assert info["commitOffset"] >= 0
    if info["commitId"]:  # a git checkout: the running commit
        assert len(info["commitId"]) == 40
    if not system_info._git("describe", "--tags"):  # no tags: the release in the package
        assert info["version"] == __version__


def test_sizes_read_in_binary_units():
    assert [size_text(v) for v in (512, 2048, 268_435_456, 25_276_502_016)] == [
        "512 byte", "2.0 kB", "256.0 MB", "23.5 GB"]
    assert size_text(268_435_456, "fr") == "256,0\u202fMo"  # the language's decimal sign and unit
