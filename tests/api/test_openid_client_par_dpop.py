"""Interoperability: openid-client 6.9.0 (npm), a certified relying party, unchanged, uses the
server's pushed authorization requests (RFC 9126), request objects (RFC 9101) and DPoP (RFC 9449)
over HTTP, with nothing configured beyond discovery and its client credentials.

tests/node/oidc_par_dpop.mjs runs one scenario per node process and prints what the client got
at each step or the OAuth error it threw. Needs node and `make node-sdk`, like test_sdk_node.py
(skipped without them, except under CI=true)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import jwt
import pytest

from iam_console.oauth import pushed
from tests.api.node_packages import node_with
from tests.api.oauth_world import USER, World, build_world
from tests.api.par_jar_dpop_kit import ec_key, public_jwk
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import PASSWORD, REDIRECT
from tests.api.test_sdk_node import NODE_DIR, NODE_TIMEOUT_SECONDS

DRIVER = NODE_DIR / "oidc_par_dpop.mjs"
CLIENT_VERSION = "6.9.0"
ISSUER = "http://testserver"


@pytest.fixture(scope="session")
def node() -> str:
    return node_with("openid-client", CLIENT_VERSION)


def run(node: str, server: str, world: World, scenario: str, **job: Any) -> dict[str, dict[str, Any]]:
    """The scenario's steps: {name: {ok, value} | {ok: false, error, status, message}}."""
    body = {"issuer": ISSUER, "server": server, "clientId": world.app.client_id,
            "clientSecret": world.app.client_secret, "orgName": world.org, "appName": world.app.name,
            "username": USER, "password": PASSWORD, "redirectUri": REDIRECT, "scenario": scenario, **job}
    process = subprocess.run([node, str(DRIVER)], input=json.dumps(body), capture_output=True, text=True,
                             timeout=NODE_TIMEOUT_SECONDS, cwd=NODE_DIR)
    assert process.returncode == 0, process.stderr
    return json.loads(process.stdout.splitlines()[-1])


def value(steps: dict[str, dict[str, Any]], name: str) -> Any:
    assert name in steps, steps
    assert steps[name]["ok"], steps[name]
    return steps[name]["value"]


def refused(steps: dict[str, dict[str, Any]], name: str) -> dict[str, Any]:
    assert name in steps, steps
    assert not steps[name]["ok"], steps[name]
    return steps[name]


def jwt_private(key) -> dict[str, Any]:
    """The private JWK openid-client signs request objects with."""
    return jwt.algorithms.ECAlgorithm.to_jwk(key, as_dict=True)


@pytest.fixture
def world(make_org, make_user) -> World:
    return build_world(make_org, make_user)


def test_discovery_as_openid_client_reads_it(node, api_server, world):  # noqa: F811
    metadata = value(run(node, api_server, world, "discovered"), "metadata")
    assert metadata["pushed_authorization_request_endpoint"] == f"{ISSUER}/api/login/oauth/par"
    assert metadata["require_pushed_authorization_requests"] is False
    assert metadata["request_object_signing_alg_values_supported"] == ["RS256", "ES256"]
    assert "ES256" in metadata["dpop_signing_alg_values_supported"]


def test_a_pushed_request_with_dpop_through_the_code_flow(node, api_server, world):  # noqa: F811
    steps = run(node, api_server, world, "codeFlow", dpop=True)
    pushed_query = value(steps, "par")["query"]
    assert set(pushed_query) == {"client_id", "request_uri"}
    assert pushed_query["request_uri"].startswith(pushed.URN)
    tokens = value(steps, "token")
    assert tokens["token_type"] == "dpop"
    key = tokens["claims"]["cnf"]["jkt"]
    assert value(steps, "userinfo")["email"] == "alice@example.com"
    described = value(steps, "introspection")
    assert described["active"] is True and described["token_type"] == "DPoP" and described["cnf"] == {"jkt": key}
    refreshed = value(steps, "refresh")
    assert refreshed["token_type"] == "dpop" and refreshed["claims"]["cnf"] == {"jkt": key}

    # the request_uri led to its code: the same query again gets nothing
    again = httpx.post(f"{api_server}/api/login", params=pushed_query, json={
        "application": world.app.name, "organization": world.org, "username": USER, "password": PASSWORD,
        "type": "code"}).json()
    assert again["status"] == "error" and again["msg"] == pushed.UNUSABLE


