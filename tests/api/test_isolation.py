"""No organization reaches another's data, through any route.

Every /api route is taken from the application's own route table (a new route
that this test does not know how to call fails it; an extension's kind is called through its
generic routes, and an extra route that declares the record it acts on through that
declaration, neither named here), and called by each kind of
caller against records of organizations A and B: anonymous; of organization A, an
ordinary user and an admin by their session, by their access key and by a bearer
token, the client of an application of A (HTTP Basic, query, and its
client_credentials token), and the global admin's bearer token issued through an
application of A; and the global callers: the global admin's session and token,
and the client of the built-in application."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import features
from iam_console import models as m
from iam_console.api.app import api, route_table
from iam_console.api.openapi import RECORD_ROUTE
from iam_console.core import crud, defaults
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY, Kind, Ownership
from iam_console.db import session_scope
from tests.api.workbooks import of_records, upload
from tests.conftest import ADMIN_PASSWORD, unique
from tests.pictures import png

PASSWORD = "Isolation-pass-1"
REDIRECT = "https://rp.example.com/callback"
# Routes outside the CRUD families, and what anonymous callers get from them.
# (and the catch-all answering unknown /api paths with an error envelope)
ACCOUNT_ROUTES = {"/api/login", "/api/logout", "/api/get-account", "/api/{path:path}"}
# Fields a valid record of some kinds needs beyond owner and name; a kind not named here gets
# what the console's Add gives a new record of it (its rules' `defaults` and `new`, core/defaults.py),
# so that an extension's kind is covered without being named here.
REQUIRED = {
    "permission": {"users": ["{org}/*"], "resources": ["app-built-in"], "actions": ["Read"]},
    # generated on save: each organization's cert has a private key to protect
    "cert": {"type": "x509", "cryptoAlgorithm": "ES256"},
}
BUILT_IN_KINDS = {kind.name for kind in features.CORE.kinds}  # valid with owner and name, or in REQUIRED
# Kinds addressed by more than owner/name.
IDENTITY = {"session": {"application": "app-built-in"}}


@dataclass
class World:
    a: str
    b: str
    names: dict[str, dict[str, str]]  # kind -> org -> record name
    client_id: str
    client_secret: str
    app_a: m.Application  # an application of A, shared, allowing the grants the callers use
    app_global: m.Application  # an application of the built-in organization, the same way


def _required(kind: Kind, org: str) -> dict:
    """REQUIRED's fields of the kind, else the fields of a new record the console's Add makes."""
    if kind.name in REQUIRED or kind.name in BUILT_IN_KINDS:
        return REQUIRED.get(kind.name, {})
    with session_scope() as db:
        fields = defaults.new_record(db, Actor(application=_app()), kind.name, org)
    return {key: value for key, value in fields.items()
            if key not in ("owner", m.wire_name(kind.model, "name"), kind.organization_attr)}


def _record(kind: Kind, org: str) -> dict:
    body = {"owner": org, m.wire_name(kind.model, "name"): unique(f"{kind.name}-{org}")}
    if kind.ownership is Ownership.ADMIN:
        body["owner"] = "admin"
        if kind.name != "organization":
            body[kind.organization_attr] = org
    for key, value in _required(kind, org).items():
        body[key] = [v.replace("{org}", org) for v in value] if isinstance(value, list) else value
    return {**body, **IDENTITY.get(kind.name, {})}


@pytest.fixture(scope="module")
def world(database) -> World:
    god = Actor(application=_app())
    a, b = unique("orga"), unique("orgb")
    names: dict[str, dict[str, str]] = {}
    with session_scope() as db:
        for org in (a, b):
            crud.add_record(db, god, REGISTRY["organization"],
                            {"owner": "admin", "name": org, "passwordType": "argon2id"})
            for user, admin in (("boss", True), ("alice", False)):
                crud.add_record(db, god, REGISTRY["user"], {
                    "owner": org, "name": user, "password": PASSWORD, "isAdmin": admin,
                    "accessKey": f"key-{user}-{org}", "accessSecret": f"secret-{user}-{org}"})
    for kind in REGISTRY.values():
        names[kind.name] = {}
        for org in (a, b):
            if kind.name == "organization":
                names[kind.name][org] = org
                continue
            body = _record(kind, org)
            with session_scope() as db:
                if kind.writable:
                    crud.add_record(db, god, kind, body)
                else:
                    db.add(kind.model(owner=org, name=body["name"], organization=org))
            names[kind.name][org] = body[m.wire_name(kind.model, "name")]
    app = _app()
    return World(a, b, names, app.client_id, app.client_secret, _oauth_app(a), _oauth_app("built-in"))


def _oauth_app(org: str) -> m.Application:
    """An application of `org`, shared (users of any organization sign in through it)."""
    body = {"owner": "admin", "name": unique(f"rp-{org}"), "organization": org, "cert": "cert-built-in",
            "clientId": secrets.token_hex(10), "clientSecret": secrets.token_hex(20), "isShared": True,
            "enablePassword": True, "redirectUris": [REDIRECT],
            "grantTypes": ["authorization_code", "client_credentials"]}
    with session_scope() as db:
        crud.add_record(db, Actor(application=_app()), REGISTRY["application"], body)
        return db.exec(select(m.Application).where(m.Application.name == body["name"])).one()


def _app() -> m.Application:
    with session_scope() as db:
        return db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()


def _signed_in(org: str, name: str, password: str) -> TestClient:
    client = TestClient(api)
    body = client.post("/api/login", json={"organization": org, "username": name, "password": password}).json()
    assert body["status"] == "ok", body
    return client


def _app_client(world: World) -> TestClient:
    client = TestClient(api)
    client.auth = (world.client_id, world.client_secret)  # HTTP Basic, as the Node SDK sends it
    return client


def _with_query(**params: str) -> TestClient:
    """A client sending these query parameters with every request."""
    client = TestClient(api)
    client.params = params
    return client


def _with_bearer(token: str) -> TestClient:
    client = TestClient(api)
    client.headers["Authorization"] = f"Bearer {token}"
    return client


def _token(app: m.Application, org: str, name: str, password: str) -> str:
    """An access token of org/name, signed in through `app` by the authorization code flow."""
    browser = TestClient(api)
    signed_in = browser.post("/api/login", params={
        "clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
        "state": "s"}, json={"application": app.name, "organization": org, "username": name, "password": password,
                             "type": "code"}).json()
    assert signed_in["status"] == "ok", signed_in
    answer = TestClient(api).post("/api/login/oauth/access_token", data={
        "grant_type": "authorization_code", "code": signed_in["data"], "redirect_uri": REDIRECT,
        "client_id": app.client_id, "client_secret": app.client_secret}).json()
    assert "access_token" in answer, answer
    return answer["access_token"]


def _client_token(app: m.Application) -> str:
    answer = TestClient(api).post("/api/login/oauth/access_token", data={
        "grant_type": "client_credentials", "client_id": app.client_id, "client_secret": app.client_secret}).json()
    assert "access_token" in answer, answer
    return answer["access_token"]


def _basic(app: m.Application) -> TestClient:
    client = TestClient(api)
    client.auth = (app.client_id, app.client_secret)  # HTTP Basic, as the Node SDK sends it
    return client


# Callers of organization A, each of which must stay within it.
A_CALLERS = ["user_a", "admin_a", "key_user_a", "key_admin_a", "bearer_user_a", "bearer_admin_a",
             "client_a", "client_a_query", "client_a_token", "bearer_global_admin_via_a"]
# Callers acting globally.
GLOBAL_CALLERS = ["app", "global_admin", "bearer_global_admin"]
SESSION_CALLERS = {"user_a", "admin_a", "global_admin"}


@pytest.fixture(scope="module")
def callers(world):
    a = world.a
    return {
        "anonymous": TestClient(api),
        "user_a": _signed_in(a, "alice", PASSWORD),
        "admin_a": _signed_in(a, "boss", PASSWORD),
        "key_user_a": _with_query(accessKey=f"key-alice-{a}", accessSecret=f"secret-alice-{a}"),
        "key_admin_a": _with_query(accessKey=f"key-boss-{a}", accessSecret=f"secret-boss-{a}"),
        "bearer_user_a": _with_bearer(_token(world.app_a, a, "alice", PASSWORD)),
        "bearer_admin_a": _with_bearer(_token(world.app_a, a, "boss", PASSWORD)),
        "client_a": _basic(world.app_a),
        "client_a_query": _with_query(clientId=world.app_a.client_id, clientSecret=world.app_a.client_secret),
        "client_a_token": _with_bearer(_client_token(world.app_a)),
        # the global admin signed in through an application an admin of A controls: an admin of A, no more
        "bearer_global_admin_via_a": _with_bearer(_token(world.app_a, "built-in", "admin", ADMIN_PASSWORD)),
        "app": _app_client(world),
        "global_admin": _signed_in("built-in", "admin", ADMIN_PASSWORD),
        "bearer_global_admin": _with_bearer(_token(world.app_global, "built-in", "admin", ADMIN_PASSWORD)),
    }


def api_routes() -> list[tuple[str, str]]:
    routes = [(method, path) for method, path in route_table() if path.startswith("/api/")]
    assert len(routes) > 100, "the route table looks empty"
    return routes


FAMILY = re.compile(r"^/api/(get-global|get|add|update|delete)-(.+)$")


def classify(path: str) -> tuple[str, Kind, bool]:
    """(operation, kind, is_list) for a CRUD route."""
    match = FAMILY.match(path)
    assert match, f"{path} is not a CRUD route and not in ACCOUNT_ROUTES: teach this test to call it"
    operation, noun = match.groups()
    for kind in REGISTRY.values():
        if noun == kind.plural_name:
            return operation, kind, True
        if noun == kind.name:
            return operation, kind, False
    raise AssertionError(f"{path}: no kind is called {noun}")


def belongs_to(kind: Kind, obj: dict, org: str) -> bool:
    if kind.name == "organization":
        return obj.get("name") == org
    if kind.ownership is Ownership.ADMIN:
        return obj.get(kind.organization_attr) == org
    return obj.get("owner") == org


def _exists(kind: Kind, owner: str, name: str) -> bool:
    with session_scope() as db:
        model = kind.model
        return db.exec(select(model.pk).where(model.owner == owner, model.name == name)).first() is not None


def _owner_of(world: World, kind: Kind, org: str) -> str:
    return "admin" if kind.ownership is Ownership.ADMIN else org


def call(client: TestClient, world: World, method: str, path: str, target_org: str) -> dict:
    """Call a route aimed at target_org's record (or list, or a new record in it)."""
    operation, kind, is_list = classify(path)
    name = world.names[kind.name][target_org]
    owner = _owner_of(world, kind, target_org)
    if is_list:
        params = {"owner": owner, "organization": target_org, "p": "1", "pageSize": "100"}
        return client.get(path, params=params).json()
    if operation == "get":
        return client.get(path, params={"id": f"{owner}/{name}"}).json()
    if operation == "add":
        return client.post(path, json=_record(kind, target_org)).json()
    identity = IDENTITY.get(kind.name, {})
    if operation == "update":
        return client.post(path, params={"id": f"{owner}/{name}"}, json={
            "owner": owner, "name": name, "displayName": "changed by another org", **identity}).json()
    return client.post(path, json={"owner": owner, "name": name, **identity}).json()


