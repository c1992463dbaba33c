"""Permissions as Casbin rules (users, groups, roles through sub-roles, domains; only enabled
and Approved ones in force), who may enforce what, model checks, and writes reaching the next
call from another worker (an enforcer kept in memory is rebuilt when its organization's
counter moves)."""

from __future__ import annotations

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.authorization import enforcement
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.api.test_enforce import RBAC, make_enforcer
from tests.conftest import unique

PASSWORD = "Enforce-pass-1"


@pytest.fixture(scope="module")
def org(admin) -> str:
    """An organization with an admin `boss`, users alice, bob, carol (carol in group `team`)."""
    name = unique("authz")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name}))
    ok_body(admin.post("/api/add-group", json={"owner": name, "name": "team"}))
    for user, is_admin, groups in (("boss", True, []), ("alice", False, []), ("bob", False, []),
                                   ("carol", False, [f"{name}/team"])):
        ok_body(admin.post("/api/add-user", json={"owner": name, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin, "groups": groups}))
    ok_body(admin.post("/api/add-model", json={"owner": name, "name": "rbac", "modelText": RBAC}))
    ok_body(admin.post("/api/add-role", json={"owner": name, "name": "junior", "users": [f"{name}/bob"],
                                              "isEnabled": True}))
    ok_body(admin.post("/api/add-role", json={"owner": name, "name": "reader", "users": [f"{name}/alice"],
                                              "roles": [f"{name}/junior"], "isEnabled": True}))
    return name


def _permission(admin, org: str, **fields) -> str:
    name = unique("perm")
    body = {"owner": org, "name": name, "model": "rbac", "resourceType": "Custom", "resources": ["doc"],
            "actions": ["read"], "effect": "Allow", "isEnabled": True, "state": "Approved", **fields}
    ok_body(admin.post("/api/add-permission", json=body))
    return f"{org}/{name}"


def _ask(client, params: dict, request: list) -> list:
    return ok_body(client.post("/api/enforce", params=params, json=request))["data"]


def test_roles_and_groups_give_the_rules_casdoor_gives(admin, org):
    by_role = _permission(admin, org, roles=[f"{org}/reader"])
    by_group = _permission(admin, org, groups=[f"{org}/team"], users=[f"{org}/boss"], actions=["write"])
    for user, action, allowed in (("alice", "read", True), ("bob", "read", True), ("carol", "read", False),
                                  ("carol", "write", True), ("alice", "write", False), ("boss", "read", False)):
        assert _ask(admin, {"permissionId": by_role if action == "read" else by_group},
                    [f"{org}/{user}", "doc", action]) == [allowed], (user, action)
    # by owner: one answer per model and adapter, here one group
    data = ok_body(admin.post("/api/batch-enforce", params={"owner": org},
                              json=[[f"{org}/bob", "doc", "read"], [f"{org}/bob", "doc", "write"]]))
    assert data["data"] == [[True, False]] and data["data2"] == ["rbac/"]
    names = ok_body(admin.get("/api/get-all-roles", params={"userId": f"{org}/bob"}))["data"]
    assert sorted(names) == ["junior", "reader"]
    assert ok_body(admin.get("/api/get-all-actions", params={"userId": f"{org}/carol"}))["data"] == ["write"]
    by = ok_body(admin.get("/api/get-permissions-by-role", params={"id": f"{org}/reader"}))
    assert [p["name"] for p in by["data"]] == [by_role.split("/")[1]] and by["data2"] == 1


