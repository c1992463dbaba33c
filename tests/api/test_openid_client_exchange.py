"""openid-client 6.9.0 (tests/node, an independent certified relying party library) over HTTP:
token exchange (RFC 8693), dynamic client registration (RFC 7591) and resource indicators (RFC 8707),
through tests/node/oidc_exchange.mjs. Needs node and `make node-sdk`: skipped without them, failed
under CI=true."""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from sqlmodel import delete

from iam_console import models as m
from iam_console.db import session_scope
from iam_console.oauth import oauth
from iam_console.settings import settings
from tests.api.node_packages import node_with
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import ALL_GRANTS, PASSWORD, make_app

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
DRIVER = NODE_DIR / "oidc_exchange.mjs"
VERSION = "6.9.0"
EXCHANGE = oauth.EXCHANGE_GRANT
ACCESS = "urn:ietf:params:oauth:token-type:access_token"
MCP = f"https://mcp-{uuid.uuid4().hex[:8]}.example.com/mcp"  # this module's own


@pytest.fixture(scope="module")
def node() -> str:
    return node_with("openid-client", VERSION)


def run(node: str, server: str, *calls: dict[str, Any]) -> list[dict[str, Any]]:
    job = {"server": server, "issuer": settings.origin, "calls": list(calls)}
    process = subprocess.run([node, str(DRIVER)], input=json.dumps(job), capture_output=True, text=True,
                             timeout=60, cwd=NODE_DIR)
    assert process.returncode == 0, process.stderr
    answers = [json.loads(line) for line in process.stdout.splitlines()]
    assert len(answers) == len(calls), process.stdout
    return answers


@pytest.fixture
def org(make_org, make_user):
    organization = make_org(dcr_policy="open", protected_resources=[MCP])
    make_user(owner=organization.name, name="alice", password=PASSWORD)
    return organization.name


@pytest.fixture(autouse=True)
def fresh_limits(database):
    with session_scope() as db:
        db.exec(delete(m.Throttle).where(m.Throttle.key.like("client-registration:%")))


def user_token(server: str, app: m.Application, scope: str = "openid profile") -> str:
    answer = httpx.post(f"{server}/api/login/oauth/access_token", data={
        "grant_type": "password", "client_id": app.client_id, "client_secret": app.client_secret,
        "username": "alice", "password": PASSWORD, "scope": scope}).json()
    return answer["access_token"]


def app_token(server: str, app: m.Application) -> str:
    return httpx.post(f"{server}/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                      auth=(app.client_id, app.client_secret)).json()["access_token"]


def claims(token: str) -> dict:
    return jwt.decode(token, options={"verify_signature": False})


def exchange_call(app: m.Application, **parameters: str) -> dict[str, Any]:
    return {"method": "exchange", "clientId": app.client_id, "clientSecret": app.client_secret,
            "parameters": {"subject_token_type": ACCESS, **parameters}}


def test_token_exchange_with_an_actor_and_a_resource(node, api_server, org):  # noqa: F811
    client = make_app(org, grant_types=[*ALL_GRANTS, EXCHANGE], token_exchange_audiences=[MCP])
    subject = user_token(api_server, client)
    actor = app_token(api_server, client)
    done, broader, foreign = run(
        node, api_server,
        exchange_call(client, subject_token=subject, actor_token=actor, actor_token_type=ACCESS, resource=MCP,
                      scope="openid"),
        exchange_call(client, subject_token=subject, scope="openid profile email"),
        exchange_call(make_app(org), subject_token=subject))
    assert done["ok"], done
    tokens = done["tokens"]
    assert tokens["issued_token_type"] == ACCESS and tokens["token_type"].lower() == "bearer"
    issued = claims(tokens["access_token"])
    assert issued["act"] == {"sub": f"admin/{client.name}"} and issued["aud"] == [MCP]
    assert issued["scope"] == "openid" and issued["sub"] == claims(subject)["sub"]
    assert (broader["ok"], broader["error"]) == (False, "invalid_scope")
    assert (foreign["ok"], foreign["error"]) == (False, "unauthorized_client")


def test_another_organizations_client_is_refused(node, api_server, org, make_org, make_user):  # noqa: F811
    subject = user_token(api_server, make_app(org))
    other = make_org().name
    foreign = make_app(other, grant_types=[*ALL_GRANTS, EXCHANGE])
    (answer,) = run(node, api_server, exchange_call(foreign, subject_token=subject))
    assert (answer["ok"], answer["error"]) == (False, "invalid_grant")


def test_resource_indicators_narrow_aud(node, api_server, org):  # noqa: F811
    app = make_app(org)
    good, bad = run(node, api_server,
                    {"method": "clientCredentials", "clientId": app.client_id, "clientSecret": app.client_secret,
                     "parameters": {"resource": MCP}},
                    {"method": "clientCredentials", "clientId": app.client_id, "clientSecret": app.client_secret,
                     "parameters": {"resource": "https://elsewhere.example.com/"}})
    assert good["ok"], good
    assert claims(good["tokens"]["access_token"])["aud"] == [app.client_id, MCP]
    assert (bad["ok"], bad["error"]) == (False, "invalid_target")


def test_dynamic_client_registration_then_the_client_works(node, api_server, org):  # noqa: F811
    metadata = {"client_name": "Node agent", "redirect_uris": ["http://127.0.0.1:7777/cb"],
                "grant_types": ["authorization_code", "client_credentials"], "response_types": ["code"],
                "token_endpoint_auth_method": "client_secret_basic"}
    app = make_app(org)
    (registered,) = run(node, api_server, {"method": "register", "metadata": metadata, "organization": app.name})
    assert registered["ok"], registered
    assert registered["server"]["registration_endpoint"].endswith(f"/api/oauth/register?organization={org}")
    found = registered["client"]
    for key, value in metadata.items():
        assert found[key] == value, key
    assert found["client_secret"] and found["registration_access_token"]
    assert claims(registered["tokens"]["access_token"])["aud"] == [found["client_id"]]
    # RFC 7592 on the registration_client_uri the answer named
    uri = found["registration_client_uri"].replace(settings.origin, api_server)
    bearer = {"Authorization": f"Bearer {found['registration_access_token']}"}
    assert httpx.get(uri, headers=bearer).json()["client_name"] == "Node agent"
    assert httpx.delete(uri, headers=bearer).status_code == 204
    assert httpx.get(uri, headers=bearer).status_code == 401


def test_registration_errors_reach_the_client(node, api_server, org, make_org):  # noqa: F811
    closed = make_app(make_org().name)
    app = make_app(org)
    fragment, disabled = run(
        node, api_server,
        {"method": "register", "organization": app.name,
         "metadata": {"redirect_uris": ["https://agent.example.com/cb#x"]}},
        {"method": "register", "organization": closed.name,
         "metadata": {"redirect_uris": ["https://agent.example.com/cb"]}})
    assert (fragment["ok"], fragment["error"]) == (False, "invalid_redirect_uri")
    # a closed organization's discovery document names no registration endpoint: the client stops there
    assert disabled["ok"] is False and "registration_endpoint" in disabled["description"]
