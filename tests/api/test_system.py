"""System info, version, and metrics over HTTP: who may read them, their shapes, the counts
that the requests, sign-ins and token grants leave, and the scraper's token."""

from __future__ import annotations

import dataclasses

import psutil
import pytest
from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from iam_console.api.app import api
from iam_console.operations.api import system
from tests.api.conftest import ok_body, sign_in
from tests.api.oauth_world import build_world
from tests.conftest import ADMIN_PASSWORD

PASSWORD = "System-pass-1"


@pytest.fixture(scope="module")
def admin(database) -> TestClient:
    return sign_in("built-in", "admin", ADMIN_PASSWORD)


def _metric(client: TestClient, name: str, **labels: str) -> float:
    text = client.get("/api/metrics").text
    return sum(sample.value for family in text_string_to_metric_families(text) for sample in family.samples
               if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()))


def test_system_info_is_the_global_admins(admin, make_org, make_user):
    info = ok_body(admin.get("/api/get-system-info"))["data"]
    assert len(info["cpuUsage"]) == psutil.cpu_count() and 0 < info["memoryUsed"] < info["memoryTotal"]
    org = make_org()
    make_user(owner=org.name, name="boss", password=PASSWORD, is_admin=True)
    boss = sign_in(org.name, "boss", PASSWORD)
    for path in ("/api/get-system-info", "/api/get-prometheus-info", "/api/metrics"):
        assert boss.get(path).json()["msg"] == "Unauthorized operation", path
        assert TestClient(api).get(path).json()["msg"] == "Please login first", path


def test_version_info_is_public():
    data = ok_body(TestClient(api).get("/api/get-version-info"))["data"]
    assert set(data) == {"version", "commitId", "commitOffset"} and data["version"]


def test_latency_and_throughput_are_per_route_template(admin):
    for i in range(40):  # forty unknown paths: one row, not forty
        admin.get(f"/api/no-such-route-{i}")
    for _ in range(5):
        admin.get("/api/get-version-info")
    info = ok_body(admin.get("/api/get-prometheus-info"))["data"]
    rows = {(r["name"], r["method"]): r for r in info["apiLatency"]}
    assert rows[("/api/{path:path}", "GET")]["count"] >= 40
    assert rows[("/api/get-version-info", "GET")]["count"] >= 5
    assert not [name for name, _ in rows if "no-such-route" in name]
    assert float(rows[("/api/get-version-info", "GET")]["latency"]) > 0
    assert isinstance(info["totalThroughput"], float | int)


def test_the_metrics_count_sign_ins_and_tokens(admin, make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="carol", password=PASSWORD)
    success = _metric(admin, "iam_sign_ins_total", method="Password", result="success")
    refused = _metric(admin, "iam_sign_ins_total", method="Password", result="refused")
    sign_in(org.name, "carol", PASSWORD)
    wrong = TestClient(api).post("/api/login", json={"organization": org.name, "username": "carol",
                                                     "password": "wrong"}).json()
    assert wrong["status"] == "error"
    assert _metric(admin, "iam_sign_ins_total", method="Password", result="success") == success + 1
    assert _metric(admin, "iam_sign_ins_total", method="Password", result="refused") == refused + 1
    world = build_world(make_org, make_user)
    issued = _metric(admin, "iam_tokens_issued_total", grant="client_credentials")
    token = TestClient(api).post("/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                                 auth=(world.app.client_id, world.app.client_secret))
    assert token.status_code == 200
    assert _metric(admin, "iam_tokens_issued_total", grant="client_credentials") == issued + 1
    assert _metric(admin, "iam_http_requests_total", route="/api/login", method="POST") >= 2


def test_a_scraper_reads_the_metrics_with_the_configured_token(monkeypatch, database):
    anonymous = TestClient(api)
    assert anonymous.get("/api/metrics", headers={"Authorization": "Bearer "}).json()["status"] == "error"
    monkeypatch.setattr(system, "settings", dataclasses.replace(system.settings, metrics_token="scrape-token-1"))
    answer = anonymous.get("/api/metrics", headers={"Authorization": "Bearer scrape-token-1"})
    assert answer.headers["content-type"].startswith("text/plain") and "iam_http_requests_total" in answer.text
    for wrong in ("scrape-token-2", "", "scrape-token-1x"):
        refused = anonymous.get("/api/metrics", headers={"Authorization": f"Bearer {wrong}"})
        assert refused.json()["status"] == "error", wrong


def test_a_host_that_cannot_be_read_answers_why(admin, monkeypatch):
    def unreadable():
        raise psutil.AccessDenied(msg="no access to /proc")

    monkeypatch.setattr(psutil, "virtual_memory", unreadable)
    body = admin.get("/api/get-system-info").json()
    assert body["status"] == "error" and "no access to /proc" in body["msg"]