# The routes beyond the CRUD family: how to aim each at organization B, and
# whether an answer leaked B's data (rows: the list in data, if any).
def _rows(body: dict) -> list:
    data = body.get("data") if body.get("status") == "ok" else None
    return data if isinstance(data, list) else ([data] if isinstance(data, dict) else [])


def _event_of(organization: str) -> str:
    """The id of a webhook event of organization o's records (one made if there is none)."""
    with session_scope() as db:
        found = db.exec(select(m.WebhookEvent).where(m.WebhookEvent.organization == organization)).first()
        if found is None:
            found = m.WebhookEvent(owner="admin", name=unique("event"), webhook="admin/x", organization=organization,
                                   event_type="login", state="Success")
            db.add(found)
        return f"{found.owner}/{found.name}"


EXTRAS = {
    "/api/get-organization-names": lambda c, w, o: c.get("/api/get-organization-names"),
    "/api/get-default-application": lambda c, w, o: c.get("/api/get-default-application", params={"id": f"admin/{o}"}),
    "/api/get-organization-applications": lambda c, w, o: c.get("/api/get-organization-applications",
                                                                 params={"owner": "admin", "organization": o}),
    "/api/get-user-application": lambda c, w, o: c.get("/api/get-user-application", params={"id": f"{o}/boss"}),
    "/api/get-permissions-by-submitter": lambda c, w, o: c.get("/api/get-permissions-by-submitter"),
    # B's permission is out of reach as a missing one: Unaffected (tests/api/test_permission_requests.py
    # checks that it stays as it was)
    "/api/update-permissions": lambda c, w, o: c.post("/api/update-permissions", json=[
        {"owner": o, "name": w.names["permission"][o], "description": "hijacked"}]),
    "/api/get-user-count": lambda c, w, o: c.get("/api/get-user-count", params={"owner": o}),
    "/api/get-sorted-users": lambda c, w, o: c.get("/api/get-sorted-users", params={"owner": o, "sorter": "name"}),
    "/api/set-password": lambda c, w, o: c.post("/api/set-password", data={
        "userOwner": o, "userName": "boss", "oldPassword": PASSWORD, "newPassword": "Hijacked-pass-1"}),
    "/api/upload-resource": lambda c, w, o: c.post("/api/upload-resource", params={
        "owner": o, "user": "boss", "tag": "avatar"}, files={"file": ("boss.png", png(), "image/png")}),
    "/api/add-user-keys": lambda c, w, o: c.post("/api/add-user-keys", json={"owner": o, "name": "boss"}),
    "/api/check-user-password": lambda c, w, o: c.post("/api/check-user-password", params={"id": f"{o}/boss"},
                                                       json={"owner": o, "name": "boss", "password": PASSWORD}),
    "/api/remove-user-from-group": lambda c, w, o: c.post("/api/remove-user-from-group",
                                                          params={"owner": o, "name": "boss", "groupName": "g"}),
    "/api/get-dashboard": lambda c, w, o: c.get("/api/get-dashboard", params={"owner": o}),
    "/api/add-record": lambda c, w, o: c.post("/api/add-record", json={"owner": o, "organization": o,
                                                                       "action": "forged"}),
    # a workbook whose row names organization o as its owner
    "/api/upload-users": lambda c, w, o: upload(c, "/api/upload-users", of_records(
        {"owner": o, "name": unique("uploaded"), "password": PASSWORD, "isAdmin": "TRUE"})),
    "/api/upload-roles": lambda c, w, o: upload(c, "/api/upload-roles", of_records(
        {"owner": o, "name": unique("uploaded"), "users": f"{o}/boss"})),
    "/api/upload-permissions": lambda c, w, o: upload(c, "/api/upload-permissions", of_records(
        {"owner": o, "name": unique("uploaded"), "users": f"{o}/*", "resources": "app-built-in",
         "actions": "Read,Write"})),
    "/api/upload-groups": lambda c, w, o: upload(c, "/api/upload-groups", of_records(
        {"owner": o, "name": unique("uploaded"), "users": f"{o}/boss"})),
    # a code for the caller's own account, through organization o's application (and so its providers)
    "/api/send-verification-code": lambda c, w, o: c.post("/api/send-verification-code", data={
        "dest": f"new-address@{o}.test", "type": "email", "method": "reset",
        "applicationId": f"admin/{w.names['application'][o]}"}),
    # only ever the caller's own address: a code sent for someone else proves nothing
    "/api/reset-email-or-phone": lambda c, w, o: c.post("/api/reset-email-or-phone", data={
        "type": "email", "dest": f"boss@{o}.test", "code": "123456"}),
    # the directory behind organization o's LDAP server, and a forged entry synced into o
    "/api/get-ldap-users": lambda c, w, o: c.get("/api/get-ldap-users", params={"id": f"{o}/{w.names['ldap'][o]}"}),
    "/api/sync-ldap-users": lambda c, w, o: c.post("/api/sync-ldap-users", params={
        "id": f"{o}/{w.names['ldap'][o]}"}, json=[{"uid": "forged", "cn": "forged", "uuid": "forged"}]),
    # organization o's syncer run now, and a database connection tried as o's syncer
    "/api/run-syncer": lambda c, w, o: c.get("/api/run-syncer", params={"id": f"admin/{w.names['syncer'][o]}"}),
    "/api/test-syncer-db": lambda c, w, o: c.post("/api/test-syncer-db", json={
        "owner": "admin", "name": w.names["syncer"][o], "organization": o, "databaseType": "mysql",
        "host": "db.example.com", "port": 3306}),
    # multi-factor setup of organization o's admin: only the user sets up, only their admins enable or remove
    "/api/mfa/setup/initiate": lambda c, w, o: c.post("/api/mfa/setup/initiate", data={
        "owner": o, "name": "boss", "mfaType": "app"}),
    "/api/mfa/setup/verify": lambda c, w, o: c.post("/api/mfa/setup/verify", data={
        "owner": o, "name": "boss", "mfaType": "app", "passcode": "123456"}),
    "/api/mfa/setup/enable": lambda c, w, o: c.post("/api/mfa/setup/enable", data={
        "owner": o, "name": "boss", "mfaType": "email"}),
    "/api/set-preferred-mfa": lambda c, w, o: c.post("/api/set-preferred-mfa", data={
        "owner": o, "name": "boss", "mfaType": "email"}),
    "/api/delete-mfa": lambda c, w, o: c.post("/api/delete-mfa", params={"owner": o, "name": "boss"}),
    # records of o matching a field: what an admin may read of o's audit trail, nothing for others
    "/api/get-records-filter": lambda c, w, o: c.post("/api/get-records-filter", json={"organization": o}),
    # o's audit trail as CSV: refused before a line is sent
    "/api/export-records": lambda c, w, o: c.get("/api/export-records", params={"organizationName": o}),
    # mail through organization o's provider, named
    "/api/send-email": lambda c, w, o: c.post("/api/send-email", json={
        "title": "t", "content": "c", "sender": "s", "receivers": [f"x@{o}.test"],
        "provider": w.names["provider"][o]}),
    # organization o's invitation, mailed
    "/api/send-invitation": lambda c, w, o: c.post("/api/send-invitation", params={
        "id": f"{o}/{w.names['invitation'][o]}"}, json=[f"x@{o}.test"]),
    # acting as organization o's admin: for a global admin's console session only
    "/api/impersonate-user": lambda c, w, o: c.post("/api/impersonate-user", data={"owner": o, "name": "boss"}),
    # Casbin: organization o's enforcer, permissions, role and user (tests/api/test_enforce_rights.py)
    "/api/enforce": lambda c, w, o: c.post("/api/enforce", params={"enforcerId": f"{o}/{w.names['enforcer'][o]}"},
                                           json=["boss", "data", "read"]),
    "/api/batch-enforce": lambda c, w, o: c.post("/api/batch-enforce", params={"owner": o},
                                                 json=[["boss", "data", "read"]]),
    "/api/get-all-objects": lambda c, w, o: c.get("/api/get-all-objects", params={"userId": f"{o}/boss"}),
    "/api/get-all-actions": lambda c, w, o: c.get("/api/get-all-actions", params={"userId": f"{o}/boss"}),
    "/api/get-all-roles": lambda c, w, o: c.get("/api/get-all-roles", params={"userId": f"{o}/boss"}),
    "/api/get-permissions-by-role": lambda c, w, o: c.get("/api/get-permissions-by-role", params={
        "id": f"{o}/{w.names['role'][o]}"}),
    "/api/get-policies": lambda c, w, o: c.get("/api/get-policies", params={"id": f"{o}/{w.names['enforcer'][o]}"}),
    "/api/get-filtered-policies": lambda c, w, o: c.post("/api/get-filtered-policies", params={
        "id": f"{o}/{w.names['enforcer'][o]}"}, json=[]),
    "/api/add-policy": lambda c, w, o: c.post("/api/add-policy", params={"id": f"{o}/{w.names['enforcer'][o]}"},
                                              json={"Ptype": "p", "V0": "forged"}),
    "/api/update-policy": lambda c, w, o: c.post("/api/update-policy", params={
        "id": f"{o}/{w.names['enforcer'][o]}"}, json=[{"Ptype": "p", "V0": "a"}, {"Ptype": "p", "V0": "b"}]),
    "/api/remove-policy": lambda c, w, o: c.post("/api/remove-policy", params={
        "id": f"{o}/{w.names['enforcer'][o]}"}, json={"Ptype": "p", "V0": "a"}),
    "/api/add-policies": lambda c, w, o: c.post("/api/add-policies", params={
        "id": f"{o}/{w.names['enforcer'][o]}"}, json=[{"Ptype": "p", "V0": "forged"}, {"Ptype": "p", "V0": "more"}]),
    "/api/remove-policies": lambda c, w, o: c.post("/api/remove-policies", params={
        "id": f"{o}/{w.names['enforcer'][o]}"}, json=[{"Ptype": "p", "V0": "a"}]),
    # every organization's enforcers: the global admins' alone
    "/api/refresh-engines": lambda c, w, o: c.post("/api/refresh-engines"),
    # the delivery log of organization o's records: its admins' alone (tests/api/test_webhook_events.py)
    "/api/get-webhook-events": lambda c, w, o: c.get("/api/get-webhook-events", params={"organization": o}),
    "/api/get-webhook-event-detail": lambda c, w, o: c.get("/api/get-webhook-event-detail",
                                                           params={"id": _event_of(o)}),
    "/api/replay-webhook-event": lambda c, w, o: c.post("/api/replay-webhook-event", params={"id": _event_of(o)}),
    "/api/delete-webhook-event": lambda c, w, o: c.post("/api/delete-webhook-event", json=dict(zip(
        ("owner", "name"), _event_of(o).split("/"), strict=True))),
    # the host and every organization's traffic: the global admins' alone (tests/api/test_system.py)
    "/api/get-system-info": lambda c, w, o: c.get("/api/get-system-info"),
    "/api/get-prometheus-info": lambda c, w, o: c.get("/api/get-prometheus-info"),
    "/api/metrics": lambda c, w, o: c.get("/api/metrics"),
    # commerce (tests/api/test_commerce_api.py): a user buys from their own organization, an admin for its
    # users; orders, payments and invoices are their user's and their organization's admins'
    "/api/buy-product": lambda c, w, o: c.post("/api/buy-product", params={
        "id": f"{o}/{w.names['product'][o]}", "providerName": "provider_balance"}),
    "/api/place-order": lambda c, w, o: c.post("/api/place-order", params={"owner": o}, json={
        "productInfos": [{"name": w.names["product"][o], "quantity": 1}]}),
    "/api/pay-order": lambda c, w, o: c.post("/api/pay-order", params={
        "id": f"{o}/{w.names['order'][o]}", "providerName": "provider_balance"}),
    "/api/cancel-order": lambda c, w, o: c.post("/api/cancel-order", params={"id": f"{o}/{w.names['order'][o]}"}),
    "/api/get-user-orders": lambda c, w, o: c.get("/api/get-user-orders", params={"owner": o, "user": "boss"}),
    "/api/get-user-payments": lambda c, w, o: c.get("/api/get-user-payments", params={"owner": o, "user": "boss"}),
    "/api/invoice-payment": lambda c, w, o: c.post("/api/invoice-payment", params={
        "id": f"{o}/{w.names['payment'][o]}"}),
    "/api/get-invoice": lambda c, w, o: c.get("/api/get-invoice", params={"id": f"{o}/{w.names['payment'][o]}"}),
    # a file on success: only ever called here by callers who must get the error envelope
    "/api/download-cert": lambda c, w, o: c.get("/api/download-cert", params={
        "id": f"{o}/{w.names['cert'][o]}", "file": "privateKey"}),
}


