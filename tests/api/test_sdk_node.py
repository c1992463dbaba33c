"""Compatibility: the official Casdoor Node.js SDK (casdoor-nodejs-sdk 1.24.0) as a real client.

tests/node/sdk_client.mjs runs a batch of SDK calls in one node process (node starts
slowly: one process per test, never per call) and prints each call's outcome. Every
family the SDK covers with CRUD is one declaration in FAMILIES; the tests are generic:
add, get, list, update the object as read, delete, then read null.
The Node SDK sends Basic credentials and JSON, always prefixes ids with its orgName
('admin' for organization, application and token), overwrites the owner the same way,
never checks `status` and throws on any non-2xx answer: every answer is checked to be
HTTP 200, JSON, with the seven envelope keys.

Needs node on PATH and `make node-sdk` (npm ci in tests/node; `make test` runs it): skipped without them,
except under CI=true, where it fails."""

from __future__ import annotations

import datetime
import json
import math
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlmodel import delete, select

from iam_console import models as m
from iam_console.commerce.tables import Payment, Plan, Pricing, Product, Subscription
from iam_console.core import kinds
from iam_console.core.seed import USER_MODEL_TEXT
from iam_console.db import session_scope
from iam_console.identity.passwords import verify_password
from tests.api import sdk_server
from tests.api.conftest import ENVELOPE
from tests.api.node_packages import node_with
from tests.api.sdk_server import api_server, seeded_credentials  # noqa: F401

ORG = "built-in"
ADMIN = "admin"
APP = "app-built-in"
SDK_VERSION = "1.24.0"
NODE_DIR = Path(__file__).resolve().parents[1] / "node"
CLIENT = NODE_DIR / "sdk_client.mjs"
NODE_TIMEOUT_SECONDS = 60
ENVELOPE_KEYS = sorted(ENVELOPE)

# --- the node program ---

@pytest.fixture(scope="session")
def node() -> str:
    return node_with("casdoor-nodejs-sdk", SDK_VERSION)


@dataclass
class Node:
    """Runs SDK calls through tests/node/sdk_client.mjs as app-built-in, organization built-in."""

    executable: str
    endpoint: str
    client_id: str
    client_secret: str
    certificate: str

    def run(self, *calls: dict[str, Any], secret: str | None = None) -> list[dict[str, Any]]:
        job = {"endpoint": self.endpoint, "clientId": self.client_id,
               "clientSecret": self.client_secret if secret is None else secret,
               "certificate": self.certificate, "orgName": ORG, "appName": APP, "calls": list(calls)}
        process = subprocess.run([self.executable, str(CLIENT)], input=json.dumps(job), capture_output=True,
                                 text=True, timeout=NODE_TIMEOUT_SECONDS, cwd=NODE_DIR)
        assert process.returncode == 0, process.stderr
        answers = [json.loads(line) for line in process.stdout.splitlines()]
        assert len(answers) == len(calls), process.stdout
        for call, answer in zip(calls, answers, strict=True):
            where = f"{call['method']}{tuple(call.get('args', ()))}"
            assert answer["ok"], f"{where} threw: {answer}"
            # HTTP 200, JSON, every envelope key
            assert answer["httpStatus"] == 200, where
            assert answer["contentType"].startswith("application/json"), where
            assert answer["keys"] == ENVELOPE_KEYS, where
        return answers


def call(method: str, *args: Any, org: str | None = None) -> dict[str, Any]:
    """One SDK call; org replaces the SDK's orgName for it."""
    return {"method": method, "args": list(args), **({"orgName": org} if org else {})}


def read(index: int, **changes: Any) -> dict[str, Any]:
    """An argument: the data call `index` got back, with `changes` applied (sdk_client.mjs)."""
    return {"$ref": index, "set": changes}


def ok(answer: dict[str, Any]) -> Any:
    assert answer["status"] == "ok", answer
    return answer["data"]


def affected(answer: dict[str, Any]) -> None:
    assert ok(answer) == "Affected", answer


def absent(kind: str, answer: dict[str, Any]) -> None:
    """What reading a missing record answers: null, or the error Casdoor answers for this kind."""
    if kinds.of(kind).missing_is_error:
        assert answer["status"] == "error" and answer["msg"].endswith("does not exist"), answer
    else:
        assert ok(answer) is None, answer


