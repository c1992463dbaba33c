"""The official SDKs' Casbin calls against the real HTTP server: enforce and
batch_enforce (by enforcer and by permission), and its policy calls (get_policies,
get_filtered_policies, add_policy, update_policy, remove_policy)."""

from __future__ import annotations

import asyncio
import json
import subprocess

import casdoor
import pytest
import requests
from casdoor.enforcer import Enforcer
from casdoor.policy import Policy
from sqlmodel import select

from iam_console import models as m
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from tests.api.sdk_server import api_server, sdk, seeded_credentials  # noqa: F401
from tests.api.test_enforce import MODELS, local_enforcer
from tests.api.test_sdk_node import CLIENT, NODE_DIR, Node, call, node  # noqa: F401
from tests.conftest import unique


@pytest.fixture
def node_sdk(node, api_server) -> Node:  # noqa: F811
    """casdoor-nodejs-sdk, as the built-in application's client."""
    credentials = seeded_credentials()
    return Node(node, api_server, credentials.client_id, credentials.client_secret, credentials.certificate)


def _values(client: Node, *calls: dict) -> list:
    """What each call returned: enforce and batchEnforce answer values, not the envelope that
    Node.run checks."""
    job = {"endpoint": client.endpoint, "clientId": client.client_id, "clientSecret": client.client_secret,
           "certificate": client.certificate, "orgName": "built-in", "appName": "app-built-in", "calls": list(calls)}
    process = subprocess.run([client.executable, str(CLIENT)], input=json.dumps(job), capture_output=True, text=True,
                             timeout=60, cwd=NODE_DIR)
    assert process.returncode == 0, process.stderr
    answers = [json.loads(line) for line in process.stdout.splitlines()]
    assert all(answer["ok"] for answer in answers), answers
    return [answer["value"] for answer in answers]


def _built_in_app(db) -> m.Application:
    return db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()


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


def test_node_sdk_enforces_a_permission(node_sdk):
    """casdoor-nodejs-sdk 1.24.0's enforce and batchEnforce (by permission, model or resource)."""
    name = unique("perm")
    with session_scope() as db:
        crud.add_record(db, Actor(application=_built_in_app(db)), REGISTRY["permission"], {
            "owner": "built-in", "name": name, "users": ["built-in/admin"], "resourceType": "Custom",
            "resources": ["ledger"], "actions": ["read"], "effect": "Allow", "isEnabled": True, "state": "Approved"})
    pid = f"built-in/{name}"
    allowed, denied, batch = _values(node_sdk, call("enforce", pid, "", "", ["built-in/admin", "ledger", "read"]),
                                          call("enforce", pid, "", "", ["built-in/admin", "ledger", "write"]),
                                          call("batchEnforce", pid, "", "", [["built-in/admin", "ledger", "read"],
                                                                             ["built-in/bob", "ledger", "read"]]))
    assert (allowed, denied, batch) == (True, False, [True, False])


def test_async_sdk_enforces_a_permission(sdk):  # noqa: F811
    name = unique("perm")
    _post(sdk, "add-permission", {"owner": "built-in", "name": name, "users": ["built-in/admin"],
                                  "resourceType": "Custom", "resources": ["vault"], "actions": ["open"],
                                  "effect": "Allow", "isEnabled": True, "state": "Approved"})
    pid = f"built-in/{name}"
    client = casdoor.AsyncCasdoorSDK(sdk.endpoint, sdk.client_id, sdk.client_secret, sdk.certificate, "built-in",
                                     "app-built-in", front_endpoint=sdk.endpoint)

    async def run() -> tuple:
        return (await client.enforce(pid, "", "", "", "", ["built-in/admin", "vault", "open"]),
                await client.enforce(pid, "", "", "", "", ["built-in/admin", "vault", "shut"]),
                await client.batch_enforce(pid, "", "", "", [["built-in/admin", "vault", "open"],
                                                             ["built-in/other", "vault", "open"]]))

    assert asyncio.run(run()) == (True, False, [True, False])
