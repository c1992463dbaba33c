"""No organization stalls the others (docs/security.md, "Availability"): the API's routes run on
the worker pool, so while one organization's notification waits on a receiver that holds it,
another organization's calls are answered; and one organization's outbound calls in progress are
capped, the next one refused at once with a message.

The proofs go by order, not by timing: the receiver holds its request until the test releases
it (or until its hold runs out, which the test then reports as the failure)."""

from __future__ import annotations

import threading

import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.core import outbound
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique
from tests.sinks import HoldingHttpSink, HttpSink

PASSWORD = "Avail-pass-1"


@pytest.fixture
def receivers():
    with HoldingHttpSink() as slow, HttpSink() as fast:
        yield slow, fast


@pytest.fixture
def orgs(admin, receivers) -> dict:
    """Organization A's notifications go to the holding receiver, B's to an answering one."""
    slow, fast = receivers
    names = {"a": unique("slowa"), "b": unique("quickb")}
    for key, org in names.items():
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
        ok_body(admin.post("/api/add-user", json={"owner": org, "name": "boss", "password": PASSWORD,
                                                  "isAdmin": True}))
        receiver = (slow if key == "a" else fast).url
        ok_body(admin.post("/api/add-provider", json={"owner": org, "name": f"{org}-hook", "category": "Notification",
                                                      "type": "Custom HTTP", "receiver": f"{receiver}/notify",
                                                      "method": "POST"}))
    return {**names, "cookie": {key: sign_in(org, "boss", PASSWORD).cookies["iam_session"]
                                for key, org in names.items()}}


def _headers(orgs: dict, key: str) -> dict:
    return {"Cookie": f"iam_session={orgs['cookie'][key]}", "Origin": "http://testserver"}


def _notify(client: TestClient, orgs: dict, key: str) -> dict:
    return client.post(f"/api/send-notification?provider={orgs[key]}-hook", json={"content": "deploy done"},
                       headers=_headers(orgs, key)).json()


def _in_background(work) -> tuple[threading.Thread, dict]:
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(work()), daemon=True)
    thread.start()
    return thread, answer


def test_another_organization_is_answered_while_a_notification_waits_on_its_receiver(orgs, receivers):
    slow, _ = receivers
    # one client, one event loop: every request below is served by the same server loop
    with TestClient(api) as client:
        pending, answer = _in_background(lambda: _notify(client, orgs, "a"))
        slow.wait_arrived()
        try:
            anonymous = client.get("/api/get-account").json()
            account = client.get("/api/get-account", headers=_headers(orgs, "b")).json()
            signed_in = client.post("/api/login", json={"organization": orgs["b"], "username": "boss",
                                                        "password": PASSWORD}).json()
            users = client.get("/api/get-users", params={"owner": orgs["b"]}, headers=_headers(orgs, "b")).json()
            # all answered while A's receiver still held its request
            assert not slow.timed_out and pending.is_alive()
        finally:
            slow.release()
        pending.join(15)
    assert account["status"] == "ok" and account["data"]["owner"] == orgs["b"]
    assert signed_in["status"] == "ok", signed_in
    assert users["status"] == "ok" and [u["name"] for u in users["data"]] == ["boss"]
    assert anonymous["status"] == "error"  # nobody signed in: answered, not stalled
    assert answer["status"] == "ok", answer


def test_an_organization_beyond_its_outbound_calls_is_refused_and_the_others_are_not(orgs, receivers, monkeypatch):
    slow, fast = receivers
    monkeypatch.setattr(outbound, "PER_ORGANIZATION", 1)
    with TestClient(api) as client:
        pending, answer = _in_background(lambda: _notify(client, orgs, "a"))
        slow.wait_arrived()
        try:
            refused = _notify(client, orgs, "a")
            other = _notify(client, orgs, "b")
            assert not slow.timed_out and pending.is_alive()
        finally:
            slow.release()
        pending.join(15)
    assert refused["status"] == "error"
    assert f"The organization {orgs['a']} already has 1 outbound call in progress" in refused["msg"], refused
    assert other["status"] == "ok", other
    assert len(fast.calls) == 1
    assert answer["status"] == "ok", answer
    assert outbound.in_progress(orgs["a"]) == 0  # the slot was given back
    assert _notify(TestClient(api), orgs, "a")["status"] == "ok"  # released: A sends again (not held now)