@pytest.fixture
def sdk(node, api_server) -> Node:  # noqa: F811
    credentials = seeded_credentials()
    return Node(node, api_server, credentials.client_id, credentials.client_secret, credentials.certificate)


@pytest.fixture
def leftovers(database):
    """remember(table, owner, name): rows a failed test may leave behind are deleted afterwards."""
    rows: list[tuple[type[m.Named], str, str]] = []
    yield lambda table, owner, name: rows.append((table, owner, name))
    with session_scope() as db:
        for table, owner, name in rows:
            db.exec(delete(table).where(table.owner == owner, table.name == name))


# --- the families ---

@dataclass(frozen=True)
class Family:
    """One SDK family: get{Cap}s, get{Cap}, add{Cap}, update{Cap}, delete{Cap}."""

    name: str
    table: type[m.Named]
    fields: Callable[[str], dict[str, Any]]  # a valid object's fields, given its name
    change: tuple[str, Any]  # (field, new value) for the update test
    owner: str = ORG  # the owner the SDK gives objects (its orgName, or 'admin')
    org: str | None = None  # the orgName the SDK is configured with for this family, if not built-in
    list_args: tuple = ()  # the arguments of get{Cap}s, for the families whose list takes some
    list_scope: str = "owner"  # what get-Xs?owner= returns: "owner", "shared" (owner or admin), "all"

    @property
    def cap(self) -> str:
        return self.name[0].upper() + self.name[1:]

    def __str__(self) -> str:
        return self.name

    def new_name(self) -> str:
        return f"node-{self.name}-{uuid.uuid4().hex[:8]}"

    def build(self, name: str) -> dict[str, Any]:
        """A new object as the SDK's own suites build one: a millisecond UTC createdTime
        (new Date().toISOString()) and the family's fields."""
        created = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
        return {"owner": self.owner, "name": name, "createdTime": created.replace("+00:00", "Z"),
                **self.fields(name)}

    def call(self, verb: str, *args: Any) -> dict[str, Any]:
        if verb == "list":
            return call(f"get{self.cap}s", *self.list_args, org=self.org)
        return call(f"{verb}{self.cap}", *args, org=self.org)


def _permission(name: str) -> dict[str, Any]:
    # the SDK sends the model as a full id, and the domains must be empty
    return {"displayName": f"Permission {name}", "users": [f"{ORG}/{ADMIN}"], "roles": [], "domains": [],
            "model": f"{ORG}/user-model-built-in", "resourceType": "Application", "resources": [APP],
            "actions": ["Read"], "effect": "Allow", "isEnabled": True}