def test_only_enabled_and_approved_permissions_are_in_force(admin, org):
    pid = _permission(admin, org, users=[f"{org}/alice"], resources=["vault"])
    request = [f"{org}/alice", "vault", "read"]
    assert _ask(admin, {"permissionId": pid}, request) == [True]
    owner, name = pid.split("/")
    ok_body(admin.post("/api/update-permission", params={"id": pid}, json={
        "owner": owner, "name": name, "model": "rbac", "users": [f"{org}/alice"], "resources": ["vault"],
        "actions": ["read"], "effect": "Allow", "isEnabled": True, "state": "Pending"}))
    assert _ask(admin, {"permissionId": pid}, request) == [False]
    # a disabled role takes its members' rules away
    role_perm = _permission(admin, org, roles=[f"{org}/reader"], resources=["shelf"])
    assert _ask(admin, {"permissionId": role_perm}, [f"{org}/bob", "shelf", "read"]) == [True]
    ok_body(admin.post("/api/update-role", params={"id": f"{org}/junior"}, json={
        "owner": org, "name": "junior", "users": [f"{org}/bob"], "isEnabled": False}))
    assert _ask(admin, {"permissionId": role_perm}, [f"{org}/bob", "shelf", "read"]) == [False]
    ok_body(admin.post("/api/update-role", params={"id": f"{org}/junior"}, json={
        "owner": org, "name": "junior", "users": [f"{org}/bob"], "isEnabled": True}))


def test_a_users_groups_reach_the_next_call(admin, org):
    pid = _permission(admin, org, groups=[f"{org}/team"], users=[f"{org}/boss"], resources=["board"])
    assert _ask(admin, {"permissionId": pid}, [f"{org}/alice", "board", "read"]) == [False]
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/alice", "columns": "groups"},
                       json={"owner": org, "name": "alice", "groups": [f"{org}/team"]}))
    assert _ask(admin, {"permissionId": pid}, [f"{org}/alice", "board", "read"]) == [True]


def _engine_of(eid: str):
    owner, name = eid.split("/")
    # the one used last (the cache is kept in order of use)
    return [entry.engine for key, entry in enforcement._cache.items() if key[:3] == ("enforcer", owner, name)][-1]


def test_a_write_by_another_worker_reaches_the_next_call(admin, org):
    eid = make_enforcer(admin, RBAC, [["p", "alice", "data1", "read"]], owner=org)
    assert _ask(admin, {"enforcerId": eid}, ["bob", "data1", "read"]) == [False]
    before = _engine_of(eid)
    with session_scope() as db:  # as another worker or server would: straight to the database
        adapter = db.exec(select(m.Enforcer.adapter).where(m.Enforcer.owner == org,
                                                           m.Enforcer.name == eid.split("/")[1])).one()
        table = db.exec(select(m.Adapter.table).where(m.Adapter.owner == org,
                                                      m.Adapter.name == adapter.split("/")[1])).one()
        db.add(m.CasbinRule(adapter=f"{org}/{table}", ptype="g", v0="bob", v1="alice"))
    assert _ask(admin, {"enforcerId": eid}, ["bob", "data1", "read"]) == [True]
    assert _engine_of(eid) is before  # a step that only changed lines is applied in place
    # and a model change: the matcher now ignores roles
    ok_body(admin.post("/api/update-model", params={"id": f"{org}/rbac"}, json={
        "owner": org, "name": "rbac", "modelText": RBAC.replace("g(r.sub, p.sub)", "r.sub == p.sub")}))
    enforcer = ok_body(admin.get("/api/get-enforcer", params={"id": eid}))["data"]
    ok_body(admin.post("/api/update-enforcer", params={"id": eid}, json={**enforcer, "model": f"{org}/rbac"}))
    assert _ask(admin, {"enforcerId": eid}, ["bob", "data1", "read"]) == [False]
    assert _engine_of(eid) is not before  # rebuilt
    ok_body(admin.post("/api/update-model", params={"id": f"{org}/rbac"}, json={
        "owner": org, "name": "rbac", "modelText": RBAC}))


def test_model_text_is_checked_by_casbin(admin, org):
    bad = admin.post("/api/add-model", json={"owner": org, "name": unique("bad"), "modelText": "garbage"}).json()
    assert bad["status"] == "error" and bad["msg"].startswith("The model is not valid: "), bad
    broken = RBAC.replace("r.act == p.act", "r.act === p.act")
    bad = admin.post("/api/add-model", json={"owner": org, "name": unique("bad"), "modelText": broken}).json()
    assert bad["status"] == "error" and "invalid syntax" in bad["msg"], bad
    unknown = RBAC.replace("r.act == p.act", "keyMatch9(r.act, p.act)")
    bad = admin.post("/api/add-model", json={"owner": org, "name": unique("bad"), "modelText": unknown}).json()
    assert bad["status"] == "error" and "keyMatch9" in bad["msg"], bad
    missing = admin.post("/api/add-model", json={"owner": org, "name": unique("bad"),
                                                 "modelText": "[request_definition]\nr = sub\n"}).json()
    assert "missing required sections" in missing["msg"], missing


