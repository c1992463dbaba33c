"""What the official SDKs' own suites send, as they send it: sub-second and empty
createdTime, snake_case sort and column names, get-user without an owner, and
the errors the SDKs branch on."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime

import pytest

from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique


def _user(name: str, **fields) -> dict:
    return {"owner": "built-in", "name": name, "displayName": name, "password": "Passw0rd-x", **fields}


@pytest.mark.parametrize("given, read_back", [
    ("2026-11-23T10:20:30.123456", "2026-11-23T10:20:30.123456Z"),  # Python's datetime.now().isoformat()
    ("2026-11-23T10:20:30.123Z", "2026-11-23T10:20:30.123Z"),  # JavaScript's toISOString()
    ("2026-11-23T18:20:30.5+08:00", "2026-11-23T10:20:30.5Z"),
    ("2026-11-23T10:20:30Z", "2026-11-23T10:20:30Z"),
])
def test_created_time_keeps_its_precision_and_survives_an_update(admin, given, read_back):
    name = unique("precise")
    ok_body(admin.post("/api/add-user", json=_user(name, createdTime=given)))
    user = admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]
    assert user["createdTime"] == read_back
    user["displayName"] = "Changed"
    assert ok_body(admin.post("/api/update-user", params={"id": f"built-in/{name}"}, json=user))["data"] == "Affected"
    again = admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]
    assert again["displayName"] == "Changed" and again["createdTime"] == read_back


def test_an_empty_created_time_means_now_on_add_and_is_ignored_on_update(admin):
    name = unique("bare")
    before = datetime.now(UTC).replace(microsecond=0)
    ok_body(admin.post("/api/add-user", json=_user(name, createdTime="")))
    user = admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]
    created = datetime.fromisoformat(user["createdTime"].replace("Z", "+00:00"))
    assert created >= before
    answer = ok_body(admin.post("/api/update-user", params={"id": f"built-in/{name}"},
                            json={**user, "createdTime": "", "displayName": "Bare"}))
    assert answer["data"] == "Affected"
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]["createdTime"] == \
        user["createdTime"]


@pytest.mark.parametrize("kind, body", [
    ("user", lambda name: _user(name)),
    ("group", lambda name: {"owner": "built-in", "name": name, "displayName": name}),
    ("cert", lambda name: {"owner": "admin", "name": name, "displayName": name, "scope": "JWT", "type": "x509",
                           "cryptoAlgorithm": "RS256", "bitSize": 2048, "expireInYears": 1}),
])
def test_no_update_moves_a_created_time(admin, kind, body):
    """Casdoor sets createdTime when a record is made and ignores it on update: a
    record's age is not the client's to rewrite, nor a reason to refuse its update."""
    name = unique(kind)
    record = body(name)
    ok_body(admin.post(f"/api/add-{kind}", json={**record, "createdTime": "2026-01-02T03:04:05Z"}))
    ident = f"{record['owner']}/{name}"
    read = admin.get(f"/api/get-{kind}", params={"id": ident}).json()["data"]
    answer = ok_body(admin.post(f"/api/update-{kind}", params={"id": ident},
                            json={**read, "createdTime": "1999-12-31T23:59:59Z", "displayName": "Renamed"}))
    assert answer["data"] == "Affected"
    after = admin.get(f"/api/get-{kind}", params={"id": ident}).json()["data"]
    assert after["createdTime"] == "2026-01-02T03:04:05Z" and after["displayName"] == "Renamed"


def test_a_created_time_that_is_not_a_time_is_refused_on_add(admin):
    name = unique("badtime")
    body = admin.post("/api/add-user", json=_user(name, createdTime="yesterday")).json()
    assert body["status"] == "error" and "createdTime" in body["msg"]
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"] is None


@pytest.mark.parametrize("sort_field", ["createdTime", "created_time", "displayName", "display_name"])
def test_lists_sort_by_either_spelling(admin, sort_field):
    body = ok_body(admin.get("/api/get-users", params={"owner": "built-in", "p": 1, "pageSize": 5,
                                                     "sortField": sort_field, "sortOrder": "descend"}))
    assert body["data"], body


def test_lists_search_by_either_spelling(admin):
    name = unique("spelled")
    ok_body(admin.post("/api/add-user", json=_user(name, displayName="Snake Case Person")))
    for field in ("displayName", "display_name"):
        rows = ok_body(admin.get("/api/get-users", params={"owner": "built-in", "p": 1, "pageSize": 5,
                                                         "field": field, "value": "Snake Case"}))["data"]
        assert [row["name"] for row in rows] == [name]


def test_sorted_users_take_a_snake_case_sorter(admin):
    rows = ok_body(admin.get("/api/get-sorted-users", params={"owner": "built-in", "sorter": "created_time",
                                                            "limit": 3}))["data"]
    assert rows


@pytest.mark.parametrize("columns", ["display_name", "displayName", "DISPLAY_NAME"])
def test_update_for_columns_takes_either_spelling(admin, columns):
    name = unique("columns")
    ok_body(admin.post("/api/add-user", json=_user(name, displayName="Before", email=f"{name}@a.example")))
    user = admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]
    answer = ok_body(admin.post("/api/update-user", params={"id": f"built-in/{name}", "columns": columns},
                            json={**user, "displayName": "After", "email": f"other-{name}@a.example"}))
    assert answer["data"] == "Affected"
    after = admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]
    assert after["displayName"] == "After" and after["email"] == f"{name}@a.example"


def test_an_unknown_sort_field_is_still_refused(admin):
    body = admin.get("/api/get-users", params={"owner": "built-in", "p": 1, "pageSize": 5,
                                               "sortField": "pass_word"}).json()
    assert body["status"] == "error" and "pass_word" in body["msg"]


@pytest.fixture(scope="module")
def two_orgs(admin) -> tuple[str, str]:
    """Two organizations, each with an admin `boss` and a user `alice` who has an email, a phone and a user id."""
    names = unique("wirea"), unique("wireb")
    for number, org in enumerate(names):
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
        for user, is_admin in (("boss", True), ("alice", False)):
            ok_body(admin.post("/api/add-user", json={
                "owner": org, "name": user, "password": "Wire-pass-1", "isAdmin": is_admin,
                "email": f"{user}@{org}.example", "phone": f"{uuid.uuid4().int % 10**9:09d}{number}{is_admin:d}",
                "id": f"{org}-{user}-id"}))
    return names


@pytest.mark.parametrize("param, value", [("email", "alice@{org}.example"), ("userId", "{org}-alice-id")])
def test_get_user_without_an_owner_looks_across_what_the_caller_may_read(admin, two_orgs, param, value):
    a, b = two_orgs
    found = ok_body(admin.get("/api/get-user", params={param: value.format(org=b)}))["data"]
    assert found and (found["owner"], found["name"]) == (b, "alice")
    boss_of_a = sign_in(a, "boss", "Wire-pass-1")
    assert ok_body(boss_of_a.get("/api/get-user", params={param: value.format(org=a)}))["data"]["owner"] == a
    # another organization's user is answered as missing, not refused
    assert ok_body(boss_of_a.get("/api/get-user", params={param: value.format(org=b)}))["data"] is None
    alice_of_a = sign_in(a, "alice", "Wire-pass-1")
    assert ok_body(alice_of_a.get("/api/get-user", params={param: value.format(org=a)}))["data"]["name"] == "alice"


def test_get_user_by_phone_without_an_owner(admin, two_orgs):
    a, _ = two_orgs
    alice = admin.get("/api/get-user", params={"id": f"{a}/alice"}).json()["data"]
    assert alice["phone"]
    assert ok_body(admin.get("/api/get-user", params={"phone": alice["phone"]}))["data"]["name"] == "alice"


def test_a_value_two_users_share_finds_neither(admin):
    shared = f"{unique('shared')}@twice.example"
    for name in (unique("twin"), unique("twin")):
        ok_body(admin.post("/api/add-user", json=_user(name, email=shared)))
    assert ok_body(admin.get("/api/get-user", params={"email": shared}))["data"] is None


def test_get_token_of_a_missing_token_is_an_error(admin):
    body = admin.get("/api/get-token", params={"id": "admin/no-such-token"}).json()
    assert body["status"] == "error" and body["msg"] == "The token: admin/no-such-token does not exist"


def test_a_token_out_of_reach_is_answered_as_missing(admin, two_orgs):
    a, b = two_orgs
    name = unique("tok")
    ok_body(admin.post("/api/add-token", json={"owner": "admin", "name": name, "organization": b,
                                           "application": "app-built-in", "user": "boss"}))
    assert ok_body(admin.get("/api/get-token", params={"id": f"admin/{name}"}))["data"]["name"] == name
    body = sign_in(a, "boss", "Wire-pass-1").get("/api/get-token", params={"id": f"admin/{name}"}).json()
    assert body["status"] == "error" and body["msg"] == f"The token: admin/{name} does not exist"


def test_add_transaction_without_a_name_generates_and_answers_it(admin):
    body = ok_body(admin.post("/api/add-transaction", json={"owner": "built-in", "name": "", "amount": 5.0,
                                                         "currency": "USD", "application": "app-built-in",
                                                         "user": "admin"}))
    name = body["data"]
    assert name.startswith("transaction_") and len(name) == len("transaction_") + 32
    row = ok_body(admin.get("/api/get-transaction", params={"id": f"built-in/{name}"}))["data"]
    assert row["name"] == name and row["displayName"] == name and row["amount"] == 5.0


def test_add_transaction_with_a_name_answers_that_name(admin):
    name = unique("txn")
    assert ok_body(admin.post("/api/add-transaction", json={"owner": "built-in", "name": name}))["data"] == name


def test_add_ldap_without_an_id_generates_one(admin):
    before = {row["id"] for row in ok_body(admin.get("/api/get-ldaps", params={"owner": "built-in"}))["data"] or []}
    assert ok_body(admin.post("/api/add-ldap", json={"owner": "built-in", "id": "", "serverName": "Generated",
                                                 "host": "ldap.example", "port": 389}))["data"] == "Affected"
    after = {row["id"] for row in ok_body(admin.get("/api/get-ldaps", params={"owner": "built-in"}))["data"]}
    (added,) = after - before
    assert added.startswith("ldap_")


def test_other_kinds_still_refuse_an_empty_name(admin):
    body = admin.post("/api/add-group", json={"owner": "built-in", "name": ""}).json()
    assert body["status"] == "error" and body["msg"] == "The owner and name cannot be empty"


SYNCER = {"host": "localhost", "port": 3306, "user": "root", "password": "123", "databaseType": "mysql",
          "database": "syncer_db", "table": "user_table", "syncInterval": 1}


@pytest.mark.parametrize("kind, fields", [("syncer", SYNCER), ("webhook", {"url": "https://example.com/hook"})])
@pytest.mark.parametrize("given_owner", ["admin", "org"])
def test_syncers_and_webhooks_are_reached_through_their_organization_too(admin, two_orgs, kind, fields,
                                                                           given_owner):
    """The SDKs add them with owner admin or with their organization, and read them back as
    {organization}/{name}: both address the one admin-owned record of that organization."""
    a, _ = two_orgs
    name = unique(kind)
    owner = "admin" if given_owner == "admin" else a
    ok_body(admin.post(f"/api/add-{kind}", json={"owner": owner, "name": name, "organization": a, **fields}))
    for ident in (f"admin/{name}", f"{a}/{name}"):
        record = ok_body(admin.get(f"/api/get-{kind}", params={"id": ident}))["data"]
        assert (record["owner"], record["organization"]) == ("admin", a)
    boss = sign_in(a, "boss", "Wire-pass-1")
    assert name in [row["name"] for row in ok_body(boss.get(f"/api/get-{kind}s", params={"owner": a}))["data"]]
    record["isEnabled"] = not record["isEnabled"]
    assert ok_body(boss.post(f"/api/update-{kind}", params={"id": f"{a}/{name}"},
                         json={**record, "owner": a}))["data"] == "Affected"
    assert ok_body(boss.get(f"/api/get-{kind}", params={"id": f"{a}/{name}"}))["data"]["isEnabled"] == \
        record["isEnabled"]
    assert ok_body(boss.post(f"/api/delete-{kind}", json={"owner": a, "name": name}))["data"] == "Affected"
    assert ok_body(admin.get(f"/api/get-{kind}", params={"id": f"admin/{name}"}))["data"] is None


def test_an_organization_as_owner_stays_within_reach(admin, two_orgs):
    a, b = two_orgs
    boss = sign_in(a, "boss", "Wire-pass-1")
    name = unique("hook")
    refused = boss.post("/api/add-webhook", json={"owner": b, "name": name, "url": "https://example.com/x"}).json()
    assert refused["status"] == "error"
    mixed = admin.post("/api/add-webhook", json={"owner": a, "name": name, "organization": b,
                                                 "url": "https://example.com/x"}).json()
    assert mixed["status"] == "error" and "must be admin or its organization" in mixed["msg"]
    assert ok_body(admin.get("/api/get-webhook", params={"id": f"admin/{name}"}))["data"] is None
    ok_body(admin.post("/api/add-webhook", json={"owner": b, "name": name, "url": "https://example.com/x"}))
    assert ok_body(boss.get("/api/get-webhook", params={"id": f"{b}/{name}"}))["data"] is None
    assert ok_body(boss.get("/api/get-webhook", params={"id": f"{a}/{name}"}))["data"] is None


def test_other_admin_owned_kinds_keep_their_owner_rule(admin, two_orgs):
    a, _ = two_orgs
    body = admin.post("/api/add-application", json={"owner": a, "name": unique("app"), "organization": a}).json()
    assert body["status"] == "error" and body["msg"] == "The owner of a application must be admin"