def _declared_record_routes() -> dict:
    """The extra routes whose description declares the record they act on (api/openapi.py
    `acts_on_record`, an extension's routes among them), each aimed at organization o's record of
    that kind by ?id=owner/name with the body's example: EXTRAS need not name them."""
    declared = {}
    for path, operations in api.openapi()["paths"].items():
        for method, operation in operations.items():
            if RECORD_ROUTE not in operation or path in EXTRAS:
                continue
            kind = REGISTRY[operation[RECORD_ROUTE]["kind"]]
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            example = body.get("schema", {}).get("example")

            def aimed(c, w, o, kind=kind, method=method, path=path, example=example):
                ident = f"{_owner_of(w, kind, o)}/{w.names[kind.name][o]}"
                return c.request(method.upper(), path, params={"id": ident}, json=example)
            declared[path] = aimed
    return declared


DECLARED = _declared_record_routes()
EXTRAS.update(DECLARED)
# where a successful answer is allowed as long as it holds nothing of B
SAFE_IF_EMPTY_OF_B = {"/api/get-organization-names", "/api/get-organization-applications",
                      "/api/get-permissions-by-submitter", "/api/update-permissions", "/api/get-sorted-users",
                      "/api/get-records-filter"}


# OAuth routes authenticate by client credentials, codes or tokens, never by the
# session cookie: a signed-in console caller holding only its cookie gets nothing
# from them (their cross-organization cases are in tests/api/test_oauth.py).
OAUTH = {
    "/api/login/oauth/access_token": lambda c, w: c.post("/api/login/oauth/access_token",
                                                         data={"grant_type": "client_credentials"}),
    "/api/login/oauth/refresh_token": lambda c, w: c.post("/api/login/oauth/refresh_token",
                                                          data={"refresh_token": "x"}),
    "/api/login/oauth/introspect": lambda c, w: c.post("/api/login/oauth/introspect", data={"token": "x"}),
    "/api/login/oauth/revoke": lambda c, w: c.post("/api/login/oauth/revoke", data={"token": "x"}),
    "/api/login/oauth/par": lambda c, w: c.post("/api/login/oauth/par", data={"response_type": "code"}),
    "/api/device-auth": lambda c, w: c.post("/api/device-auth", data={"scope": "openid"}),
    "/api/userinfo": lambda c, w: c.get("/api/userinfo"),
    "/api/user": lambda c, w: c.get("/api/user"),
    # public in Casdoor: the application's name and logo for a valid client and redirect URI only
    "/api/get-app-login": lambda c, w: c.get("/api/get-app-login", params={
        "client_id": w.client_id, "response_type": "code", "redirect_uri": "https://evil.example/"}),
    # registration answers by the organization's policy and the Bearer token alone
    # (tests/api/test_client_registration.py): A allows none
    "/api/oauth/register": lambda c, w: c.post("/api/oauth/register", params={"organization": w.a},
                                               json={"redirect_uris": ["https://rp.example/cb"]}),
    "/api/oauth/register/{client_id}": lambda c, w: c.get(f"/api/oauth/register/{w.client_id}"),
}
# sso-logout ends the caller's own sessions: called last, by a caller of its own; leaving an
# impersonation acts on the caller's own session alone (tests/api/test_impersonation.py)
SELF_ONLY = {"/api/sso-logout", "/api/exit-impersonate-user"}
# WebAuthn: registration and delete-credential act on the caller's own account alone; the
# sign-in routes are public (their attacks are in tests/api/test_webauthn.py)
WEBAUTHN = {"/api/webauthn/signup/begin", "/api/webauthn/signup/finish", "/api/webauthn/delete-credential",
            "/api/webauthn/signin/begin", "/api/webauthn/signin/finish"}
