"""The enforcement API answers as pycasbin does: for Casbin's standard example models, the
answers of /api/enforce and /api/batch-enforce over an enforcer equal those of a local
casbin.Enforcer built from the same model text and policies."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import casbin
import pytest
from casbin.model import Model

from iam_console.services.seed import USER_MODEL_TEXT
from tests.api.conftest import ok_body
from tests.conftest import ACL_MODEL, unique

RBAC = USER_MODEL_TEXT  # the seeded RBAC model

MODELS = {
    "acl": (ACL_MODEL, [["p", "alice", "data1", "read"], ["p", "bob", "data2", "write"]]),
    "rbac": (RBAC, [["p", "alice", "data1", "read"], ["p", "bob", "data2", "write"],
                    ["p", "data2_admin", "data2", "read"], ["p", "data2_admin", "data2", "write"],
                    ["g", "alice", "data2_admin"], ["g", "carol", "alice"]]),
    "rbac_domains": ("""[request_definition]
r = sub, dom, obj, act
[policy_definition]
p = sub, dom, obj, act
[role_definition]
g = _, _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub, r.dom) && r.dom == p.dom && r.obj == p.obj && r.act == p.act
""", [["p", "admin", "domain1", "data1", "read"], ["p", "admin", "domain1", "data1", "write"],
      ["p", "admin", "domain2", "data2", "read"], ["p", "admin", "domain2", "data2", "write"],
      ["g", "alice", "admin", "domain1"], ["g", "bob", "admin", "domain2"]]),
    "rbac_resource_roles": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[role_definition]
g = _, _
g2 = _, _
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = g(r.sub, p.sub) && g2(r.obj, p.obj) && r.act == p.act
""", [["p", "alice", "data1", "read"], ["p", "bob", "data2", "write"],
      ["p", "data_group_admin", "data_group", "write"], ["g", "alice", "data_group_admin"],
      ["g2", "data1", "data_group"], ["g2", "data2", "data_group"]]),
    "abac": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = r.sub == r.obj.Owner
""", [["p", "nobody", "nothing", "none"]]),
    "keymatch": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = r.sub == p.sub && keyMatch(r.obj, p.obj) && regexMatch(r.act, p.act)
""", [["p", "alice", "/alice_data/*", "GET"], ["p", "alice", "/alice_data/resource1", "POST"],
      ["p", "bob", "/bob_data/*", "(GET)|(POST)"], ["p", "cathy", "/cathy_data", "GET"]]),
    "keymatch2": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = r.sub == p.sub && keyMatch2(r.obj, p.obj) && regexMatch(r.act, p.act)
""", [["p", "alice", "/alice_data/:resource", "GET"], ["p", "alice", "/alice_data2/:id/using/:resId", "GET"]]),
    "deny_override": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[role_definition]
g = _, _
[policy_effect]
e = some(where (p.eft == allow)) && !some(where (p.eft == deny))
[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act
""", [["p", "alice", "data1", "read", "allow"], ["p", "data2_admin", "data2", "read", "allow"],
      ["p", "data2_admin", "data2", "write", "allow"], ["p", "alice", "data2", "write", "deny"],
      ["g", "alice", "data2_admin"]]),
    "priority": ("""[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act, eft
[role_definition]
g = _, _
[policy_effect]
e = priority(p.eft) || deny
[matchers]
m = g(r.sub, p.sub) && r.obj == p.obj && r.act == p.act
""", [["p", "alice", "data1", "read", "allow"], ["p", "data1_deny_group", "data1", "read", "deny"],
      ["p", "data1_deny_group", "data1", "write", "deny"], ["p", "alice", "data1", "write", "allow"],
      ["g", "alice", "data1_deny_group"], ["p", "data2_allow_group", "data2", "read", "allow"],
      ["p", "bob", "data2", "read", "deny"], ["p", "bob", "data2", "write", "deny"],
      ["g", "bob", "data2_allow_group"]]),
}
SUBJECTS = ["alice", "bob", "carol", "cathy", "data2_admin", "nobody", ""]
OBJECTS = ["data1", "data2", "data_group", "/alice_data/resource1", "/alice_data/x", "/alice_data2/7/using/9",
           "/bob_data/a", "/cathy_data", "nothing", ""]
ACTIONS = ["read", "write", "GET", "POST", "DELETE"]
DOMAINS = ["domain1", "domain2", "domain3"]


