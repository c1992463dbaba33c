"""Compatibility: the calls of the official Casdoor Node.js SDK (casdoor-nodejs-sdk 1.24.0)
that its own test suite makes beyond the families of test_sdk_node.py: uploadResource with a
file stream, and webhooks and syncers addressed through the SDK's own organization (the
SDK writes owner = its orgName and reads <orgName>/<name>). Fixtures are built with the SDK.
docs/api.md ("The SDKs' own test suites") maps each call of the suites to its test."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import httpx
import pytest

from iam_console import models as m
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_sdk_node import ADMIN, APP, ORG, affected, call, leftovers, node, ok, read, sdk  # noqa: F401


def test_upload_resource_streams_a_file_then_delete_it(sdk, leftovers, tmp_path):  # noqa: F811
    content = b'<svg xmlns="http://www.w3.org/2000/svg" width="2" height="2"/>'
    source = tmp_path / "casbin.svg"
    source.write_bytes(content)
    path = f"node/{tmp_path.name}.svg"
    name = path.replace("/", "_")
    leftovers(m.Resource, ORG, name)
    # uploadResource(resource, file): resource.owner is sent as the user, resource.name as the tag
    (uploaded,) = sdk.run(call("uploadResource", {"owner": ADMIN, "name": "custom", "parent": "",
                                                  "fullFilePath": path}, {"$file": str(source)}))
    url = ok(uploaded)
    assert uploaded["data2"] == name
    got, deleted, missing = sdk.run(call("getResource", name), call("deleteResource", {"owner": ORG, "name": name}),
                                    call("getResource", name))
    row = ok(got)
    assert (row["owner"], row["user"], row["application"], row["tag"], row["fileSize"]) == (
        ORG, ADMIN, APP, "custom", len(content))
    affected(deleted)
    assert ok(missing) is None
    assert httpx.get(f"{sdk.endpoint}{urlsplit(url).path}").status_code == 404


HOOK = {"organization": ORG, "url": "https://hooks.example.com/in", "method": "POST",
        "contentType": "application/json", "events": ["signup"], "isEnabled": True}
SYNC = {"organization": ORG, "type": "Database", "databaseType": "mysql", "host": "localhost", "port": 3306,
        "user": "root", "password": "123", "database": "syncer_db", "table": "user_table", "syncInterval": 1}


@pytest.mark.parametrize("kind, table, fields, change", [
    ("Webhook", m.Webhook, HOOK, ("url", "https://hooks.example.com/2")),
    ("Syncer", m.Syncer, SYNC, ("host", "db.example.com"))], ids=["webhook", "syncer"])
def test_webhook_and_syncer_through_the_sdks_organization(sdk, leftovers, kind, table, fields, change):  # noqa: F811
    """With orgName built-in, the SDK adds owner built-in and reads built-in/<name>: the server
    keeps one admin-owned record of the organization and reaches it either way."""
    name = f"node-{kind.lower()}-{uuid.uuid4().hex[:8]}"
    leftovers(table, ADMIN, name)
    attribute, value = change
    added, got, listed, updated, reread, deleted, missing = sdk.run(
        call(f"add{kind}", {"owner": ORG, "name": name, "createdTime": "2026-01-02T03:04:05.678Z", **fields}),
        call(f"get{kind}", name),
        call(f"get{kind}s"),
        call(f"update{kind}", read(1, **{attribute: value})),
        call(f"get{kind}", name),
        call(f"delete{kind}", read(4)),
        call(f"get{kind}", name))
    affected(added)
    row = ok(got)
    assert (row["owner"], row["name"], row["organization"]) == (ADMIN, name, ORG)
    assert row["createdTime"] == "2026-01-02T03:04:05.678Z"
    assert name in {item["name"] for item in ok(listed)}
    affected(updated)
    assert ok(reread)[attribute] == value
    affected(deleted)
    assert ok(missing) is None