# public: health tells only that the server and its database answer (tests/api/test_wire_routes.py);
# a captcha is asked for and answered before any sign-in (tests/api/test_captcha.py)
# a forgotten password is recovered by someone who cannot sign in: the account's addresses are
# masked, codes go to its own address only, and the new password needs this browser's verified
# code (tests/api/test_recovery.py)
PUBLIC = {"/api/health", "/api/get-captcha", "/api/verify-captcha",
          "/api/get-invitation-info",  # without codes, quota or group (tests/api/test_invitation_info.py)
          "/api/get-email-and-phone", "/api/verify-code",
          "/api/signup",  # a new account of the application's own organization only (tests/api/test_signup.py)
          # a wallet sign-in's nonce: reads no record, bound to one application, provider and address
          # (tests/api/test_wallet.py)
          "/api/web3/nonce",
          "/api/get-version-info",  # the release and commit, as Casdoor answers them to anyone
          # a payment provider's: a forged one changes nothing (tests/api/test_commerce_api.py)
          "/api/notify-payment/{owner}/{payment}"}
# SAML: metadata (an application's public certificate and endpoints), single sign-on (answers
# the signed-in caller's own account, to the application's registered addresses only) and the
# ACS (acts on a Response signed by the provider's IdP, never on the cookie); their attacks are
# in tests/api/test_saml_idp.py and tests/api/test_saml_sp.py
SAML = {"/api/saml/metadata", "/api/saml/redirect/{owner}/{application}", "/api/get-saml-login", "/api/acs"}
# send through the caller's own organization's provider: no parameter names another
# organization (tests/api/test_messages.py); anonymous callers get nothing
OWN_ORGANIZATION = {"/api/send-sms": {"content": "c", "receivers": ["+15550100"]},
                    "/api/send-notification": {"content": "c"}}