FAMILIES = [
    Family("organization", m.Organization, owner=ADMIN, list_scope="all",
           fields=lambda n: {"displayName": f"Org {n}", "websiteUrl": "https://example.com",
                             "passwordType": "argon2id", "languages": ["en"], "initScore": 10},
           change=("displayName", "Organization renamed")),
    Family("application", m.Application, owner=ADMIN, list_scope="all",
           fields=lambda n: {"displayName": f"App {n}", "organization": ORG, "cert": "cert-built-in",
                             "homepageUrl": "https://example.com", "expireInHours": 168},
           change=("description", "An application changed by the Node SDK")),
    Family("provider", m.Provider, list_scope="shared",
           fields=lambda n: {"displayName": f"Provider {n}", "category": "Email", "type": "Default",
                             "host": "smtp.example.com", "port": 465},
           change=("displayName", "Provider renamed")),
    Family("role", m.Role,
           fields=lambda n: {"displayName": f"Role {n}", "description": "a role", "users": [f"{ORG}/{ADMIN}"],
                             "roles": [], "domains": [], "isEnabled": True},
           change=("description", "A role changed by the Node SDK")),
    Family("permission", m.Permission, fields=_permission,
           change=("description", "A permission changed by the Node SDK")),
    Family("group", m.Group,
           fields=lambda n: {"displayName": f"Group {n}", "type": "Virtual", "parentId": ORG, "isEnabled": True},
           change=("displayName", "Group renamed")),
    Family("model", m.CasbinModel,
           fields=lambda n: {"displayName": f"Model {n}", "modelText": USER_MODEL_TEXT},
           change=("displayName", "Model renamed")),
    Family("adapter", m.Adapter,
           fields=lambda n: {"type": "Database", "databaseType": "mysql", "host": "db.example.com", "port": 3306,
                             "user": "casbin", "database": "casbin", "table": "casbin_rule"},
           change=("host", "db2.example.com")),
    Family("enforcer", m.Enforcer,
           fields=lambda n: {"displayName": f"Enforcer {n}", "model": f"{ORG}/user-model-built-in",
                             "adapter": f"{ORG}/user-adapter-built-in"},
           change=("description", "An enforcer changed by the Node SDK")),
    Family("token", m.Token, owner=ADMIN, list_args=(1, 1000), list_scope="all",
           fields=lambda n: {"application": APP, "organization": ORG, "user": ADMIN, "expiresIn": 3600,
                             "scope": "read", "tokenType": "Bearer"},
           change=("scope", "read write")),
    # Webhooks and syncers belong to 'admin' here: the SDK is configured with orgName 'admin' for them;
    # with orgName built-in (owner built-in, read as built-in/<name>) they are in test_sdk_node_calls.py.
    Family("webhook", m.Webhook, owner=ADMIN, org=ADMIN, list_scope="all",
           fields=lambda n: {"organization": ORG, "url": "https://hooks.example.com/in", "method": "POST",
                             "contentType": "application/json", "events": ["signup"], "isEnabled": True},
           change=("url", "https://hooks.example.com/changed")),
    Family("syncer", m.Syncer, owner=ADMIN, org=ADMIN, list_scope="all",
           fields=lambda n: {"organization": ORG, "type": "Database", "databaseType": "mysql",
                             "host": "db.example.com", "port": 3306, "user": "sync", "database": "hr",
                             "table": "people", "syncInterval": 10},
           change=("host", "db3.example.com")),
    Family("cert", m.Cert, list_scope="shared",
           fields=lambda n: {"displayName": f"Cert {n}", "scope": "JWT", "type": "x509",
                             "cryptoAlgorithm": "RS256", "bitSize": 2048, "expireInYears": 20},
           change=("displayName", "Cert renamed")),
    Family("subscription", Subscription,
           fields=lambda n: {"displayName": f"Subscription {n}", "user": ADMIN, "period": "Monthly",
                             "state": "Active"},
           change=("description", "A subscription changed by the Node SDK")),
    Family("plan", Plan,
           fields=lambda n: {"displayName": f"Plan {n}", "price": 9.5, "currency": "USD", "period": "Monthly",
                             "isEnabled": True},
           change=("description", "A plan changed by the Node SDK")),
    Family("pricing", Pricing,
           fields=lambda n: {"displayName": f"Pricing {n}", "application": APP, "trialDuration": 7,
                             "isEnabled": True},
           change=("description", "A pricing changed by the Node SDK")),
    Family("product", Product,
           fields=lambda n: {"displayName": f"Product {n}", "currency": "USD", "price": 12.5, "quantity": 10,
                             "state": "Published"},
           change=("description", "A product changed by the Node SDK")),
    Family("payment", Payment,
           fields=lambda n: {"displayName": f"Payment {n}", "provider": "provider_payment_dummy", "type": "Dummy",
                             "currency": "USD", "price": 3.25, "user": ADMIN, "state": "Created"},
           change=("displayName", "Payment renamed")),
    # getResources(owner, user, field, value, sortField, sortOrder) takes its filters as arguments
    Family("resource", m.Resource, list_args=(ORG, "", "", "", "", ""),
           fields=lambda n: {"user": ADMIN, "application": APP, "tag": "custom", "fileName": f"{n}.txt",
                             "fileType": "text", "fileFormat": ".txt", "fileSize": 120,
                             "url": f"https://files.example.com/{n}.txt"},
           change=("description", "A resource changed by the Node SDK")),
]


def families() -> list:
    return [pytest.param(family, id=family.name) for family in FAMILIES]