def test_a_public_client_refreshes_only_with_its_key(node, api_server, world):  # noqa: F811
    steps = run(node, api_server, world, "codeFlow", dpop=True, public=True)
    assert value(steps, "token")["token_type"] == "dpop"
    other = refused(steps, "refreshWithAnotherKey")
    assert other["error"] == "invalid_dpop_proof" and other["status"] == 400
    assert value(steps, "refresh")["token_type"] == "dpop"


@pytest.mark.parametrize("par", [True, False])
def test_a_signed_request_object(node, api_server, make_org, make_user, par):  # noqa: F811
    key = ec_key()
    world = build_world(make_org, make_user, jwks={"keys": [public_jwk(key, "rp-1")]})
    private = {**jwt_private(key), "kid": "rp-1"}
    steps = run(node, api_server, world, "codeFlow", requestObjectKey=private, par=par)
    assert set(value(steps, "jar")) == {"client_id", "request"}
    assert value(steps, "token")["token_type"] == "bearer"
    assert value(steps, "userinfo")["email"] == "alice@example.com"


def test_a_request_object_signed_by_an_unregistered_key(node, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user, jwks={"keys": [public_jwk(ec_key(), "rp-1")]})
    private = {**jwt_private(ec_key()), "kid": "rp-1"}
    failed = refused(run(node, api_server, world, "codeFlow", requestObjectKey=private), "par")
    assert failed["error"] == "invalid_request_object" and failed["status"] == 400


def test_client_credentials_with_and_without_dpop(node, api_server, world):  # noqa: F811
    steps = run(node, api_server, world, "clientCredentials")
    assert value(steps, "plain")["token_type"] == "bearer" and "cnf" not in value(steps, "plain")["claims"]
    bound = value(steps, "dpop")
    assert bound["token_type"] == "dpop" and bound["claims"]["cnf"]["jkt"]
    assert value(steps, "introspection")["cnf"] == bound["claims"]["cnf"]


def test_an_application_that_requires_dpop(node, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user, require_dpop=True)
    steps = run(node, api_server, world, "clientCredentials")
    plain = refused(steps, "plain")
    assert plain["error"] == "invalid_dpop_proof" and plain["status"] == 400
    assert value(steps, "dpop")["token_type"] == "dpop"


def test_an_application_that_requires_nonces(node, api_server, make_org, make_user):  # noqa: F811
    """openid-client retries once with the server's DPoP-Nonce (use_dpop_nonce), at the push, the
    token endpoint and userinfo."""
    world = build_world(make_org, make_user, require_dpop_nonce=True)
    steps = run(node, api_server, world, "codeFlow", dpop=True)
    assert value(steps, "token")["token_type"] == "dpop"
    assert value(steps, "userinfo")["email"] == "alice@example.com"
    assert value(steps, "refresh")["token_type"] == "dpop"


def test_an_application_that_requires_pushed_requests(node, api_server, make_org, make_user):  # noqa: F811
    world = build_world(make_org, make_user, require_pushed_authorization_requests=True)
    assert "pushed authorization requests" in refused(run(node, api_server, world, "codeFlow", par=False),
                                                      "signIn")["message"]
    assert value(run(node, api_server, world, "codeFlow"), "token")["token_type"] == "bearer"


def test_push_errors(node, api_server, world):  # noqa: F811
    wrong = refused(run(node, api_server, world, "pushWithWrongSecret"), "par")
    assert wrong["error"] == "invalid_client" and wrong["status"] == 401 and wrong["challenge"] == ["basic"]
    unregistered = refused(run(node, api_server, world, "pushUnregisteredRedirect"), "par")
    assert unregistered["error"] == "invalid_request" and unregistered["status"] == 400