# reads and writes no record: the model editor's Casbin calls over the texts they carry, for admins
# (tests/api/test_casbin_command.py)
TEXTS_ONLY = {"/api/run-casbin-command"}
# upstream identity providers: the start and the callback are public, each state bound to the browser
# that started it (tests/api/test_federation_api.py), Google One Tap's likewise (its credential verified
# against Google's keys, tests/api/test_google_one_tap.py); unlink acts on the caller's own account
# unless the caller is a global admin
FEDERATION = {"/api/federation/start", "/callback", "/api/unlink", "/api/federation/pending-mfa",
              "/api/federation/google-one-tap/start", "/api/federation/google-one-tap"}
OTHER_ROUTES = ACCOUNT_ROUTES | set(EXTRAS) | set(OAUTH) | SELF_ONLY | WEBAUTHN | PUBLIC | set(OWN_ORGANIZATION) \
    | TEXTS_ONLY | SAML | FEDERATION


@pytest.mark.parametrize("path", sorted(OWN_ORGANIZATION))
def test_sending_gives_anonymous_nothing(callers, path):
    body = callers["anonymous"].post(path, json=OWN_ORGANIZATION[path]).json()
    assert body["status"] == "error" and body["msg"] == "Please login first", (path, body)


@pytest.mark.parametrize("caller", ["anonymous", *A_CALLERS])
def test_unlink_acts_on_the_callers_own_account_only(callers, world, caller):
    with session_scope() as db:
        boss = db.exec(select(m.User).where(m.User.owner == world.b, m.User.name == "boss")).one()
        boss.third_party_ids = {"github": "boss-upstream-id"}
        db.add(boss)
    body = callers[caller].post("/api/unlink", json={"providerType": "GitHub",
                                                     "user": {"owner": world.b, "name": "boss"}}).json()
    assert body["status"] == "error" and body["msg"] in (
        "Please login first", "You are not the global admin, you can't unlink other users"), (caller, body)
    with session_scope() as db:
        boss = db.exec(select(m.User).where(m.User.owner == world.b, m.User.name == "boss")).one()
    assert boss.third_party_ids == {"github": "boss-upstream-id"}


