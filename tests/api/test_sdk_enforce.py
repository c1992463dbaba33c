"""The official Python SDK's Casbin calls against the real HTTP server: enforce and
batch_enforce (by enforcer and by permission), and its policy calls (get_policies,
get_filtered_policies, add_policy, update_policy, remove_policy)."""

from __future__ import annotations

import requests
from casdoor.enforcer import Enforcer
from casdoor.policy import Policy

from tests.api.sdk_server import api_server, sdk  # noqa: F401
from tests.api.test_enforce import MODELS, local_enforcer
from tests.conftest import unique


def _post(sdk, path: str, body: dict) -> None:  # noqa: F811
    answer = requests.post(f"{sdk.endpoint}/api/{path}", json=body, auth=(sdk.client_id, sdk.client_secret),
                           timeout=10).json()
    assert answer["status"] == "ok", answer


def test_sdk_enforces_and_edits_policies(sdk):  # noqa: F811
    text, lines = MODELS["rbac"]
    model, adapter, name = unique("model"), unique("adapter"), unique("enforcer")
    _post(sdk, "add-model", {"owner": "built-in", "name": model, "modelText": text})
    _post(sdk, "add-adapter", {"owner": "built-in", "name": adapter, "useSameDb": True, "table": "sdk_rules"})
    _post(sdk, "add-enforcer", {"owner": "built-in", "name": name, "model": f"built-in/{model}",
                                "adapter": f"built-in/{adapter}"})
    enforcer = Enforcer.new("built-in", name, "", "", "", f"built-in/{model}", f"built-in/{adapter}")
    for ptype, *values in lines:
        assert sdk.add_policy(enforcer, Policy.new(ptype, *values))["data"] == "Affected"
    eid = f"built-in/{name}"
    local = local_enforcer(text, lines)
    requests_ = [["alice", "data2", "write"], ["carol", "data2", "read"], ["bob", "data1", "read"]]
    assert sdk.batch_enforce("", "", eid, "", requests_) == [local.enforce(*r) for r in requests_]
    for request in requests_:
        assert sdk.enforce("", "", "", eid, "", request) is local.enforce(*request)
    stored = sdk.get_policies(name)
    assert [[p.ptype, p.v0, p.v1] for p in stored] == [line[:3] for line in lines]
    only_g = sdk.get_filtered_policies(name, [{"ptype": "g", "fieldIndex": 0, "fieldValues": ["carol"]}])
    assert [(p.v0, p.v1) for p in only_g] == [("carol", "alice")]
    old, new = Policy.new("g", "carol", "alice"), Policy.new("g", "carol", "data2_admin")
    assert sdk.update_policy(enforcer, old, new)["data"] == "Affected"
    assert sdk.enforce("", "", "", eid, "", ["carol", "data1", "read"]) is False
    assert sdk.enforce("", "", "", eid, "", ["carol", "data2", "write"]) is True
    assert sdk.remove_policy(enforcer, new)["data"] == "Affected"
    assert sdk.enforce("", "", "", eid, "", ["carol", "data2", "write"]) is False


def test_sdk_enforces_a_permission(sdk):  # noqa: F811
    name = unique("perm")
    _post(sdk, "add-permission", {"owner": "built-in", "name": name, "users": ["built-in/admin"],
                                  "resourceType": "Custom", "resources": ["ledger"], "actions": ["read"],
                                  "effect": "Allow", "isEnabled": True, "state": "Approved"})
    pid = f"built-in/{name}"
    assert sdk.enforce(pid, "", "", "", "", ["built-in/admin", "ledger", "read"]) is True
    assert sdk.enforce(pid, "", "", "", "", ["built-in/admin", "ledger", "write"]) is False
    assert sdk.batch_enforce(pid, "", "", "", [["built-in/admin", "ledger", "read"],
                                               ["built-in/other", "ledger", "read"]]) == [True, False]
