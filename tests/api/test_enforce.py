"""The enforcement API answers as pycasbin does: for Casbin's standard example models, the
answers of /api/enforce and /api/batch-enforce over an enforcer equal those of a local
casbin.Enforcer built from the same model text and policies."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import casbin
import pytest
from casbin.model import Model

from iam_console.core.seed import USER_MODEL_TEXT
from tests.api.conftest import ok_body
from tests.conftest import ACL_MODEL, casbin_model, unique

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


REGEX_MODEL = casbin_model("r.sub == p.sub && regexMatch(r.obj, p.obj) && r.act == p.act")


def test_a_backtracking_pattern_answers_at_once(admin):
    """The review's case: `^(a+)+$` against 26 a's and a '!' took Python's re 11 s, holding every
    other request. On RE2 it is linear; RE2 refuses a backreference, which Python's re takes."""
    eid = make_enforcer(admin, REGEX_MODEL, [["p", "alice", "^(a+)+$", "read"], ["p", "bob", "(a)\\1", "read"]])
    ask = {"enforcerId": eid}
    assert ok_body(admin.post("/api/enforce", params=ask, json=["alice", "a" * 26 + "!", "read"]))["data"] == [False]
    assert ok_body(admin.post("/api/batch-enforce", params=ask, json=[
        ["alice", "a" * 26, "read"], ["alice", "a" * 26 + "!", "read"]]))["data"] == [[True, False]]
    refused = admin.post("/api/enforce", params=ask, json=["bob", "aa", "read"]).json()
    assert refused == {**refused, "status": "error",
                       "msg": "The pattern (a)\\1 cannot be used: invalid escape sequence: \\1"}


def test_a_costly_matcher_is_refused_when_the_model_is_saved(admin):
    text = REGEX_MODEL.replace("r.act == p.act", "r.act == p.act && 4000000 ** 4000000 > 0")
    answer = admin.post("/api/add-model", json={"owner": "built-in", "name": unique("model"), "modelText": text}).json()
    assert answer == {**answer, "status": "error", "msg": "The model is not valid: The matcher's value would be "
                                                          "too large: a number of more than 4096 bits"}


def test_the_standard_eval_abac_model_is_saved_and_enforced(admin):
    text = casbin_model("eval(p.sub_rule) && r.obj == p.obj && r.act == p.act", "sub_rule, obj, act")
    eid = make_enforcer(admin, text, [["p", "r.sub.Age > 18 && r.sub.Age < 60", "/data1", "read"]])
    answers = ok_body(admin.post("/api/batch-enforce", params={"enforcerId": eid}, json=[
        [{"Age": 30}, "/data1", "read"], ['{"Age": 70}', "/data1", "read"], [{"Age": 30}, "/data2", "read"]]))
    assert answers["data"] == [[True, False, False]]


def test_an_enforcement_past_its_budget_stops(admin, monkeypatch):
    from iam_console.authorization import casbin_engine

    eid = make_enforcer(admin, REGEX_MODEL, [["p", "alice", f"^data{i}$", "read"] for i in range(3)])
    ask = {"enforcerId": eid}
    assert ok_body(admin.post("/api/enforce", params=ask, json=["alice", "data2", "read"]))["data"] == [True]
    monkeypatch.setattr(casbin_engine, "ENFORCE_BUDGET", -1.0)  # spent before the first policy
    for route, body in (("/api/enforce", ["alice", "data2", "read"]), ("/api/batch-enforce", [["alice", "x", "y"]])):
        answer = admin.post(route, params=ask, json=body).json()
        assert answer == {**answer, "status": "error", "msg": "The enforcement took too long"}, route
    answer = admin.post("/api/enforce", params=ask, json=["alice", "data2", "read"],
                        headers={"Accept-Language": "zh-CN"}).json()
    assert answer["msg"] == "执行授权检查耗时过长"
    monkeypatch.undo()
    assert ok_body(admin.post("/api/enforce", params=ask, json=["alice", "data2", "read"]))["data"] == [True]


def test_policy_writes_rebuild_no_index(admin, monkeypatch):
    """Each add-policy reaches the next call as its line, applied in place: the engine's index
    takes it without being built again (10,000 writes once cost 10,000 rebuilds)."""
    from iam_console.authorization.casbin_engine import Engine

    eid = make_enforcer(admin, RBAC, [["p", f"role{i}", f"data{i}", "read"] for i in range(3)])
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=["role1", "data1", "read"]))["data"]
    rebuilt = []
    original = Engine.reindex
    monkeypatch.setattr(Engine, "reindex", lambda self: (rebuilt.append(1), original(self))[1])
    for i in range(20):
        rule = {"Ptype": "p", "V0": "dave", "V1": f"doc{i}", "V2": "read"}
        assert ok_body(admin.post("/api/add-policy", params={"id": eid}, json=rule))["data"] == "Affected"
        assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid},
                                  json=["dave", f"doc{i}", "read"]))["data"] == [True]
    assert rebuilt == []


def test_batch_policy_writes(admin):
    eid = make_enforcer(admin, RBAC, [["p", "alice", "data1", "read"]])
    rules = [{"Ptype": "p", "V0": "bob", "V1": f"doc{i}", "V2": "read"} for i in range(50)] + [
        {"Ptype": "g", "V0": "carol", "V1": "bob"}]
    assert ok_body(admin.post("/api/add-policies", params={"id": eid}, json=rules))["data"] == "Affected"
    batch = [["carol", f"doc{i}", "read"] for i in range(50)] + [["carol", "data1", "read"]]
    assert ok_body(admin.post("/api/batch-enforce", params={"enforcerId": eid}, json=batch))["data"] == [
        [True] * 50 + [False]]
    # all or nothing: one rule already held (or twice in the body) writes none of them
    for body in ([{"Ptype": "p", "V0": "dan", "V1": "x", "V2": "read"}, rules[0]],
                 [{"Ptype": "p", "V0": "dan", "V1": "x", "V2": "read"}] * 2):
        answer = admin.post("/api/add-policies", params={"id": eid}, json=body).json()
        assert answer == {**answer, "status": "error", "msg": "Duplicated policy rules"}
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=["dan", "x", "read"]))["data"] == [
        False]
    answer = admin.post("/api/add-policies", params={"id": eid}, json=[]).json()
    assert answer["msg"] == "The body must be a non-empty list of policy rules"
    # removal: every rule held, or none removed
    missing = [*rules[:10], {"Ptype": "p", "V0": "nobody", "V1": "x", "V2": "read"}]
    assert ok_body(admin.post("/api/remove-policies", params={"id": eid}, json=missing))["data"] == "Unaffected"
    assert ok_body(admin.post("/api/remove-policies", params={"id": eid}, json=rules[:40]))["data"] == "Affected"
    assert ok_body(admin.post("/api/batch-enforce", params={"enforcerId": eid}, json=batch))["data"] == [
        [False] * 40 + [True] * 10 + [False]]
    held = ok_body(admin.get("/api/get-policies", params={"id": eid}))["data"]
    assert len(held) == 1 + 10 + 1