def test_every_route_is_known():
    for _, path in api_routes():
        if path not in OTHER_ROUTES:
            classify(path)


B_CREDENTIAL = "Y3JlZGVudGlhbC1vZi1i"  # base64 of "credential-of-b", as credentials are stored


@pytest.mark.parametrize("caller", ["anonymous", *A_CALLERS, *GLOBAL_CALLERS])
def test_webauthn_acts_on_the_callers_own_account_only(callers, world, caller):
    with session_scope() as db:
        boss = db.exec(select(m.User).where(m.User.owner == world.b, m.User.name == "boss")).one()
        boss.webauthn_credentials = [{"ID": B_CREDENTIAL, "PublicKey": "", "Name": "B's key"}]
        db.add(boss)
    client = callers[caller]
    deleted = client.post("/api/webauthn/delete-credential", data={"credentialID": B_CREDENTIAL}).json()
    begun = client.get("/api/webauthn/signup/begin").json()
    finished = client.post("/api/webauthn/signup/finish", json={"id": B_CREDENTIAL}).json()
    if caller not in SESSION_CALLERS:  # registration is the console user's, from their session
        assert deleted["msg"] == begun["msg"] == finished["msg"] == "Please login first", (deleted, begun)
    else:
        me = client.get("/api/get-account").json()["data"]
        assert deleted["data"] == "Unaffected" and begun["publicKey"]["user"]["name"] == me["name"], begun
        assert finished["status"] == "error"
    # sign-in is public: it offers B's boss their own credentials only; a finish without its challenge fails
    offered = client.get("/api/webauthn/signin/begin", params={"owner": world.b, "name": "boss"}).json()
    assert [c["id"] for c in offered["publicKey"]["allowCredentials"]] == ["Y3JlZGVudGlhbC1vZi1i"]
    assert client.post("/api/webauthn/signin/finish", json={"id": B_CREDENTIAL}).json()["status"] == "error"
    with session_scope() as db:
        boss = db.exec(select(m.User).where(m.User.owner == world.b, m.User.name == "boss")).one()
        assert [c["ID"] for c in boss.webauthn_credentials] == [B_CREDENTIAL]


@pytest.mark.parametrize("caller", ["anonymous", "user_a", "admin_a", "global_admin"])
@pytest.mark.parametrize("path", sorted(OAUTH))
def test_a_session_cookie_opens_no_oauth_route(callers, world, caller, path):
    response = OAUTH[path](callers[caller], world)
    if response.status_code == 200:
        body = response.json()
        assert body.get("status") == "error" or body == {}, (path, body)  # revoke answers {} for anything
    else:
        assert response.status_code in (400, 401, 403) and "error" in response.json(), (path, response.text)


def test_sso_logout_ends_only_the_callers_own_sessions(world):
    assert TestClient(api).post("/api/sso-logout").json()["msg"] == "Please login first"
    name = unique("leaver")  # not a shared caller: sso-logout ends all of a user's sessions
    with session_scope() as db:
        for org in (world.a, world.b):
            crud.add_record(db, Actor(application=_app()), REGISTRY["user"],
                            {"owner": org, "name": name, "password": PASSWORD})
    mine = _signed_in(world.a, name, PASSWORD)
    other = _signed_in(world.b, name, PASSWORD)
    assert mine.post("/api/sso-logout").json()["data"] == f"{world.a}/{name}"
    assert mine.get("/api/get-account").json()["status"] == "error"
    assert other.get("/api/get-account").json()["data"]["owner"] == world.b


@pytest.mark.parametrize("path", sorted(EXTRAS))
def test_extras_give_anonymous_nothing(callers, world, path):
    body = EXTRAS[path](callers["anonymous"], world, world.a).json()
    assert body["status"] == "error" and body["msg"] == "Please login first", (path, body)


@pytest.mark.parametrize("caller", A_CALLERS)
@pytest.mark.parametrize("path", sorted(EXTRAS))
def test_extras_never_reach_organization_b(callers, world, caller, path):
    body = EXTRAS[path](callers[caller], world, world.b).json()
    if path in SAFE_IF_EMPTY_OF_B:
        leaked = [row for row in _rows(body) if world.b in (row.get("owner"), row.get("name"), row.get("organization"))]
        assert not leaked, (path, body)
    else:
        assert body["status"] == "error" or body["data"] is None, (path, body)
    # and B's admin still signs in with their own password
    assert TestClient(api).post("/api/login", json={"organization": world.b, "username": "boss",
                                                     "password": PASSWORD}).json()["status"] == "ok"


@pytest.mark.parametrize("caller", GLOBAL_CALLERS)
@pytest.mark.parametrize("path", sorted(DECLARED))
def test_declared_record_routes_serve_the_global_callers(callers, world, caller, path):
    """The example that organization A's callers were refused with is one the route takes: the
    refusals above are the access rules', not a bad request's."""
    body = DECLARED[path](callers[caller], world, world.b).json()
    assert body["status"] == "ok", (path, body)


