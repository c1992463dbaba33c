"""Resources: RFC 8707 resource indicators narrow a token's audience to what the organization
declares, and RFC 9728 protected resource metadata is served for this server's API and for the
declared resources (oauth/resources.py)."""

from __future__ import annotations

import uuid
from urllib.parse import quote

import jwt
import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.core import lookup
from iam_console.db import session_scope
from iam_console.oauth import resources
from tests.api.test_oauth import PASSWORD, REDIRECT, exchange, make_app, pkce, token_call

# this module's own: a resource is one organization's (the fixture's organizations, all "Tools Inc")
TAG = uuid.uuid4().hex[:8]
MCP = f"https://mcp-{TAG}.example.com/mcp"
LOCAL = f"http://testserver/mcp-{TAG}/tools"


@pytest.fixture
def org(make_org, make_user):
    organization = make_org(protected_resources=[MCP, LOCAL], display_name="Tools Inc")
    make_user(owner=organization.name, name="alice", password=PASSWORD)
    return organization.name


def aud(token: str) -> list[str]:
    return jwt.decode(token, options={"verify_signature": False})["aud"]


def test_the_servers_own_metadata_names_the_origin_and_the_issuer():
    document = TestClient(api).get("/.well-known/oauth-protected-resource")
    assert document.status_code == 200 and document.headers["access-control-allow-origin"] == "*"
    body = document.json()
    assert body["resource"] == "http://testserver" and body["authorization_servers"] == ["http://testserver"]
    issuer = TestClient(api).get("/.well-known/oauth-authorization-server").json()["issuer"]
    assert issuer in body["authorization_servers"] and "openid" in body["scopes_supported"]


def test_declared_resources_have_their_documents(org):
    http = TestClient(api)
    local = http.get(f"/.well-known/oauth-protected-resource/mcp-{TAG}/tools").json()
    assert local["resource"] == LOCAL and local["authorization_servers"] == ["http://testserver"]
    assert local["resource_name"] == "Tools Inc"
    remote = http.get(f"/.well-known/oauth-protected-resource?resource={quote(MCP, safe='')}").json()
    assert remote["resource"] == MCP
    for missing in ("/.well-known/oauth-protected-resource/nothing/here",
                    "/.well-known/oauth-protected-resource?resource=https%3A%2F%2Funknown.example.com"):
        answer = http.get(missing)
        assert answer.status_code == 404 and answer.json()["error"] == "not_found"


def test_a_resource_narrows_aud_to_a_declared_one(org):
    app = make_app(org)
    status, body = token_call(grant_type="client_credentials", client_id=app.client_id,
                              client_secret=app.client_secret, resource=MCP)
    assert status == 200 and aud(body["access_token"]) == [app.client_id, MCP]
    status, body = token_call(grant_type="client_credentials", client_id=app.client_id,
                              client_secret=app.client_secret, resource="https://elsewhere.example.com/")
    assert (status, body["error"]) == (400, "invalid_target")
    # the authorization code flow: the resource of the request goes into the token
    verifier, challenge = pkce()
    signed_in = sign_in_for_code(app, org, challenge, MCP)
    assert signed_in["status"] == "ok", signed_in
    status, body = exchange(app, signed_in["data"], verifier, resource=MCP)
    assert status == 200 and aud(body["access_token"]) == [app.client_id, MCP]
    refused = sign_in_for_code(app, org, challenge, "https://elsewhere.example.com/")
    assert refused["status"] == "error" and "not one the organization declares" in refused["msg"]


def sign_in_for_code(app, org: str, challenge: str, resource: str) -> dict:
    """The authorize page's sign-in, with a resource in the authorization request."""
    return TestClient(api).post("/api/login", params={
        "clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
        "state": "s", "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource},
        json={"application": app.name, "organization": org, "username": "alice", "password": PASSWORD,
              "type": "code"}).json()


def test_without_declared_resources_any_uri_but_another_clients_id_is_taken(make_org):
    org = make_org().name
    app, other = make_app(org), make_app(org)
    status, body = token_call(grant_type="client_credentials", client_id=app.client_id,
                              client_secret=app.client_secret, resource="https://anything.example.com/")
    assert status == 200 and aud(body["access_token"])[1] == "https://anything.example.com/"
    for bad in (other.client_id, "relative/path", "https://x.example.com/#frag", "https://" + "x" * 300):
        status, body = token_call(grant_type="client_credentials", client_id=app.client_id,
                                  client_secret=app.client_secret, resource=bad)
        assert (status, body["error"]) == (400, "invalid_target"), bad


def test_the_problem_of_a_resource_is_told(org):
    with session_scope() as db:
        app = make_app(org)
        assert resources.problem(db, app, MCP) == ()
        assert resources.problem(db, app, "https://elsewhere.example.com")[0].endswith("declares")
    lookup.forget()


@pytest.mark.parametrize("bad", [["ftp://files.example.com"], ["https://x.example.com/#f"], ["relative"], [5],
                                 [f"https://r{i}.example.com" for i in range(51)]])
def test_organizations_refuse_bad_resources_and_keep_good_ones(admin, make_org, bad):
    org = make_org().name
    record = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    refused = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                         json=record | {"protectedResources": bad}).json()
    assert refused["status"] == "error", refused
    stored = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    assert stored["protectedResources"] == []
    own = f"https://{uuid.uuid4().hex[:8]}.example.com/api"
    kept = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                      json=record | {"protectedResources": [own]}).json()
    assert kept["status"] == "ok"
    assert admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"][
        "protectedResources"] == [own]


def test_a_resource_is_one_organizations(admin, make_org):
    taken = f"https://{uuid.uuid4().hex[:8]}.example.com/api"
    make_org(protected_resources=[taken])
    org = make_org().name
    record = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    refused = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                         json=record | {"protectedResources": [taken]}).json()
    assert refused["status"] == "error" and "another organization's" in refused["msg"], refused
    assert admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"][
        "protectedResources"] == []
