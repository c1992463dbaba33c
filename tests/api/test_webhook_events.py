"""Webhooks over the API: the secret is masked, a write's record becomes a delivered event, and
the event log (get-webhook-events, get-webhook-event-detail, replay-webhook-event,
delete-webhook-event) keeps each organization's events to its own admins."""

from __future__ import annotations

import json

import pytest
from fastapi.testclient import TestClient

from iam_console.db import session_scope
from iam_console.operations import webhooks
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique
from tests.sinks import HttpSink

PASSWORD = "Hook-pass-1"


def deliver_all() -> None:
    while webhooks.deliver_due(session_scope):
        pass


@pytest.fixture(scope="module")
def sink():
    with HttpSink() as receiver:
        yield receiver


@pytest.fixture(scope="module")
def tenants(admin, sink) -> dict[str, tuple[TestClient, str]]:
    """Two organizations, each with an admin signed in and a webhook on update-user: {org: (client, webhook)}."""
    found = {}
    for _ in range(2):
        org = unique("hooked")
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
        ok_body(admin.post("/api/add-user", json={"owner": org, "name": "boss", "password": PASSWORD,
                                                   "isAdmin": True}))
        name = unique("hook")
        ok_body(admin.post("/api/add-webhook", json={
            "owner": "admin", "name": name, "organization": org, "url": f"{sink.url}/{org}", "method": "POST",
            "contentType": "application/json", "events": ["update-user"], "isEnabled": True}))
        found[org] = (sign_in(org, "boss", PASSWORD), name)
    return found


def _events(client: TestClient, **params) -> dict:
    return client.get("/api/get-webhook-events", params=params).json()


def test_the_secret_is_generated_masked_and_kept(admin, tenants):
    _, name = next(iter(tenants.values()))
    shown = ok_body(admin.get("/api/get-webhook", params={"id": f"admin/{name}"}))["data"]
    assert shown["secret"] == "***"
    revealed = ok_body(admin.get("/api/get-webhook", params={"id": f"admin/{name}", "withSecret": "1"}))["data"]
    assert len(revealed["secret"]) == 2 * 24
    ok_body(admin.post("/api/update-webhook", params={"id": f"admin/{name}"}, json={**shown, "url": shown["url"]}))
    again = ok_body(admin.get("/api/get-webhook", params={"id": f"admin/{name}", "withSecret": "1"}))["data"]
    assert again["secret"] == revealed["secret"]  # "***" sent back changes nothing


def test_bad_webhook_input_is_refused(admin, tenants):
    _, name = next(iter(tenants.values()))
    shown = ok_body(admin.get("/api/get-webhook", params={"id": f"admin/{name}"}))["data"]
    for change, message in (({"contentType": "text/plain"}, "content type"), ({"method": "PATCH"}, "method"),
                            ({"maxRetries": -1}, "retries")):
        body = admin.post("/api/update-webhook", params={"id": f"admin/{name}"}, json={**shown, **change}).json()
        assert body["status"] == "error" and message in body["msg"], body