def instant(created_time: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(created_time.replace("Z", "+00:00"))


def ident(row: dict[str, Any]) -> tuple[str, str]:
    return row["owner"], row["name"]


def stored_ids(family: Family) -> set[tuple[str, str]]:
    return sdk_server.stored_ids(family.table, family.owner, family.list_scope)


# --- every family ---

@pytest.mark.parametrize("family", families())
def test_add_get_list_update_delete(sdk, leftovers, family: Family):
    name = family.new_name()
    leftovers(family.table, family.owner, name)
    sent = family.build(name)
    attribute, value = family.change
    assert sent.get(attribute) != value
    (added, got, listed, updated, reread, deleted, missing, relisted) = sdk.run(
        family.call("add", sent),
        family.call("get", name),
        family.call("list"),
        # the object as read goes back whole, with one field changed (the console's and the SDK's way)
        family.call("update", read(1, **{attribute: value})),
        family.call("get", name),
        family.call("delete", read(4)),
        family.call("get", name),
        family.call("list"),
    )
    affected(added)
    obj = ok(got)
    assert ident(obj) == (family.owner, name)
    # the same instant, milliseconds included (trailing zeros of the fraction are not written back)
    assert instant(obj["createdTime"]) == instant(sent["createdTime"]), "createdTime keeps its precision"
    for key, expected in family.fields(name).items():
        assert obj[key] == expected, f"{family.name}.{key}"
    assert (family.owner, name) in {ident(row) for row in ok(listed)}

    affected(updated)
    changed = ok(reread)
    assert changed[attribute] == value
    assert changed["createdTime"] == obj["createdTime"]

    affected(deleted)
    absent(family.name, missing)
    assert (family.owner, name) not in {ident(row) for row in ok(relisted)}


@pytest.mark.parametrize("family", families())
def test_list_returns_every_row(sdk, leftovers, family: Family):
    names = [family.new_name() for _ in range(3)]
    for name in names:
        leftovers(family.table, family.owner, name)
    *adds, listed = sdk.run(*(family.call("add", family.build(name)) for name in names), family.call("list"))
    for answer in adds:
        affected(answer)
    rows = ok(listed)
    seen = [ident(row) for row in rows]
    assert len(seen) == len(set(seen)), "a row came back twice"
    assert set(seen) == stored_ids(family)
    assert {(family.owner, name) for name in names} <= set(seen)


def test_reading_missing_objects_is_null(sdk):
    answers = sdk.run(*(family.call("get", family.new_name()) for family in FAMILIES))
    for family, answer in zip(FAMILIES, answers, strict=True):
        absent(family.name, answer)


def test_deleting_a_missing_object_is_unaffected(sdk):
    answers = sdk.run(*(family.call("delete", family.build(family.new_name())) for family in FAMILIES))
    for family, answer in zip(FAMILIES, answers, strict=True):
        assert (family.name, ok(answer)) == (family.name, "Unaffected")


# --- tokens: the only family the SDK pages (getTokens(p, pageSize)) ---

def test_token_pages_are_disjoint_and_complete(sdk, leftovers):
    family = next(family for family in FAMILIES if family.name == "token")
    names = [family.new_name() for _ in range(3)]
    for name in names:
        leftovers(m.Token, ADMIN, name)
    with session_scope() as db:
        before = len(db.exec(select(m.Token.name)).all())
    size = 2
    pages = math.ceil((before + len(names)) / size)
    answers = sdk.run(*(family.call("add", family.build(name)) for name in names),
                      *(call("getTokens", page, size) for page in range(1, pages + 2)))
    for answer in answers[:len(names)]:
        affected(answer)
    expected = stored_ids(family)
    assert len(expected) == before + len(names)
    seen: list[tuple[str, str]] = []
    for page, answer in enumerate(answers[len(names):], start=1):
        rows = ok(answer)
        assert answer["data2"] == len(expected), f"page {page}"
        if page <= pages:
            assert len(rows) == (size if page < pages else len(expected) - size * (pages - 1)), f"page {page}"
            seen.extend(ident(row) for row in rows)
    assert len(seen) == len(set(seen)), "a row came back on two pages"
    assert set(seen) == expected


# --- users ---

def _stored_user(name: str) -> m.User | None:
    with session_scope() as db:
        return db.exec(select(m.User).where(m.User.owner == ORG, m.User.name == name)).first()


def _sign_in(api_server: str, username: str, password: str) -> dict:  # noqa: F811
    response = httpx.post(f"{api_server}/api/login", json={
        "application": APP, "organization": ORG, "username": username, "password": password, "type": "login"})
    assert response.status_code == 200
    return response.json()


def test_user_crud_keeps_the_password_behind_the_mask(sdk, api_server, leftovers):  # noqa: F811
    name = f"node-user-{uuid.uuid4().hex[:8]}"
    password = "Node-pass-1234"
    leftovers(m.User, ORG, name)
    user = {"owner": ORG, "name": name, "displayName": f"User {name}", "email": f"{name}@example.com",
            "password": password}
    added, got, listed = sdk.run(call("addUser", user), call("getUser", name), call("getUsers"))
    affected(added)
    stored = _stored_user(name)
    assert stored.password != password, "the password is stored hashed"
    assert verify_password(password, stored.password, stored.password_type, stored.password_salt)
    obj = ok(got)
    assert (obj["owner"], obj["name"], obj["email"], obj["displayName"]) == (ORG, name, f"{name}@example.com",
                                                                         f"User {name}")
    assert obj["password"] == "***"
    rows = ok(listed)
    assert name in {row["name"] for row in rows}
    assert all(row["password"] in ("", "***") for row in rows)
    with session_scope() as db:
        assert {row["name"] for row in rows} == set(db.exec(select(m.User.name).where(m.User.owner == ORG)))

    # the user as read, password '***' included, goes back with a new display name
    got, updated, reread = sdk.run(call("getUser", name), call("updateUser", read(0, displayName="Renamed by Node")),
                                   call("getUser", name))
    affected(updated)
    assert ok(reread)["displayName"] == "Renamed by Node"
    assert _stored_user(name).password == stored.password
    signed_in = _sign_in(api_server, name, password)
    assert (signed_in["status"], signed_in["data"]) == ("ok", f"{ORG}/{name}"), signed_in

    deleted, missing = sdk.run(call("deleteUser", {"owner": ORG, "name": name}), call("getUser", name))
    affected(deleted)
    assert ok(missing) is None
    assert _stored_user(name) is None
    assert _sign_in(api_server, name, password)["status"] == "error"


def test_user_count(sdk):
    # the Node SDK sends isOnline=true / false
    online, offline = sdk.run(call("getUserCount", True), call("getUserCount", False))
    with session_scope() as db:
        flags = db.exec(select(m.User.is_online).where(m.User.owner == ORG)).all()
    assert ok(online) == sum(1 for flag in flags if flag)
    assert ok(offline) == sum(1 for flag in flags if not flag)


def test_set_password_multipart(sdk, api_server, leftovers):  # noqa: F811
    name = f"node-pw-{uuid.uuid4().hex[:8]}"
    leftovers(m.User, ORG, name)
    added, changed = sdk.run(
        call("addUser", {"owner": ORG, "name": name, "displayName": name, "password": "Old-pass-1234"}),
        call("setPassword", {"owner": ORG, "name": name, "oldPassword": "Old-pass-1234",
                             "newPassword": "New-pass-5678"}))
    affected(added)
    assert changed["status"] == "ok", changed
    assert _sign_in(api_server, name, "New-pass-5678")["status"] == "ok"
    assert _sign_in(api_server, name, "Old-pass-1234")["status"] == "error"


# --- sessions: getSession(name, application) sends sessionPkId=<org>/<name>/<application> ---

def test_session_add_get_list_update_delete(sdk, leftovers):
    # a user of its own, so no real sign-in is touched; deleteSession sends only ?id=<org>/<name>,
    # which the server reads as the session of app-built-in
    name = f"node-session-{uuid.uuid4().hex[:8]}"
    leftovers(m.User, ORG, name)
    leftovers(m.Session, ORG, name)
    session = {"owner": ORG, "name": name, "application": APP, "createdTime": "", "sessionId": ["node-s1"]}
    (user, added, got, listed, updated, reread, deleted, missing, relisted, removed) = sdk.run(
        call("addUser", {"owner": ORG, "name": name, "displayName": name, "password": "Node-pass-1234"}),
        call("addSession", session),
        call("getSession", name, APP),
        call("getSessions"),
        call("updateSession", read(2, sessionId=["node-s1", "node-s2"])),
        call("getSession", name, APP),
        call("deleteSession", read(5)),
        call("getSession", name, APP),
        call("getSessions"),
        call("deleteUser", {"owner": ORG, "name": name}),
    )
    affected(user)
    affected(added)
    obj = ok(got)
    assert (obj["owner"], obj["name"], obj["application"], obj["sessionId"]) == (ORG, name, APP, ["node-s1"])
    assert obj["createdTime"]
    assert (ORG, name, APP) in {(row["owner"], row["name"], row["application"]) for row in ok(listed)}
    affected(updated)
    assert ok(reread)["sessionId"] == ["node-s1", "node-s2"]
    affected(deleted)
    assert ok(missing) is None
    assert name not in {row["name"] for row in ok(relisted)}
    affected(removed)


# --- resources: listed with the SDK's own filters ---

def test_resources_filtered_and_sorted(sdk, leftovers):
    family = next(family for family in FAMILIES if family.name == "resource")
    names = sorted(family.new_name() for _ in range(3))
    for name in names:
        leftovers(m.Resource, ORG, name)
    *adds, everything, one, ordered = sdk.run(
        *(family.call("add", family.build(name)) for name in reversed(names)),
        call("getResources", ORG, ADMIN, "", "", "", ""),
        call("getResources", ORG, ADMIN, "name", names[0], "", ""),
        call("getResources", ORG, ADMIN, "tag", "custom", "name", "ascend"))
    for answer in adds:
        affected(answer)
    assert set(names) <= {row["name"] for row in ok(everything)}
    assert [row["name"] for row in ok(one)] == [names[0]]
    listed = [row["name"] for row in ok(ordered)]
    assert listed == sorted(listed) and set(names) <= set(listed)


# --- groups, certs, credentials ---

def test_the_built_in_cert_is_listed_with_the_sdk_certificate(sdk):
    # getCert always reads <orgName>/name, so the shared admin/cert-built-in
    # is reachable only through getCerts (owner built-in lists the shared certs too)
    (listed,) = sdk.run(call("getCerts"))
    built_in = {ident(row): row for row in ok(listed)}[(ADMIN, "cert-built-in")]
    assert built_in["certificate"] == sdk.certificate


def test_a_wrong_basic_secret_runs_as_anonymous(sdk):
    # wrong Basic credentials are ignored, the request is anonymous
    roles, user = sdk.run(call("getRoles"), call("getUser", ADMIN), secret="wrong-secret")
    for answer in (roles, user):
        assert (answer["status"], answer["data"]) == ("error", "Please login first"), answer


# --- MFA: multipart forms (deleteMfa too, where Casdoor's own SDK for Python uses the query) ---

def test_mfa_calls(sdk, leftovers):
    name = f"node-mfa-{uuid.uuid4().hex[:8]}"
    leftovers(m.User, ORG, name)
    user = {"owner": ORG, "name": name}
    answers = sdk.run(
        call("addUser", {**user, "displayName": name, "email": f"{name}@corp.test", "phone": "2025550143",
                         "countryCode": "US"}),
        call("initiateMfa", {**user, "mfaType": "app"}),  # an application may not set up for a user
        call("enableMfa", {**user, "mfaType": "app"}),  # nor enable the app type
        call("enableMfa", {**user, "mfaType": "email"}),
        call("enableMfa", {**user, "mfaType": "sms"}),
        call("setPreferredMfa", {**user, "mfaType": "sms"}),
        call("getUser", name),
        call("deleteMfa", ORG, name),
        call("getUser", name))
    added, initiated, app_enabled, email, sms, preferred, with_mfa, deleted, without_mfa = answers
    affected(added)
    assert initiated["status"] == "error" and "Only the user may set up" in initiated["msg"]
    assert app_enabled["status"] == "error" and "cannot enable the app type" in app_enabled["msg"]
    ok(email)
    ok(sms)
    assert [p["mfaType"] for p in ok(preferred) if p["isPreferred"]] == ["sms"]
    stored = ok(with_mfa)
    assert stored["mfaEmailEnabled"] and stored["mfaPhoneEnabled"] and stored["preferredMfaType"] == "sms"
    assert {p["mfaType"] for p in stored["multiFactorAuths"] if p["enabled"]} == {"email", "sms"}
    assert not any(p["enabled"] for p in ok(deleted))
    cleared = ok(without_mfa)
    assert not (cleared["mfaEmailEnabled"] or cleared["mfaPhoneEnabled"] or cleared["preferredMfaType"])