def test_global_callers_download_a_private_key(callers, world):
    # the one extra answering with a file: the key the test above keeps from organization A is there
    for caller in GLOBAL_CALLERS:
        answer = EXTRAS["/api/download-cert"](callers[caller], world, world.b)
        assert answer.headers["content-type"].startswith("application/x-pem-file"), (caller, answer.text)
        assert "PRIVATE KEY" in answer.text


CRUD_ROUTES = [r for r in api_routes() if r[1] not in OTHER_ROUTES]


@pytest.mark.parametrize(("method", "path"), CRUD_ROUTES)
def test_anonymous_callers_get_nothing(callers, world, method, path):
    body = call(callers["anonymous"], world, method, path, world.a)
    assert body["status"] == "error" and body["msg"] == "Please login first", (path, body)


@pytest.mark.parametrize("caller", A_CALLERS)
@pytest.mark.parametrize(("method", "path"), CRUD_ROUTES)
def test_organization_a_never_reaches_organization_b(callers, world, caller, method, path):
    operation, kind, is_list = classify(path)
    name = world.names[kind.name][world.b]
    owner = _owner_of(world, kind, world.b)
    existed = _exists(kind, owner, name)
    body = call(callers[caller], world, method, path, world.b)
    if is_list:
        rows = body["data"] if body["status"] == "ok" else []
        assert not [row for row in rows or [] if belongs_to(kind, row, world.b)], (path, body)
    elif operation == "get":
        assert body["status"] == "error" or body["data"] is None, (path, body)
    elif operation == "add":
        assert body["status"] == "error", (path, body)
    else:
        assert body["status"] == "error" or body["data"] == "Unaffected", (path, body)
        assert _exists(kind, owner, name) == existed
        if operation == "update" and existed:
            with session_scope() as db:
                row = db.exec(select(kind.model).where(kind.model.owner == owner, kind.model.name == name)).one()
                assert getattr(row, "display_name", "") != "changed by another org"


@pytest.mark.parametrize("caller", GLOBAL_CALLERS)
@pytest.mark.parametrize("kind_name", sorted(REGISTRY))
def test_global_callers_read_every_organization(callers, world, caller, kind_name):
    kind = REGISTRY[kind_name]
    owner = _owner_of(world, kind, world.b)
    body = callers[caller].get(f"/api/get-{kind.name}", params={"id": f"{owner}/{world.names[kind_name][world.b]}"})
    data = body.json()["data"]
    assert body.json()["status"] == "ok" and data[m.wire_name(kind.model, "name")] == world.names[kind_name][world.b]


def test_organization_admin_reads_and_writes_their_own(callers, world):
    admin = callers["admin_a"]
    rows = admin.get("/api/get-roles", params={"owner": world.a, "p": "1", "pageSize": "50"}).json()
    assert rows["status"] == "ok" and [r["name"] for r in rows["data"]] == [world.names["role"][world.a]]
    role = world.names["role"][world.a]
    changed = admin.post("/api/update-role", params={"id": f"{world.a}/{role}"},
                         json={"owner": world.a, "name": role, "displayName": "mine"}).json()
    assert changed["data"] == "Affected"
    moved = admin.post("/api/update-role", params={"id": f"{world.a}/{role}"},
                       json={"owner": world.b, "name": role}).json()
    assert moved["status"] == "error"


def test_shared_records_are_read_only_to_organization_admins(callers, world):
    admin = callers["admin_a"]
    shared = admin.get("/api/get-provider", params={"id": "admin/provider_balance"}).json()
    assert shared["status"] == "ok" and shared["data"]["name"] == "provider_balance"
    refused = admin.post("/api/update-provider", params={"id": "admin/provider_balance"},
                         json={"owner": "admin", "name": "provider_balance", "displayName": "x"}).json()
    assert refused["status"] == "error"
    listed = admin.get("/api/get-providers", params={"owner": world.a}).json()["data"]
    assert {p["owner"] for p in listed} <= {world.a, "admin"} and any(p["owner"] == "admin" for p in listed)


def test_an_ordinary_user_edits_only_what_their_organization_allows(callers, world):
    alice = callers["user_a"]
    me = alice.get("/api/get-user", params={"id": f"{world.a}/alice"}).json()["data"]
    me["displayName"] = "Alice L."
    assert alice.post("/api/update-user", params={"id": f"{world.a}/alice"}, json=me).json()["data"] == "Affected"
    me["isAdmin"] = True
    refused = alice.post("/api/update-user", params={"id": f"{world.a}/alice"}, json=me).json()
    assert refused["status"] == "error" and "isAdmin" in refused["msg"]
    other = alice.get("/api/get-user", params={"id": f"{world.a}/boss"}).json()
    assert other["status"] == "error" or other["data"] is None


# SCIM 2.0 (/scim/v2, and /scim as Casdoor serves it; docs/api.md "SCIM 2.0"): every route aimed at
# organization o's user and group. Only an application's client_credentials token is a SCIM caller,
# acting within its application's organization, a built-in application's included (the protocol's
# own cases are in tests/api/test_scim.py).
SCIM_BASES = ("/scim/v2", "/scim")
SCIM_USER = "urn:ietf:params:scim:schemas:core:2.0:User"
SCIM_GROUP = "urn:ietf:params:scim:schemas:core:2.0:Group"
SCIM_PATCH = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
SCIM_SEARCH = "urn:ietf:params:scim:api:messages:2.0:SearchRequest"


def _scim_uuid(w: World, o: str) -> str:
    with session_scope() as db:
        return db.exec(select(m.User.uuid).where(m.User.owner == o, m.User.name == w.names["user"][o])).one()