def test_who_may_enforce(admin, org):
    eid = make_enforcer(admin, RBAC, [["p", f"{org}/alice", "data1", "read"]], owner=org)
    boss, alice = sign_in(org, "boss", PASSWORD), sign_in(org, "alice", PASSWORD)
    assert _ask(boss, {"enforcerId": eid}, [f"{org}/alice", "data1", "read"]) == [True]
    refused = alice.post("/api/enforce", params={"enforcerId": eid}, json=["x", "data1", "read"]).json()
    assert refused["status"] == "error" and refused["msg"] == "Unauthorized operation"
    # a user asks about themselves only
    assert alice.get("/api/get-all-roles").json()["status"] == "ok"
    other = alice.get("/api/get-all-roles", params={"userId": f"{org}/bob"}).json()
    assert other["status"] == "error"
    # the built-in organization's enforcers are not an organization admin's
    builtin = boss.post("/api/enforce", params={"enforcerId": "built-in/user-enforcer-built-in"},
                        json=["a", "b", "c"]).json()
    assert builtin["status"] == "error"
    two = boss.post("/api/enforce", params={"enforcerId": eid, "owner": org}, json=["a", "b", "c"]).json()
    assert two["msg"] == "Only one of the parameters (permissionId, modelId, resourceId, enforcerId, owner) " \
                         "should be provided"
    assert boss.post("/api/refresh-engines").json()["status"] == "error"
    assert ok_body(admin.post("/api/refresh-engines"))["data"] is True
    enforcement.refresh()


def test_resource_id_loads_the_permissions_naming_that_resource(admin, org):
    """Casdoor's resourceId: the permissions whose resources hold exactly that value, grouped by
    model and adapter as every enforce is; an organization's admin reaches their own alone."""
    resource = unique("res")
    _permission(admin, org, users=[f"{org}/alice"], resources=[resource, "other"])
    _permission(admin, org, users=[f"{org}/bob"], resources=[resource], actions=["write"])
    _permission(admin, org, users=[f"{org}/carol"], resources=[resource + "-not"])
    other = unique("authz-other")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": other}))
    ok_body(admin.post("/api/add-user", json={"owner": other, "name": "dora", "password": PASSWORD}))
    _permission(admin, other, model="", users=[f"{other}/dora"], resources=[resource])
    batch = [[f"{org}/alice", resource, "read"], [f"{org}/bob", resource, "write"],
             [f"{org}/carol", resource + "-not", "read"], [f"{other}/dora", resource, "read"]]
    answers = {}
    for request in batch:
        body = ok_body(admin.post("/api/enforce", params={"resourceId": resource}, json=request))
        answers[request[0]] = dict(zip(body["data2"], body["data"], strict=True))
    # the global admin: both organizations' permissions naming it (one group per model/adapter)
    assert answers[f"{org}/alice"] == {"rbac/": True, "/": False}
    assert answers[f"{org}/bob"] == {"rbac/": True, "/": False}
    assert answers[f"{org}/carol"] == {"rbac/": False, "/": False}  # named another resource
    assert answers[f"{other}/dora"] == {"rbac/": False, "/": True}
    boss = sign_in(org, "boss", PASSWORD)
    mine = ok_body(boss.post("/api/enforce", params={"resourceId": resource}, json=[f"{other}/dora", resource,
                                                                                      "read"]))
    assert (mine["data"], mine["data2"]) == ([False], ["rbac/"])
    nothing = ok_body(admin.post("/api/enforce", params={"resourceId": unique("none")}, json=["a", "b", "c"]))
    assert (nothing["data"], nothing["data2"]) == ([], [])
