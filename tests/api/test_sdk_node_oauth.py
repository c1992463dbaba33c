"""Compatibility: the OAuth calls of the official Casdoor Node.js SDK (casdoor-nodejs-sdk 1.24.0),
unchanged, against the real HTTP server.

The SDK is built for an application of its own: getAuthToken(code) and refreshToken(rt) post a
JSON body (client id and secret in it, and Basic) and read top-level access_token and
refresh_token, throwing on any non-2xx answer; introspect(token, hint) posts a form with Basic and
returns the RFC 7662 answer; parseJwtToken verifies locally with the certificate, RS256 only and
no audience check. Each test runs its calls in one node process (tests/node/sdk_client.mjs);
the Node SDK has no password or client-credentials grant, so those tokens come over plain HTTP.

Needs node and `make node-sdk`, like test_sdk_node.py (skipped without them, except under CI=true)."""

from __future__ import annotations

import json
import subprocess
from typing import Any

import httpx
import jwt
import pytest

from iam_console.applications import certs
from tests.api.oauth_world import USER, World, add_app, authorization_code, build_world
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import PASSWORD, make_cert
from tests.api.test_sdk_node import CLIENT, NODE_DIR, NODE_TIMEOUT_SECONDS, node  # noqa: F401


def call(method: str, *args: Any, raw: bool = False) -> dict[str, Any]:
    return {"method": method, "args": list(args), **({"raw": True} if raw else {})}


def got(index: int, key: str) -> dict[str, Any]:
    """An argument: the field `key` of what call `index` got back (sdk_client.mjs)."""
    return {"$ref": index, "get": key}


def run(node: str, endpoint: str, world: World, *calls: dict[str, Any],  # noqa: F811
        secret: str | None = None) -> list[dict[str, Any]]:
    """The calls, in one node process, by an SDK configured for `world`'s application."""
    job = {"endpoint": endpoint, "clientId": world.app.client_id,
           "clientSecret": world.app.client_secret if secret is None else secret,
           "certificate": world.certificate, "orgName": world.org, "appName": world.app.name,
           "calls": list(calls)}
    process = subprocess.run([node, str(CLIENT)], input=json.dumps(job), capture_output=True, text=True,
                             timeout=NODE_TIMEOUT_SECONDS, cwd=NODE_DIR)
    assert process.returncode == 0, process.stderr
    answers = [json.loads(line) for line in process.stdout.splitlines()]
    assert len(answers) == len(calls), process.stdout
    return answers


def value(answer: dict[str, Any]) -> Any:
    assert answer["ok"], answer
    return answer["value"]


def introspection(answer: dict[str, Any]) -> dict[str, Any]:
    """introspect's answer: HTTP 200 and raw RFC 7662 JSON."""
    assert answer["ok"], answer
    assert answer["httpStatus"] == 200 and answer["contentType"].startswith("application/json"), answer
    return answer["body"]


def thrown(answer: dict[str, Any], status: int, error: str) -> None:
    """The SDK threw on an RFC 6749 error answer."""
    assert not answer["ok"], answer
    assert (answer["httpStatus"], answer["body"]["error"]) == (status, error), answer


@pytest.fixture
def world(make_org, make_user) -> World:
    return build_world(make_org, make_user)


def _password_tokens(endpoint: str, world: World) -> dict:
    response = httpx.post(f"{endpoint}/api/login/oauth/access_token", data={
        "grant_type": "password", "client_id": world.app.client_id, "client_secret": world.app.client_secret,
        "username": USER, "password": PASSWORD})
    assert response.status_code == 200, response.text
    return response.json()


