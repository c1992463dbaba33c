"""Pushed authorization requests (RFC 9126) and request objects (RFC 9101) through HTTP: the push,
the authorization endpoint with a request_uri or a request object, the code they lead to, and
what must be refused (replayed, expired, another client's request_uri; unsigned, tampered or
foreign request objects). docs/api.md "Standards"."""

from __future__ import annotations

import time
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
from sqlmodel import select, update

from iam_console import models as m
from iam_console.db import session_scope
from iam_console.oauth import pushed
from tests.api.par_jar_dpop_kit import PAR_URL, client, ec_key, public_jwk, request_object, rows, rsa_key, token_rows
from tests.api.test_oauth import PASSWORD, REDIRECT, exchange, make_app, pkce

OTHER_REDIRECT = "https://evil.example/cb"


@pytest.fixture
def org(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com")
    return org.name


@pytest.fixture
def keys():
    return {"ec": ec_key(), "rsa": rsa_key()}


@pytest.fixture
def app_(org, keys):
    return make_app(org, jwks={"keys": [public_jwk(keys["ec"], "ec-1"), public_jwk(keys["rsa"], "rsa-1")]})


def push(app, *, secret: str | None = None, **form) -> tuple[int, dict]:
    body = {"client_id": app.client_id, "client_secret": app.client_secret if secret is None else secret, **form}
    response = client().post("/api/login/oauth/par", data={k: v for k, v in body.items() if v != ""})
    return response.status_code, response.json()


def pushed_code_request(challenge: str, **more) -> dict:
    return {"response_type": "code", "redirect_uri": REDIRECT, "scope": "openid profile", "state": "st-par",
            "nonce": "n-par", "code_challenge": challenge, "code_challenge_method": "S256", **more}


def sign_in(org: str, app, query: dict) -> dict:
    """The authorize page's sign-in post, with the page's query."""
    return client().post("/api/login", params=query, json={
        "application": app.name, "organization": org, "username": "alice", "password": PASSWORD,
        "type": "code"}).json()


def code_of(answer: dict) -> str:
    assert answer["status"] == "ok", answer
    redirect = urlsplit(answer["data2"])
    assert f"{redirect.scheme}://{redirect.netloc}{redirect.path}" == REDIRECT
    return parse_qs(redirect.query)["code"][0]


# --- discovery ---

def test_discovery_advertises_what_is_served():
    doc = client().get("/.well-known/openid-configuration").json()
    assert doc["pushed_authorization_request_endpoint"] == PAR_URL
    assert doc["require_pushed_authorization_requests"] is False
    assert doc["request_parameter_supported"] is True
    assert doc["request_uri_parameter_supported"] is False  # only the PAR endpoint's request_uri values
    assert doc["request_object_signing_alg_values_supported"] == ["RS256", "ES256"]
    assert "none" not in doc["request_object_signing_alg_values_supported"]
    assert "ES256" in doc["dpop_signing_alg_values_supported"]


# --- PAR ---

def test_a_pushed_request_leads_to_one_code(org, app_):
    verifier, challenge = pkce()
    status, answer = push(app_, **pushed_code_request(challenge))
    assert status == 201, answer
    assert answer["request_uri"].startswith("urn:ietf:params:oauth:request_uri:")
    assert 0 < answer["expires_in"] <= 90
    # the page's query: client_id and request_uri alone; the pushed parameters count
    query = {"client_id": app_.client_id, "request_uri": answer["request_uri"]}
    assert client().get("/api/get-app-login", params=query).json()["data"]["scope"] == "openid profile"
    code = code_of(sign_in(org, app_, query))
    status, tokens = exchange(app_, code, verifier, redirect_uri=REDIRECT)
    assert status == 200, tokens
    assert jwt.decode(tokens["id_token"], options={"verify_signature": False})["nonce"] == "n-par"

    # replayed: refused, no second code
    before = token_rows()
    again = sign_in(org, app_, query)
    assert again["status"] == "error" and again["msg"] == pushed.UNUSABLE
    assert token_rows() == before


def test_parameters_beside_the_request_uri_are_ignored(org, app_):
    _, challenge = pkce()
    _, answer = push(app_, **pushed_code_request(challenge))
    query = {"client_id": app_.client_id, "request_uri": answer["request_uri"], "redirect_uri": OTHER_REDIRECT,
             "scope": "openid email"}
    assert code_of(sign_in(org, app_, query))


def test_an_expired_request_uri_is_refused(org, app_):
    _, challenge = pkce()
    _, answer = push(app_, **pushed_code_request(challenge))
    with session_scope() as db:
        db.exec(update(m.PushedRequest).values(expires=1))
    before = token_rows()
    refused = sign_in(org, app_, {"client_id": app_.client_id, "request_uri": answer["request_uri"]})
    assert refused["status"] == "error" and refused["msg"] == pushed.UNUSABLE
    assert token_rows() == before


def test_another_clients_request_uri_is_refused(org, app_):
    _, challenge = pkce()
    _, answer = push(app_, **pushed_code_request(challenge))
    other = make_app(org)
    refused = sign_in(org, other, {"client_id": other.client_id, "request_uri": answer["request_uri"]})
    assert refused["status"] == "error" and refused["msg"] == pushed.UNUSABLE
    # and an unknown one
    refused = sign_in(org, app_, {"client_id": app_.client_id,
                                  "request_uri": "urn:ietf:params:oauth:request_uri:made-up"})
    assert refused["status"] == "error" and refused["msg"] == pushed.UNUSABLE


def test_the_first_opening_leaves_time_to_sign_in(org, app_):
    _, challenge = pkce()
    _, answer = push(app_, **pushed_code_request(challenge))
    query = {"client_id": app_.client_id, "request_uri": answer["request_uri"]}
    assert client().get("/api/get-app-login", params=query).json()["status"] == "ok"
    with session_scope() as db:
        row = db.exec(select(m.PushedRequest).where(m.PushedRequest.application == app_.name)).one()
        assert row.opened and row.expires > time.time() + pushed.LIFETIME  # moved on: time to sign in
    assert code_of(sign_in(org, app_, query))


def test_push_errors_store_nothing(org, app_):
    _, challenge = pkce()
    before = rows(m.PushedRequest)
    status, answer = push(app_, secret="wrong", **pushed_code_request(challenge))
    assert status == 401 and answer["error"] == "invalid_client"
    status, answer = push(app_, **pushed_code_request(challenge, redirect_uri=OTHER_REDIRECT))
    assert status == 400 and answer["error"] == "invalid_request" and "Redirect URI" in answer["error_description"]
    status, answer = push(app_, **pushed_code_request(challenge, request_uri="urn:x"))
    assert status == 400 and answer["error"] == "invalid_request"
    status, answer = push(app_, **pushed_code_request(challenge, response_type="bogus"))
    assert status == 400 and answer["error"] == "invalid_request"
    # a client without its secret must use PKCE
    status, answer = push(app_, secret="", **pushed_code_request("", code_challenge_method=""))
    assert status == 401 and answer["error"] == "invalid_client"
    status, answer = push(app_, client_id="nobody", **pushed_code_request(challenge))
    assert status == 401 and answer["error"] == "invalid_client"
    assert rows(m.PushedRequest) == before


def test_a_public_client_pushes_with_pkce_alone(org, app_):
    verifier, challenge = pkce()
    status, answer = push(app_, secret="", **pushed_code_request(challenge))
    assert status == 201, answer
    code = code_of(sign_in(org, app_, {"client_id": app_.client_id, "request_uri": answer["request_uri"]}))
    assert exchange(app_, code, verifier)[0] == 200


def test_an_application_may_require_pushed_requests(org, keys):
    app = make_app(org, require_pushed_authorization_requests=True)
    verifier, challenge = pkce()
    plain = {"client_id": app.client_id, **pushed_code_request(challenge)}
    refused = sign_in(org, app, plain)
    assert refused["status"] == "error" and "pushed authorization requests" in refused["msg"]
    _, answer = push(app, **pushed_code_request(challenge))
    code = code_of(sign_in(org, app, {"client_id": app.client_id, "request_uri": answer["request_uri"]}))
    assert exchange(app, code, verifier)[0] == 200


# --- JAR ---

@pytest.mark.parametrize("kind,alg", [("ec", "ES256"), ("rsa", "RS256")])
def test_a_signed_request_object_at_the_authorization_endpoint(org, app_, keys, kind, alg):
    verifier, challenge = pkce()
    request = request_object(keys[kind], app_.client_id, pushed_code_request(challenge), alg=alg,
                             kid=f"{kind}-1")
    query = {"client_id": app_.client_id, "request": request, "scope": "openid email"}  # outside: ignored
    assert client().get("/api/get-app-login", params=query).json()["data"]["scope"] == "openid profile"
    code = code_of(sign_in(org, app_, query))
    assert exchange(app_, code, verifier)[0] == 200
    # the request object led to its code: never another
    again = sign_in(org, app_, query)
    assert again["status"] == "error" and again["msg"] == "The request object has been used"


def test_a_signed_request_object_pushed(org, app_, keys):
    verifier, challenge = pkce()
    request = request_object(keys["ec"], app_.client_id, pushed_code_request(challenge))
    status, answer = push(app_, request=request)
    assert status == 201, answer
    code = code_of(sign_in(org, app_, {"client_id": app_.client_id, "request_uri": answer["request_uri"]}))
    assert exchange(app_, code, verifier)[0] == 200
    # pushed again: one push per request object
    status, answer = push(app_, request=request)
    assert status == 400 and answer["error"] == "invalid_request_object"


def _tampered(request: str) -> str:
    header, _, signature = request.split(".")
    claims = jwt.decode(request, options={"verify_signature": False})
    claims["redirect_uri"] = OTHER_REDIRECT
    forged = jwt.utils.base64url_encode(jwt.api_jwt.json.dumps(claims).encode()).decode()
    return f"{header}.{forged}.{signature}"


def bad_request_objects(app, keys) -> dict[str, str]:
    _, challenge = pkce()
    parameters = pushed_code_request(challenge)
    good = request_object(keys["ec"], app.client_id, parameters)
    return {
        "unsigned": jwt.encode({"iss": app.client_id, "aud": "http://testserver", "exp": 2**31, **parameters},
                               None, algorithm="none"),
        "hmac with the client secret": request_object(app.client_secret, app.client_id, parameters, alg="HS256"),
        "tampered": _tampered(good),
        "another key": request_object(ec_key(), app.client_id, parameters),
        "another audience": request_object(keys["ec"], app.client_id, parameters, aud="https://other.example"),
        "another issuer": request_object(keys["ec"], app.client_id, parameters, iss="someone-else"),
        "expired": request_object(keys["ec"], app.client_id, parameters, exp=1000),
        "without exp": request_object(keys["ec"], app.client_id, parameters, exp=None),
        "too long-lived": request_object(keys["ec"], app.client_id, parameters, exp=2**31),
        "another client_id": request_object(keys["ec"], app.client_id, {**parameters, "client_id": "x"}),
        "not a JWT": "not-a-jwt",
    }


@pytest.mark.parametrize("case", [
    "unsigned", "hmac with the client secret", "tampered", "another key", "another audience", "another issuer",
    "expired", "without exp", "too long-lived", "another client_id", "not a JWT"])
def test_bad_request_objects_are_refused_everywhere(org, app_, keys, case):
    request = bad_request_objects(app_, keys)[case]
    before_tokens, before_pushed = token_rows(), rows(m.PushedRequest)
    status, answer = push(app_, request=request)
    assert status == 400 and answer["error"] == "invalid_request_object", (case, answer)
    refused = sign_in(org, app_, {"client_id": app_.client_id, "request": request})
    assert refused["status"] == "error", (case, refused)
    assert (token_rows(), rows(m.PushedRequest)) == (before_tokens, before_pushed)


def test_an_application_without_keys_takes_no_request_object(org, keys):
    app = make_app(org)
    _, challenge = pkce()
    status, answer = push(app, request=request_object(keys["ec"], app.client_id, pushed_code_request(challenge)))
    assert status == 400 and "no registered key" in answer["error_description"]
