"""S3-compatible storage providers (AWS S3, MinIO) through the same upload, serve and delete
path as the local files directory, against a local S3-compatible server (moto in server mode):
pathPrefix, domain and bucket honoured, every request through the outbound guard."""

from __future__ import annotations

import json
import socket

import boto3
import httpx
import pytest
from fastapi.testclient import TestClient
from moto.server import ThreadedMotoServer

from iam_console.api.app import api
from tests.api.conftest import ok_body
from tests.conftest import unique

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 64
KEYS = {"clientId": "test-access", "clientSecret": "test-secret"}


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def s3():
    """A local S3-compatible server and a bucket in it."""
    port = _free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{port}"
    client = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test-access",
                          aws_secret_access_key="test-secret")
    client.create_bucket(Bucket="iam-files")
    # the administrator's part: the bucket's objects are readable by anyone (the URLs are public)
    client.put_bucket_policy(Bucket="iam-files", Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::iam-files/*"}]}))
    yield endpoint, client
    server.stop()


def _provider(admin, owner: str, endpoint: str, **fields) -> str:
    name = unique("s3")
    ok_body(admin.post("/api/add-provider", json={
        "owner": owner, "name": name, "category": "Storage", "type": "MinIO", "endpoint": endpoint,
        "bucket": "iam-files", **KEYS, **fields}))
    return name


def _upload(admin, provider: str, path: str, content: bytes = PNG) -> dict:
    return admin.post("/api/upload-resource", params={
        "owner": "built-in", "user": "admin", "tag": "custom", "fullFilePath": path, "provider": provider},
        files={"file": ("f.bin", content, "application/octet-stream")}).json()


def _objects(client) -> list[str]:
    return [o["Key"] for o in client.list_objects_v2(Bucket="iam-files").get("Contents", [])]


def test_upload_serve_and_delete_through_an_s3_provider(admin, s3):
    endpoint, client = s3
    provider = _provider(admin, "built-in", endpoint, pathPrefix="/uploads/")
    path = f"{unique('pic')}.png"
    answer = _upload(admin, provider, path)
    assert answer["status"] == "ok", answer
    key = f"uploads/resource/built-in/{path}"
    assert answer["data"] == f"{endpoint}/iam-files/{key}"
    assert key in _objects(client)
    assert httpx.get(answer["data"]).content == PNG  # served by the store itself
    row = ok_body(admin.get("/api/get-resource", params={"id": f"built-in/{path}"}))["data"]
    assert row["provider"] == provider and row["url"] == answer["data"]

    ok_body(admin.post("/api/delete-resource", json={"owner": "built-in", "name": path}))
    assert key not in _objects(client)


def test_the_domain_names_the_urls_and_a_shared_provider_serves_every_organization(admin, s3):
    endpoint, client = s3
    provider = _provider(admin, "admin", endpoint, domain="https://cdn.example.com/files/")
    path = f"{unique('doc')}.png"
    answer = _upload(admin, provider, path)
    assert answer["data"] == f"https://cdn.example.com/files/resource/built-in/{path}"
    assert f"resource/built-in/{path}" in _objects(client)
    ok_body(admin.post("/api/delete-resource", json={"owner": "built-in", "name": path}))
    assert f"resource/built-in/{path}" not in _objects(client)


def test_the_endpoint_is_refused_unless_the_allow_list_names_it(admin, s3, allow):
    endpoint, client = s3
    provider = _provider(admin, "built-in", endpoint)
    path = f"{unique('refused')}.png"
    answer = _upload(admin, provider, path)
    assert answer["status"] == "error" and "IAM_OUTBOUND_ALLOW" in answer["msg"], answer
    assert f"resource/built-in/{path}" not in _objects(client)
    # the refused upload left no record either
    assert ok_body(admin.get("/api/get-resource", params={"id": f"built-in/{path}"}))["data"] is None
    allow("127.0.0.1")
    assert _upload(admin, provider, path)["status"] == "ok"


def test_a_provider_without_keys_or_of_another_category_is_refused(admin, s3):
    endpoint, _ = s3
    keyless = _provider(admin, "built-in", endpoint, clientId="", clientSecret="")
    assert "access key" in _upload(admin, keyless, f"{unique('k')}.png")["msg"]
    name = unique("mail")
    ok_body(admin.post("/api/add-provider", json={"owner": "built-in", "name": name, "category": "Email",
                                                  "type": "Default"}))
    assert _upload(admin, name, f"{unique('m')}.png")["msg"] == f"The storage provider {name} does not exist"
    assert TestClient(api).get("/files/resource/built-in/missing.png").status_code == 404


def test_the_resources_list_uploads_with_the_organizations_storage_provider(admin, s3):
    """The console's Upload: no provider in the request; the organization's own Storage provider,
    before a shared one."""
    from sqlmodel import select

    from iam_console import models as m
    from iam_console.core.access import Actor
    from iam_console.db import session_scope
    from iam_console.files import files

    endpoint, client = s3
    organization = unique("s3org")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": organization}))
    name = f"{unique('listed')}.png"
    _provider(admin, "admin", endpoint, domain="https://shared.example.com")  # a shared one: not chosen
    provider = _provider(admin, organization, endpoint, pathPrefix="org")
    with session_scope() as db:
        god = Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())
        url, stored = files.upload_listed_file(db, god, organization, name, PNG)
    key = f"org/resource/{organization}/{stored}"
    assert url == f"{endpoint}/iam-files/{key}" and key in _objects(client)
    row = ok_body(admin.get("/api/get-resource", params={"id": f"{organization}/{stored}"}))["data"]
    assert row["provider"] == provider and row["fileType"] == "image" and row["fileFormat"] == ".png"