def requests_for(name: str) -> list[list]:
    if name == "rbac_domains":
        return [list(r) for r in itertools.product(SUBJECTS, DOMAINS, OBJECTS[:3], ACTIONS[:2])]
    if name == "abac":
        return [[s, {"Owner": o}, a] for s in SUBJECTS[:3] for o in SUBJECTS[:3] for a in ACTIONS[:2]]
    return [list(r) for r in itertools.product(SUBJECTS, OBJECTS, ACTIONS)]


def local_enforcer(text: str, lines: list[list[str]]) -> casbin.Enforcer:
    model = Model()
    model.load_model_from_text(text)
    enforcer = casbin.Enforcer(model)
    for ptype, *values in lines:
        if ptype.startswith("g"):
            enforcer.add_named_grouping_policy(ptype, *values)
        else:
            enforcer.add_named_policy(ptype, *values)
    return enforcer


def local_value(value):
    return SimpleNamespace(**value) if isinstance(value, dict) else value


def make_enforcer(admin, text: str, lines: list[list[str]], owner: str = "built-in") -> str:
    model, adapter, enforcer = unique("model"), unique("adapter"), unique("enforcer")
    ok_body(admin.post("/api/add-model", json={"owner": owner, "name": model, "modelText": text}))
    ok_body(admin.post("/api/add-adapter", json={"owner": owner, "name": adapter, "useSameDb": True,
                                                  "table": unique("rules").replace("-", "_")}))
    ok_body(admin.post("/api/add-enforcer", json={"owner": owner, "name": enforcer, "model": f"{owner}/{model}",
                                                   "adapter": f"{owner}/{adapter}"}))
    eid = f"{owner}/{enforcer}"
    for ptype, *values in lines:
        body = {"Ptype": ptype, **{f"V{i}": v for i, v in enumerate(values)}}
        assert ok_body(admin.post("/api/add-policy", params={"id": eid}, json=body))["data"] == "Affected"
    return eid


@pytest.mark.parametrize("name", sorted(MODELS))
def test_answers_equal_a_local_enforcer(admin, name):
    text, lines = MODELS[name]
    eid = make_enforcer(admin, text, lines)
    local = local_enforcer(text, lines)
    requests = requests_for(name)
    expected = [local.enforce(*[local_value(v) for v in r]) for r in requests]
    assert any(expected) and not all(expected), name  # the requests tell allowed from denied
    batch = ok_body(admin.post("/api/batch-enforce", params={"enforcerId": eid}, json=requests))
    assert batch["data"] == [expected]
    for request, answer in list(zip(requests, expected, strict=True))[:40]:
        body = ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=request))
        assert body["data"] == [answer], (request, body)


def test_policy_writes_reach_the_next_call(admin):
    text, lines = MODELS["rbac"]
    eid = make_enforcer(admin, text, lines)
    ask = ["dave", "data1", "read"]
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=ask))["data"] == [False]
    rule = {"Ptype": "p", "V0": "dave", "V1": "data1", "V2": "read"}
    assert ok_body(admin.post("/api/add-policy", params={"id": eid}, json=rule))["data"] == "Affected"
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=ask))["data"] == [True]
    duplicate = admin.post("/api/add-policy", params={"id": eid}, json=rule).json()
    assert duplicate["status"] == "error" and duplicate["msg"] == "Duplicated policy rules"
    moved = {"Ptype": "p", "V0": "dave", "V1": "data2", "V2": "read"}
    assert ok_body(admin.post("/api/update-policy", params={"id": eid}, json=[rule, moved]))["data"] == "Affected"
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=ask))["data"] == [False]
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid},
                              json=["dave", "data2", "read"]))["data"] == [True]
    assert ok_body(admin.post("/api/remove-policy", params={"id": eid}, json=moved))["data"] == "Affected"
    assert ok_body(admin.post("/api/remove-policy", params={"id": eid}, json=moved))["data"] == "Unaffected"
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid},
                              json=["dave", "data2", "read"]))["data"] == [False]
    policies = ok_body(admin.get("/api/get-policies", params={"id": eid}))["data"]
    assert [[p["Ptype"], p["V0"], p["V1"], p["V2"]] for p in policies] == [line[:4] + [""] * (4 - len(line))
                                                                            for line in lines]
    filtered = ok_body(admin.post("/api/get-filtered-policies", params={"id": eid},
                                  json=[{"ptype": "g", "fieldIndex": 1, "fieldValues": ["alice"]}]))["data"]
    assert [(p["V0"], p["V1"]) for p in filtered] == [("carol", "alice")]
