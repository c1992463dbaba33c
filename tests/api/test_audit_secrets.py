"""Secrets stay out of the audit trail and the log (issue: records stored whole request
URIs, so client secrets, access secrets, passwords, codes and tokens reached records an
organization admin reads). Driven through HTTP, read back as that admin."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time

import httpx
import pytest
import sqlalchemy as sa
import uvicorn
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import engine, session_scope
from tests.api.conftest import sign_in
from tests.api.test_oauth import PASSWORD, REDIRECT, code_for, make_app
from tests.conftest import ADMIN_PASSWORD

BOSS_PASSWORD = "Audit-boss-pass-1"


@pytest.fixture
def acme(make_org, make_user):
    """An organization with its admin (who reads the records), alice (for the OAuth flow) and bob."""
    org = make_org()
    make_user(owner=org.name, name="boss", password=BOSS_PASSWORD, is_admin=True)
    make_user(owner=org.name, name="alice", password=PASSWORD)
    make_user(owner=org.name, name="bob", password="Bob-old-pass-1")
    return org.name


def records_text(client: TestClient, org: str) -> str:
    body = client.get("/api/get-records", params={"organizationName": org, "p": "1", "pageSize": "200"}).json()
    assert body["status"] == "ok", body
    return json.dumps(body["data"])


def global_credentials(admin) -> dict[str, str]:
    """What a global caller holds: the built-in application's client, the admin's access
    key, and an access token of the admin (password grant of a built-in application)."""
    app = make_app("built-in", grant_types=["password"])
    keys = admin.post("/api/add-user-keys", json={"owner": "built-in", "name": "admin"}).json()["data2"]
    with session_scope() as db:
        built_in = db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()
    token = TestClient(api).post("/api/login/oauth/access_token", data={
        "grant_type": "password", "client_id": app.client_id, "client_secret": app.client_secret,
        "username": "admin", "password": ADMIN_PASSWORD}).json()["access_token"]
    return {"clientId": built_in.client_id, "clientSecret": built_in.client_secret, "accessKey": keys["accessKey"],
            "accessSecret": keys["accessSecret"], "access_token": token}


def test_secrets_in_queries_and_bodies_never_reach_records(admin, acme):
    held = global_credentials(admin)
    anyone = TestClient(api)
    secrets = [held["clientSecret"], held["accessSecret"], held["access_token"]]

    # writes to acme's users by each kind of global credential, the credential in the query
    for credential in ({"clientId": held["clientId"], "clientSecret": held["clientSecret"]},
                       {"accessKey": held["accessKey"], "accessSecret": held["accessSecret"]},
                       {"access_token": held["access_token"]}):
        answer = anyone.post("/api/update-user", params={"id": f"{acme}/bob", **credential},
                             json={"displayName": f"by {next(iter(credential))}"}).json()
        assert answer["data"] == "Affected", (credential, answer)

    # a body carrying secrets, nested too
    body_secrets = {"accessSecret": "body-access-secret-1", "properties": {"client_secret": "nested-secret-2"}}
    assert admin.post("/api/update-user", params={"id": f"{acme}/bob"}, json=body_secrets).json()["data"] == "Affected"
    secrets += ["body-access-secret-1", "nested-secret-2"]

    # set-password with the passwords in the query as well as the form
    passwords = {"userOwner": acme, "userName": "bob", "oldPassword": "Bob-old-pass-1", "newPassword": "Bob-new-pass-2"}
    assert admin.post("/api/set-password", params=passwords, data=passwords).json()["status"] == "ok"
    secrets += ["Bob-old-pass-1", "Bob-new-pass-2"]

    # the token endpoint with the code and its verifier in the query (PKCE, a confidential client)
    app = make_app(acme)
    code, verifier = code_for(app, acme)
    exchange = {"grant_type": "authorization_code", "client_id": app.client_id, "client_secret": app.client_secret,
                "code": code, "code_verifier": verifier, "redirect_uri": REDIRECT}
    tokens = anyone.post("/api/login/oauth/access_token", params=exchange).json()
    assert "access_token" in tokens, tokens
    secrets += [app.client_secret, code, verifier, tokens["access_token"], tokens["refresh_token"]]

    # a record an application writes itself
    boss = sign_in(acme, "boss", BOSS_PASSWORD)
    assert boss.post("/api/add-record", json={
        "action": "app-event", "requestUri": "/app/callback?code=app-code-3&state=s&refresh_token=app-refresh-4",
        "object": json.dumps({"password": "app-password-5", "user": "bob"})}).json()["data"] == "Affected"
    secrets += ["app-code-3", "app-refresh-4", "app-password-5"]

    seen = records_text(boss, acme)
    assert [secret for secret in secrets if secret in seen] == []
    listed = json.loads(seen)
    uris = [record["requestUri"] for record in listed]
    assert f"/api/update-user?id={acme}%2Fbob&clientId={held['clientId']}&clientSecret=***" in uris
    assert f"/api/update-user?id={acme}%2Fbob&accessKey={held['accessKey']}&accessSecret=***" in uris
    assert f"/api/update-user?id={acme}%2Fbob&access_token=***" in uris
    assert "/app/callback?code=***&state=s&refresh_token=***" in uris
    set_password = next(r for r in listed if r["action"] == "set-password")
    assert "oldPassword=***" in set_password["requestUri"] and "newPassword=***" in set_password["requestUri"]
    body_record = next(r for r in listed if "properties" in r["object"])
    assert json.loads(body_record["object"]) == {"accessSecret": "***", "properties": {"client_secret": "***"}}
    assert json.loads(next(r for r in listed if r["action"] == "app-event")["object"]) == {
        "password": "***", "user": "bob"}


# --- the log ---

def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def logging_server(database):
    """The API behind uvicorn with its access log on (Reflex serves with uvicorn instead of
    granian when gunicorn is installed; the production command runs granian with its access log off)."""
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(api, host="127.0.0.1", port=port, lifespan="off", access_log=True,
                                           log_config=None, log_level="info"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 15
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=15)


def test_access_log_lines_carry_no_secret(logging_server, caplog):
    caplog.set_level(logging.INFO, logger="uvicorn.access")
    query = {"clientId": "an-id", "clientSecret": "log-client-secret-6", "access_token": "log-token-7",
             "code_verifier": "log-verifier-8", "p": "1"}
    httpx.get(f"{logging_server}/api/get-organizations", params=query)
    httpx.post(f"{logging_server}/api/login/oauth/access_token", params={"code": "log-code-9", "grant_type": "x"})
    lines = [record.getMessage() for record in caplog.records if record.name == "uvicorn.access"]
    assert any("/api/get-organizations?clientId=an-id&clientSecret=***&access_token=***&code_verifier=***&p=1"
               in line for line in lines), lines
    assert any("/api/login/oauth/access_token?code=***&grant_type=x" in line for line in lines), lines
    assert not [line for line in caplog.text.splitlines() if "log-" in line]


def test_a_database_error_in_the_log_holds_no_value(database):
    """Errors are logged with their traceback; SQLAlchemy's message would list the statement's values."""
    with pytest.raises(sa.exc.DBAPIError) as raised, engine.connect() as connection:
        connection.execute(sa.text("SELECT * FROM no_such_table WHERE secret = :secret"), {"secret": "db-secret-10"})
    assert "db-secret-10" not in str(raised.value)