def _scim_calls() -> dict:
    """{(method, relative path): call(client, base, world, o)} for every SCIM route."""
    user = lambda w, o: f"Users/{_scim_uuid(w, o)}"  # noqa: E731
    group = lambda w, o: f"Groups/{w.names['group'][o]}"  # noqa: E731
    named = lambda w, o: f'userName eq "{w.names["user"][o]}"'  # noqa: E731
    patched = {"schemas": [SCIM_PATCH], "Operations": [{"op": "replace", "path": "displayName", "value": "hijacked"}]}
    return {
        ("GET", "/ServiceProviderConfig"): lambda c, base, w, o: c.get(f"{base}/ServiceProviderConfig"),
        ("GET", "/ResourceTypes"): lambda c, base, w, o: c.get(f"{base}/ResourceTypes"),
        ("GET", "/ResourceTypes/{ident}"): lambda c, base, w, o: c.get(f"{base}/ResourceTypes/User"),
        ("GET", "/Schemas"): lambda c, base, w, o: c.get(f"{base}/Schemas"),
        ("GET", "/Schemas/{ident}"): lambda c, base, w, o: c.get(f"{base}/Schemas/{SCIM_USER}"),
        ("GET", "/Users"): lambda c, base, w, o: c.get(f"{base}/Users", params={"filter": named(w, o)}),
        ("GET", "/Groups"): lambda c, base, w, o: c.get(f"{base}/Groups", params={
            "filter": f'displayName pr or id eq "{w.names["group"][o]}"'}),
        ("POST", "/Users/.search"): lambda c, base, w, o: c.post(f"{base}/Users/.search", json={
            "schemas": [SCIM_SEARCH], "filter": named(w, o)}),
        ("POST", "/Groups/.search"): lambda c, base, w, o: c.post(f"{base}/Groups/.search", json={
            "schemas": [SCIM_SEARCH]}),
        ("POST", "/.search"): lambda c, base, w, o: c.post(f"{base}/.search", json={"schemas": [SCIM_SEARCH]}),
        # o named as the organization, as a Casdoor client names it: made in the caller's own, if anywhere
        ("POST", "/Users"): lambda c, base, w, o: c.post(f"{base}/Users", json={
            "schemas": [SCIM_USER], "userName": unique("scim-made"),
            "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User": {"organization": o}}),
        ("POST", "/Groups"): lambda c, base, w, o: c.post(f"{base}/Groups", json={
            "schemas": [SCIM_GROUP], "displayName": unique("scim-made"), "members": [{"value": _scim_uuid(w, o)}]}),
        ("GET", "/Users/{ident}"): lambda c, base, w, o: c.get(f"{base}/{user(w, o)}"),
        ("GET", "/Groups/{ident}"): lambda c, base, w, o: c.get(f"{base}/{group(w, o)}"),
        ("PUT", "/Users/{ident}"): lambda c, base, w, o: c.put(f"{base}/{user(w, o)}", json={
            "schemas": [SCIM_USER], "userName": w.names["user"][o], "displayName": "hijacked"}),
        ("PUT", "/Groups/{ident}"): lambda c, base, w, o: c.put(f"{base}/{group(w, o)}", json={
            "schemas": [SCIM_GROUP], "displayName": "hijacked"}),
        ("PATCH", "/Users/{ident}"): lambda c, base, w, o: c.patch(f"{base}/{user(w, o)}", json=patched),
        ("PATCH", "/Groups/{ident}"): lambda c, base, w, o: c.patch(f"{base}/{group(w, o)}", json=patched),
        ("DELETE", "/Users/{ident}"): lambda c, base, w, o: c.delete(f"{base}/{user(w, o)}"),
        ("DELETE", "/Groups/{ident}"): lambda c, base, w, o: c.delete(f"{base}/{group(w, o)}"),
        **{(method, "/{path:path}"): lambda c, base, w, o, method=method: c.request(
            method, f"{base}/{user(w, o)}/more", json={}) for method in ("GET", "POST", "PUT", "PATCH", "DELETE")},
    }


SCIM = _scim_calls()
SCIM_CALLERS = ["anonymous", *A_CALLERS, *GLOBAL_CALLERS, "client_global_token"]


def _scim_caller(callers, world, caller: str) -> TestClient:
    """The callers above, and the client_credentials token of an application of the built-in organization."""
    if caller == "client_global_token":
        return _with_bearer(_client_token(world.app_global))
    return callers[caller]


def _organization_state(w: World, o: str) -> tuple:
    with session_scope() as db:
        users = db.exec(select(m.User.name, m.User.display_name, m.User.groups, m.User.updated_time)
                        .where(m.User.owner == o).order_by(m.User.name)).all()
        groups = db.exec(select(m.Group.name, m.Group.display_name, m.Group.updated_time)
                         .where(m.Group.owner == o).order_by(m.Group.name)).all()
    return [tuple(row) for row in users], [tuple(row) for row in groups]


def test_every_scim_route_is_known():
    served = {(method, path) for method, path in route_table() if path.startswith("/scim")}
    assert served, "no SCIM route is served"
    known = {(method, base + path) for method, path in SCIM for base in SCIM_BASES}
    assert served == known, served ^ known


@pytest.mark.parametrize("caller", SCIM_CALLERS)
@pytest.mark.parametrize(("method", "path"), sorted(SCIM))
@pytest.mark.parametrize("base", SCIM_BASES)
def test_scim_never_reaches_organization_b(callers, world, caller, method, path, base):
    client = _scim_caller(callers, world, caller)
    before = _organization_state(world, world.b)
    answer = SCIM[(method, path)](client, base, world, world.b)
    assert _organization_state(world, world.b) == before, (caller, method, path, answer.text)
    if answer.status_code < 300:
        assert caller in ("client_a_token", "client_global_token"), (caller, path, answer.text)
        for trace in (_scim_uuid(world, world.b), world.names["user"][world.b], world.names["group"][world.b]):
            assert trace not in answer.text, (caller, path, answer.text)
    elif caller not in ("client_a_token", "client_global_token"):
        assert answer.status_code in (401, 403), (caller, path, answer.status_code, answer.text)


def test_scim_clients_reach_their_own_organization(callers, world):
    """The refusals above are the isolation's: each client's token reads its own organization."""
    mine = callers["client_a_token"].get("/scim/v2/Users").json()
    assert {u["userName"] for u in mine["Resources"]} >= {"boss", "alice", world.names["user"][world.a]}
    built_in = _scim_caller(callers, world, "client_global_token").get(
        "/scim/v2/Users", params={"filter": 'userName eq "admin"'}).json()
    assert [u["userName"] for u in built_in["Resources"]] == ["admin"]
