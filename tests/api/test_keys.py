"""API keys (add-key and the rest of the CRUD family): a key acts as its user or as the
client of its application, within the key's organization; its secret is shown once and
kept hashed; an inactive or expired key opens nothing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.signin import credentials
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique

PASSWORD = "Keys-pass-1"


@pytest.fixture(scope="module")
def orgs(admin) -> tuple[str, str]:
    """Organizations A and B, each with an admin `boss`, a user `alice` and an application."""
    names = unique("keya"), unique("keyb")
    for org in names:
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
        for user, is_admin in (("boss", True), ("alice", False)):
            ok_body(admin.post("/api/add-user", json={"owner": org, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin}))
        ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": f"{org}-app", "organization": org}))
    return names


def _key(caller, org: str, **fields) -> tuple[str, str, str]:
    """(name, accessKey, accessSecret) of a new key."""
    name = unique("key")
    body = ok_body(caller.post("/api/add-key", json={"owner": org, "name": name, "state": "Active", **fields}))
    assert body["data"] == "Affected"
    return name, body["data2"]["accessKey"], body["data2"]["accessSecret"]


def _me(client: TestClient, org: str, name: str) -> dict | None:
    """What the client reads of org/name: an ordinary user reads only themselves."""
    return client.get("/api/get-user", params={"id": f"{org}/{name}"}).json()


def _as(access_key: str, secret: str) -> TestClient:
    client = TestClient(api)
    client.params = {"accessKey": access_key, "accessSecret": secret}
    return client


def test_a_users_key_acts_as_that_user_and_its_secret_is_shown_once(admin, orgs):
    a, b = orgs
    name, access_key, secret = _key(admin, a, type="User", user="alice")
    assert access_key and len(secret) >= 24
    read = ok_body(admin.get("/api/get-key", params={"id": f"{a}/{name}"}))["data"]
    assert (read["accessKey"], read["accessSecret"], read["organization"]) == (access_key, "***", a)
    with session_scope() as db:
        stored = db.exec(select(m.Key.access_secret).where(m.Key.owner == a, m.Key.name == name)).one()
    assert stored.startswith("sha256:") and secret not in stored

    alice = _as(access_key, secret)
    assert _me(alice, a, "alice")["data"]["name"] == "alice"
    assert _me(alice, a, "boss")["data"] is None  # an ordinary user: themselves only
    assert alice.get("/api/get-users", params={"owner": b}).json()["status"] == "error"
    assert _me(_as(access_key, "wrong"), a, "alice")["msg"] == "Invalid access key or secret"


def test_an_applications_key_acts_as_its_organizations_admin_only(admin, orgs):
    a, b = orgs
    _, access_key, secret = _key(admin, a, type="Application", application=f"{a}-app")
    client = _as(access_key, secret)
    users = ok_body(client.get("/api/get-users", params={"owner": a}))["data"]
    assert {u["name"] for u in users} == {"boss", "alice"}
    assert client.get("/api/get-users", params={"owner": b}).json()["status"] == "error"
    assert ok_body(client.get("/api/get-user", params={"id": "built-in/admin"}))["data"] is None
    assert client.post("/api/add-user", json={"owner": "built-in", "name": unique("x"), "password": PASSWORD,
                                              "isAdmin": True}).json()["status"] == "error"


def test_an_organization_admin_mints_keys_of_their_own_organization_only(admin, orgs):
    a, b = orgs
    boss = sign_in(a, "boss", PASSWORD)
    _key(boss, a, type="User", user="alice")
    for fields in ({"owner": b, "user": "alice"}, {"owner": a, "application": "app-built-in"},
                   {"owner": a, "application": f"{b}-app"}, {"owner": a, "user": f"{b}/alice"},
                   {"owner": a, "organization": b}):
        body = boss.post("/api/add-key", json={"name": unique("key"), "state": "Active", **fields}).json()
        assert body["status"] == "error", (fields, body)
    keys = ok_body(boss.get("/api/get-keys", params={"owner": a}))["data"]
    assert keys and {k["owner"] for k in keys} == {a} and {k["accessSecret"] for k in keys} == {"***"}
    assert {k["owner"] for k in ok_body(boss.get("/api/get-global-keys"))["data"]} == {a}
    # an ordinary user mints none, not even for themselves
    alice = sign_in(a, "alice", PASSWORD)
    assert alice.post("/api/add-key", json={"owner": a, "name": unique("key"), "user": "alice"}).json()[
        "status"] == "error"


@pytest.mark.parametrize("change", [{"state": "Inactive"}, {"expireTime": "2001-01-01T00:00:00Z"}])
def test_an_inactive_or_expired_key_opens_nothing(admin, orgs, change):
    a, _ = orgs
    name, access_key, secret = _key(admin, a, type="User", user="boss")
    assert _me(_as(access_key, secret), a, "boss")["data"]["name"] == "boss"
    key = ok_body(admin.get("/api/get-key", params={"id": f"{a}/{name}"}))["data"]
    assert ok_body(admin.post("/api/update-key", params={"id": f"{a}/{name}"}, json={**key, **change}))["data"] == \
        "Affected"
    body = _me(_as(access_key, secret), a, "boss")
    assert body["status"] == "error" and body["msg"] == "Invalid access key or secret"


def test_a_secret_the_client_chose_is_kept_hashed_and_the_mask_keeps_it(admin, orgs):
    a, _ = orgs
    name, access_key, shown = _key(admin, a, type="User", user="alice", accessKey=unique("ak"),
                                   accessSecret="chosen-secret-123456")
    assert shown == "***"  # the client knows it: it is not echoed
    client = _as(access_key, "chosen-secret-123456")
    assert _me(client, a, "alice")["data"]["name"] == "alice"
    key = ok_body(admin.get("/api/get-key", params={"id": f"{a}/{name}"}))["data"]
    ok_body(admin.post("/api/update-key", params={"id": f"{a}/{name}"}, json={**key, "displayName": "Renamed"}))
    assert _me(client, a, "alice")["data"]["name"] == "alice"


def test_bad_keys_are_refused_and_nothing_is_written(admin, orgs):
    a, _ = orgs
    before = len(ok_body(admin.get("/api/get-keys", params={"owner": a}))["data"])
    for fields, message in (({"type": "Master"}, "type"), ({"state": "On"}, "state"),
                            ({"user": "alice", "application": f"{a}-app"}, "not both"),
                            ({"user": "nobody"}, "does not exist")):
        body = admin.post("/api/add-key", json={"owner": a, "name": unique("key"), **fields}).json()
        assert body["status"] == "error" and message in body["msg"], (fields, body)
    assert len(ok_body(admin.get("/api/get-keys", params={"owner": a}))["data"]) == before


def test_an_access_key_is_unique_across_users_keys_and_organizations(admin, orgs):
    """Issue 26: a key equal to another organization's user's was saved and silently never worked
    (the lookup found the other user first). Now it is refused on save, by a message that names
    neither the holder nor its organization."""
    a, b = orgs
    theirs = unique("ak-theirs")
    user_b = ok_body(admin.get("/api/get-user", params={"id": f"{b}/alice"}))["data"]
    ok_body(admin.post("/api/update-user", params={"id": f"{b}/alice"},
                       json={**user_b, "accessKey": theirs, "accessSecret": "theirs-secret-123456"}))
    boss = sign_in(a, "boss", PASSWORD)
    alice_a = ok_body(boss.get("/api/get-user", params={"id": f"{a}/alice"}))["data"]
    name, mine, _ = _key(boss, a, type="User", user="alice")
    key = ok_body(boss.get("/api/get-key", params={"id": f"{a}/{name}"}))["data"]
    before = len(ok_body(admin.get("/api/get-keys", params={"owner": a}))["data"])
    for route, params, body in (
            ("update-user", {"id": f"{a}/alice"}, {**alice_a, "accessKey": theirs}),  # another's user's
            ("add-key", {}, {"owner": a, "name": unique("key"), "user": "alice", "accessKey": theirs}),
            ("update-key", {"id": f"{a}/{name}"}, {**key, "accessKey": theirs}),
            ("update-user", {"id": f"{a}/alice"}, {**alice_a, "accessKey": mine})):  # a Key record's
        answer = boss.post(f"/api/{route}", params=params, json=body).json()
        assert answer["status"] == "error" and answer["msg"] == credentials.KEY_IN_USE, (route, answer)
        assert b not in answer["msg"]
    assert len(ok_body(admin.get("/api/get-keys", params={"owner": a}))["data"]) == before
    assert ok_body(boss.get("/api/get-key", params={"id": f"{a}/{name}"}))["data"]["accessKey"] == mine
    assert ok_body(boss.get("/api/get-user", params={"id": f"{a}/alice"}))["data"]["accessKey"] == ""
    # the holder's own key still opens their account; saving a record keeps its own key
    assert _me(_as(theirs, "theirs-secret-123456"), b, "alice")["data"]["name"] == "alice"
    user_b = ok_body(admin.get("/api/get-user", params={"id": f"{b}/alice"}))["data"]
    ok_body(admin.post("/api/update-user", params={"id": f"{b}/alice"}, json={**user_b, "displayName": "Alice B"}))
    ok_body(boss.post("/api/update-key", params={"id": f"{a}/{name}"}, json={**key, "displayName": "Kept"}))
    keys = ok_body(boss.post("/api/add-user-keys", json={"owner": a, "name": "alice"}))["data2"]
    assert keys["accessKey"] not in (theirs, mine)