def test_code_exchange_parse_refresh_and_introspect(node, api_server, world):  # noqa: F811
    code = authorization_code(api_server, world)
    (tokens, claims, live, refreshed, new_claims, old, new, spent, after_replay, replay) = run(
        node, api_server, world,
        call("getAuthToken", code),
        call("parseJwtToken", got(0, "access_token")),
        call("introspect", got(0, "access_token"), "access_token", raw=True),
        call("refreshToken", got(0, "refresh_token")),
        call("parseJwtToken", got(3, "access_token")),
        call("introspect", got(0, "access_token"), "access_token", raw=True),
        call("introspect", got(3, "access_token"), "access_token", raw=True),
        call("refreshToken", got(0, "refresh_token")),  # rotation: the old refresh token is spent
        call("introspect", got(3, "access_token"), "access_token", raw=True),
        call("getAuthToken", code),  # a code works once
    )
    first = value(tokens)
    assert set(first) == {"access_token", "refresh_token"} and all(first.values())
    user = value(claims)
    assert (user["owner"], user["name"], user["displayName"]) == (world.org, USER, "Alice")
    assert user["tokenType"] == "access-token" and user["aud"] == [world.app.client_id]
    body = introspection(live)
    assert body["active"] is True and (body["username"], body["client_id"]) == (USER, world.app.client_id)

    second = value(refreshed)
    assert all(second.values()) and second["access_token"] != first["access_token"]
    assert value(new_claims)["name"] == USER
    assert introspection(old) == {"active": False}
    assert introspection(new)["active"] is True
    thrown(spent, 400, "invalid_grant")
    assert introspection(after_replay) == {"active": False}  # the replay ended the family, its new pair too
    thrown(replay, 400, "invalid_grant")


def test_introspect_a_refresh_token_then_revoke(node, api_server, world):  # noqa: F811
    tokens = _password_tokens(api_server, world)
    access, refresh = tokens["access_token"], tokens["refresh_token"]
    before = run(node, api_server, world, call("introspect", access, "access_token", raw=True),
                 call("introspect", refresh, "refresh_token", raw=True),
                 call("introspect", "not-a-token", "access_token", raw=True))
    assert [introspection(a).get("token_type") for a in before] == ["Bearer", "refresh_token", None]
    assert introspection(before[2]) == {"active": False}

    response = httpx.post(f"{api_server}/api/login/oauth/revoke", data={"token": refresh},
                          auth=(world.app.client_id, world.app.client_secret))
    assert response.status_code == 200
    after = run(node, api_server, world, call("introspect", access, "access_token", raw=True),
                call("introspect", refresh, "refresh_token", raw=True), call("refreshToken", refresh))
    assert [introspection(a) for a in after[:2]] == [{"active": False}] * 2
    thrown(after[2], 400, "invalid_grant")


def test_a_wrong_client_secret_throws_invalid_client(node, api_server, world):  # noqa: F811
    code = authorization_code(api_server, world)
    refresh = _password_tokens(api_server, world)["refresh_token"]
    exchange, refreshed, peek = run(node, api_server, world, call("getAuthToken", code),
                                    call("refreshToken", refresh),
                                    call("introspect", refresh, "refresh_token", raw=True), secret="wrong")
    thrown(exchange, 401, "invalid_client")
    thrown(refreshed, 401, "invalid_client")
    thrown(peek, 401, "invalid_client")
    # nothing was spent by the refused calls
    assert all(value(a) for a in run(node, api_server, world, call("getAuthToken", code),
                                     call("refreshToken", refresh)))


def test_parse_jwt_token_checks_the_signature(node, api_server, world):  # noqa: F811
    genuine = _password_tokens(api_server, world)["access_token"]
    _, key = certs.generate("RS256", 2048, 1, "forger")
    forged = jwt.encode(jwt.decode(genuine, options={"verify_signature": False}), key, algorithm="RS256",
                        headers={"kid": jwt.get_unverified_header(genuine)["kid"]})
    accepted, refused = run(node, api_server, world, call("parseJwtToken", genuine), call("parseJwtToken", forged))
    assert value(accepted)["name"] == USER
    assert not refused["ok"] and refused["error"] == "invalid signature", refused


def test_node_sdk_quirks_rs256_only_and_no_audience_check(node, api_server, world):  # noqa: F811
    # the SDK checks with jsonwebtoken.verify(token, cert, {algorithms: ['RS256']}), no audience
    es256 = add_app(world.org, cert=make_cert("ES256", 0), token_signing_method="ES256")
    es_token = _password_tokens(api_server, es256)["access_token"]
    other_app = add_app(world.org)  # same cert, another client id
    other_token = _password_tokens(api_server, other_app)["access_token"]
    (refused,) = run(node, api_server, es256, call("parseJwtToken", es_token))
    assert not refused["ok"] and refused["error"] == "invalid algorithm", refused
    (accepted,) = run(node, api_server, world, call("parseJwtToken", other_token))
    assert value(accepted)["aud"] == [other_app.app.client_id]