def test_a_write_is_delivered_and_its_event_read_by_its_organization_only(admin, tenants, sink):
    (a, (boss_a, hook_a)), (b, (boss_b, _)) = tenants.items()
    ok_body(boss_a.post("/api/update-user", params={"id": f"{a}/boss"},
                        json={"owner": a, "name": "boss", "displayName": "Boss A", "isAdmin": True}))
    deliver_all()
    call = next(c for c in sink.calls if c.path == f"/{a}")
    assert json.loads(call.body)["action"] == "update-user"

    mine = ok_body(boss_a.get("/api/get-webhook-events", params={"p": "1", "pageSize": "10"}))
    assert mine["data2"] >= 1
    event = next(e for e in mine["data"] if e["webhook"] == f"admin/{hook_a}")
    assert (event["organization"], event["eventType"], event["state"]) == (a, "update-user", "Success")
    assert event["attemptCount"] == 1 and event["lastStatusCode"] == 200
    assert json.loads(event["payload"])["organization"] == a
    assert "claim" not in event and "leaseUntil" not in event
    ident = f"{event['owner']}/{event['name']}"
    detail = ok_body(boss_a.get("/api/get-webhook-event-detail", params={"id": ident}))["data"]
    assert detail["name"] == event["name"]

    # the other organization's admin: not listed, not readable, not replayable, not deletable
    theirs = ok_body(boss_b.get("/api/get-webhook-events"))["data"]
    assert all(e["organization"] == b for e in theirs)
    for answer in (boss_b.get("/api/get-webhook-events", params={"organization": a}),
                   boss_b.get("/api/get-webhook-event-detail", params={"id": ident}),
                   boss_b.post("/api/replay-webhook-event", params={"id": ident}),
                   boss_b.post("/api/delete-webhook-event", json={"owner": event["owner"], "name": event["name"]})):
        assert answer.json()["status"] == "error" and answer.json()["msg"] == "Unauthorized operation"
    assert ok_body(boss_a.get("/api/get-webhook-event-detail", params={"id": ident}))["data"]["state"] == "Success"

    # the global admin reads every organization's, narrowed by organization, webhook and state
    listed = ok_body(admin.get("/api/get-webhook-events", params={"organization": a, "webhook": f"admin/{hook_a}",
                                                                  "state": "Success"}))["data"]
    assert [e["name"] for e in listed] == [event["name"]]
    assert ok_body(admin.get("/api/get-webhook-events", params={"organization": a, "state": "Failed"}))["data"] == []

    # replay: pending again, then sent again
    assert ok_body(boss_a.post("/api/replay-webhook-event", params={"id": ident}))["data"] == \
        "Webhook event replay triggered"
    assert ok_body(boss_a.get("/api/get-webhook-event-detail", params={"id": ident}))["data"]["state"] == "Pending"
    before = len([c for c in sink.calls if c.path == f"/{a}"])
    deliver_all()
    assert len([c for c in sink.calls if c.path == f"/{a}"]) == before + 1

    # delete
    assert ok_body(boss_a.post("/api/delete-webhook-event", json={"owner": event["owner"],
                                                                  "name": event["name"]}))["data"] == "Affected"
    assert ok_body(boss_a.get("/api/get-webhook-event-detail", params={"id": ident}))["data"] is None
    assert ok_body(boss_a.post("/api/delete-webhook-event", json={"owner": event["owner"],
                                                                  "name": event["name"]}))["data"] == "Unaffected"


def test_the_event_log_is_for_admins_and_takes_only_good_input(admin, tenants, make_user):
    org = next(iter(tenants))
    make_user(owner=org, name="plain", password=PASSWORD)
    plain = sign_in(org, "plain", PASSWORD)
    assert _events(plain)["status"] == "error"
    assert TestClient(plain.app).get("/api/get-webhook-events").json()["status"] == "error"  # anonymous
    assert _events(admin, sortField="nonsense", sortOrder="ascend")["status"] == "error"
    assert _events(admin, pageSize="x", p="1")["status"] == "error"
    assert admin.get("/api/get-webhook-event-detail", params={"id": "no-slash"}).json()["status"] == "error"
    missing = admin.post("/api/replay-webhook-event", params={"id": "admin/none"}).json()
    assert missing["status"] == "error" and "does not exist" in missing["msg"]
    assert ok_body(admin.get("/api/get-webhook-event-detail", params={"id": "admin/none"}))["data"] is None
    assert ok_body(admin.get("/api/get-webhook-events", params={"sortField": "attemptCount", "sortOrder": "ascend"}))


def test_webhooks_are_searched_by_their_events(admin, tenants):
    names = {name for _, name in tenants.values()}
    found = ok_body(admin.get("/api/get-webhooks", params={"owner": "admin", "field": "events", "value": "update-user",
                                                           "p": "1", "pageSize": "100"}))["data"]
    assert names <= {w["name"] for w in found}
    none = ok_body(admin.get("/api/get-webhooks", params={"owner": "admin", "field": "events",
                                                          "value": "no-such-event"}))["data"]
    assert none == []
    assert admin.get("/api/get-webhooks", params={"sortField": "events", "sortOrder": "ascend"}).json()["status"] \
        == "error"  # a list is searched as text, never sorted
