"""Client authentication's rules (oauth/clients.py) and the authentication request parameters'
(oauth/oauth.py), with assertions built here so that each rule is met alone: what an application
registers (tokenEndpointAuthMethod, jwks, jwksUri), what an assertion must say, that the jwks_uri
goes through the outbound guard, and when a session must sign in again. Each refusal writes nothing.
openid-client's view of the same: test_openid_client_auth.py."""

from __future__ import annotations

import json
import secrets
import socket
import time
from datetime import timedelta

import jwt
import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import RSAKey
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.i18n import language_from_locales
from iam_console.models.base import utcnow
from iam_console.oauth import clients, oauth
from iam_console.settings import settings
from tests.api.conftest import ok_body
from tests.api.test_oauth import ALL_GRANTS, REDIRECT, code_for, make_app, world  # noqa: F401
from tests.conftest import unique

ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
TOKEN_ENDPOINT = "/api/login/oauth/access_token"


@pytest.fixture(scope="module")
def rsa() -> RSAKey:
    return RSAKey.generate_key(2048, parameters={"kid": "k1"})


def public_set(key: RSAKey) -> dict:
    return {"keys": [key.as_dict(private=False)]}


def assertion(app: m.Application, key: RSAKey | str, **changes) -> str:
    """An assertion of `app` (iss = sub = its client id, aud = the issuer, 60 s), signed with the
    RSA key (RS256) or, given a string, HMAC under it (HS256); `changes` replace claims (None drops)."""
    now = int(time.time())
    claims = {"iss": app.client_id, "sub": app.client_id, "aud": settings.origin, "iat": now, "exp": now + 60,
              "jti": secrets.token_hex(8), **changes}
    claims = {k: v for k, v in claims.items() if v is not None}
    if isinstance(key, str):
        return jwt.encode(claims, key, algorithm="HS256")
    return jwt.encode(claims, key.as_pem(private=True), algorithm="RS256", headers={"kid": key.kid})


def token_call(path: str = TOKEN_ENDPOINT, **form) -> tuple[int, dict]:
    answer = TestClient(api).post(path, data=form)
    return answer.status_code, answer.json()


def client_credentials(app: m.Application, client_assertion: str, **extra) -> tuple[int, dict]:
    return token_call(grant_type="client_credentials", client_assertion_type=ASSERTION_TYPE,
                      client_assertion=client_assertion, **extra)


def written(app: m.Application) -> tuple[int, int]:
    """The rows a token request may write: the application's tokens, and the assertions kept."""
    with session_scope() as db:
        return (db.exec(select(func.count()).select_from(m.Token).where(m.Token.application == app.name)).one(),
                db.exec(select(func.count()).select_from(m.ClientAssertion)).one())


@pytest.fixture
def org(make_org):
    return make_org().name


@pytest.fixture
def key_app(org, rsa):
    return make_app(org, token_endpoint_auth_method="private_key_jwt", jwks=public_set(rsa))


def refused(status_answer: tuple[int, dict], reason: str) -> None:
    status, answer = status_answer
    assert status == 401 and answer["error"] == "invalid_client", answer
    assert reason in answer["error_description"], answer


# --- the application's registration ---

def test_the_method_and_keys_an_application_registers(admin, org, rsa):
    name = unique("app")
    base = {"owner": "admin", "name": name, "organization": org}
    bad = [
        ({"tokenEndpointAuthMethod": "tls_client_auth"}, "Unknown token endpoint authentication method: tls_"),
        ({"tokenEndpointAuthMethod": "private_key_jwt"}, "The method private_key_jwt needs the application's"),
        ({"jwks": public_set(rsa), "jwksUri": "https://keys.example.com/jwks"}, "Register the JWKS or the JWKS URI"),
        ({"jwks": {"keys": []}}, "The JWKS must be a JSON Web Key Set"),
        ({"jwks": {"keys": "none"}}, "The JWKS must be a JSON Web Key Set"),
        ({"jwks": {"keys": [rsa.as_dict(private=True)]}}, "The JWKS must hold public keys only"),
        ({"jwks": {"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}}, "The JWKS may hold RSA and EC keys only"),
        ({"jwks": {"keys": [{"kty": "RSA", "n": "x"}]}}, "The JWKS holds a key that cannot be read"),
        ({"jwksUri": "ftp://keys.example.com/jwks"}, "The JWKS URI must be an http or https URL"),
    ]
    for fields, message in bad:
        answer = admin.post("/api/add-application", json={**base, **fields}).json()
        assert answer["status"] == "error" and answer["msg"].startswith(message), (fields, answer)
        assert admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"] is None
    ok_body(admin.post("/api/add-application", json={**base, "tokenEndpointAuthMethod": "private_key_jwt",
                                                      "jwks": public_set(rsa)}))
    saved = ok_body(admin.get("/api/get-application", params={"id": f"admin/{name}"}))["data"]
    assert saved["tokenEndpointAuthMethod"] == "private_key_jwt" and saved["jwks"] == public_set(rsa)
    assert saved["jwksUri"] == ""


# --- assertions ---

def test_an_assertion_names_its_client_and_may_leave_client_id_out(key_app, rsa):
    status, answer = client_credentials(key_app, assertion(key_app, rsa))
    assert status == 200 and answer["access_token"], answer
    status, answer = client_credentials(key_app, assertion(key_app, rsa), client_id=key_app.client_id)
    assert status == 200, answer


def test_the_endpoint_called_may_be_the_audience(key_app, rsa):
    origin = settings.origin
    for endpoint in (TOKEN_ENDPOINT, "/api/login/oauth/introspect"):
        status, answer = token_call("/api/login/oauth/introspect", token="x", client_assertion_type=ASSERTION_TYPE,
                                    client_assertion=assertion(key_app, rsa, aud=[f"{origin}{endpoint}"]))
        assert status == 200 and answer == {"active": False}, answer
    refused(token_call("/api/login/oauth/introspect", token="x", client_assertion_type=ASSERTION_TYPE,
                       client_assertion=assertion(key_app, rsa, aud=f"{origin}/api/login/oauth/revoke")), "aud")


@pytest.mark.parametrize(("changes", "reason"), [
    ({"exp": None}, "has no exp"),
    ({"jti": None}, "has no jti"),
    ({"jti": ""}, "has no jti"),
    ({"iss": "someone-else"}, "iss and sub must be the client id"),
    ({"sub": None}, "iss and sub must be the client id"),
    ({"nbf": timedelta(hours=1), "exp": timedelta(seconds=120)}, "nbf must be a time (in seconds) not in"),
    ({"iat": "yesterday"}, "iat must be a time"),
    ({"aud": [settings.origin + "/elsewhere"]}, "aud must name"),
    ({"exp": timedelta(seconds=900)}, "more than 300 seconds away"),
])
def test_an_assertion_must_say_who_for_whom_and_until_when(key_app, rsa, changes, reason):
    # a time is from now when the test runs (not when it was collected: a long suite outlives 120 s)
    changes = {k: int(time.time() + v.total_seconds()) if isinstance(v, timedelta) else v for k, v in changes.items()}
    before = written(key_app)
    refused(client_credentials(key_app, assertion(key_app, rsa, **changes)), reason)
    assert written(key_app) == before


def test_an_assertion_is_refused_in_every_other_shape(key_app, rsa, org):
    before = written(key_app)
    good = assertion(key_app, rsa)
    header, _, signature = good.split(".")
    tampered = ".".join((header, jwt.utils.base64url_encode(json.dumps(
        {**jwt.decode(good, options={"verify_signature": False}), "exp": int(time.time()) + 200}).encode()).decode(),
        signature))
    refused(client_credentials(key_app, tampered), "invalid signature")
    refused(client_credentials(key_app, "not.a-jwt"), "not a signed JWT")
    refused(client_credentials(key_app, jwt.encode({"iss": key_app.client_id, "sub": key_app.client_id}, None,
                                                   algorithm="none")), "")
    # the public key as an HMAC secret: the algorithm confusion
    public_pem = rsa.as_pem(private=False).decode()
    refused(client_credentials(key_app, jwt.encode(
        {"iss": key_app.client_id, "sub": key_app.client_id, "aud": settings.origin, "exp": int(time.time()) + 60,
         "jti": "x"}, public_pem.encode().hex(), algorithm="HS256")), "is not signed with RS256")
    refused(token_call(grant_type="client_credentials", client_assertion_type="urn:other",
                       client_assertion=assertion(key_app, rsa)), "client_assertion_type must be")
    refused(client_credentials(key_app, assertion(key_app, rsa), client_secret=key_app.client_secret),
            "one method")
    refused(client_credentials(key_app, assertion(key_app, rsa), client_id="another-client"),
            "iss and sub must be the client id")
    other = RSAKey.generate_key(2048, parameters={"kid": "k2"})
    refused(client_credentials(key_app, assertion(key_app, other)), "did not register (k2)")
    assert written(key_app) == before


def test_client_secret_jwt_is_hmac_under_the_client_secret(org):
    app = make_app(org, token_endpoint_auth_method="client_secret_jwt")
    status, answer = client_credentials(app, assertion(app, app.client_secret))
    assert status == 200, answer
    refused(client_credentials(app, assertion(app, "another secret, long enough to be a key")), "invalid signature")
    refused(token_call(grant_type="client_credentials", client_id=app.client_id, client_secret=app.client_secret),
            "must authenticate with client_secret_jwt")


def test_a_jti_is_spent_even_when_the_request_fails_and_kept_until_exp(key_app, rsa):
    jti = secrets.token_hex(8)
    status, answer = token_call(grant_type="authorization_code", code="no-such-code", client_assertion_type=
                                ASSERTION_TYPE, client_assertion=assertion(key_app, rsa, jti=jti))
    assert status == 400 and answer["error"] == "invalid_grant", answer
    refused(client_credentials(key_app, assertion(key_app, rsa, jti=jti)), "has been used already")
    # the same jti for another client is another assertion
    with session_scope() as db:
        kept = db.exec(select(m.ClientAssertion)).all()
        assert all(row.expires_at <= utcnow() + timedelta(seconds=clients.ASSERTION_SECONDS + 2 * clients.LEEWAY)
                   for row in kept)
        expired = m.ClientAssertion(jti_hash=secrets.token_hex(32), expires_at=utcnow() - timedelta(seconds=1))
        db.add(expired)
    status, _ = client_credentials(key_app, assertion(key_app, rsa))
    assert status == 200
    with session_scope() as db:  # an expired jti is dropped by the next assertion
        assert db.exec(select(m.ClientAssertion).where(m.ClientAssertion.jti_hash == expired.jti_hash)).first() is None


def test_a_jwks_uri_goes_through_the_outbound_guard(org, rsa):
    """An address outside IAM_OUTBOUND_ALLOW is never connected to; a closed port answers
    nothing: either way invalid_client, nothing written."""
    internal = make_app(org, token_endpoint_auth_method="private_key_jwt", jwks_uri="http://10.1.2.3/jwks")
    before = written(internal)
    refused(client_credentials(internal, assertion(internal, rsa)), "jwks_uri cannot be read")
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    closed = make_app(org, token_endpoint_auth_method="private_key_jwt", jwks_uri=f"http://127.0.0.1:{port}/jwks")
    refused(client_credentials(closed, assertion(closed, rsa)), "jwks_uri cannot be read")
    assert written(internal) == before


# --- the application's method at every endpoint ---

def test_a_registered_secret_method_is_required_even_with_pkce(world):  # noqa: F811
    org = world[0].name
    app = make_app(org, token_endpoint_auth_method="client_secret_basic")
    code, verifier = code_for(app, org)
    before = written(app)
    refused(token_call(grant_type="authorization_code", code=code, code_verifier=verifier, client_id=app.client_id,
                       redirect_uri=REDIRECT), "must authenticate with client_secret_basic")
    refused(token_call(grant_type="authorization_code", code=code, code_verifier=verifier, client_id=app.client_id,
                       client_secret=app.client_secret), "must authenticate with client_secret_basic")
    assert written(app) == before
    answer = TestClient(api).post(TOKEN_ENDPOINT, data={"grant_type": "authorization_code", "code": code,
                                                        "code_verifier": verifier},
                                  auth=(app.client_id, app.client_secret))
    assert answer.status_code == 200, answer.json()


def test_a_public_client_never_sends_a_secret(world):  # noqa: F811
    org = world[0].name
    app = make_app(org, token_endpoint_auth_method="none")
    code, verifier = code_for(app, org)
    status, answer = token_call(grant_type="authorization_code", code=code, code_verifier=verifier,
                                client_id=app.client_id)
    assert status == 200, answer
    status, refreshed = token_call(grant_type="refresh_token", refresh_token=answer["refresh_token"],
                                   client_id=app.client_id)
    assert status == 200, refreshed
    refused(token_call(grant_type="refresh_token", refresh_token=refreshed["refresh_token"], client_id=app.client_id,
                       client_secret=app.client_secret), "must authenticate with none")
    refused(token_call(grant_type="client_credentials", client_id=app.client_id), "Invalid client_secret")


def test_device_authorization_checks_the_method_too(org, rsa):
    app = make_app(org, token_endpoint_auth_method="private_key_jwt", jwks=public_set(rsa), grant_types=ALL_GRANTS)
    refused(token_call("/api/device-auth", client_id=app.client_id, client_secret=app.client_secret),
            "must authenticate with private_key_jwt")
    status, answer = token_call("/api/device-auth", client_assertion_type=ASSERTION_TYPE,
                                client_assertion=assertion(app, rsa))
    assert status == 200 and answer["device_code"], answer


# --- authentication request parameters ---

def _authorization(app: m.Application, **parameters) -> oauth.Authorization:
    with session_scope() as db:
        return oauth.check_authorize(db, oauth.AuthorizeRequest.from_query({
            "client_id": app.client_id, "response_type": "code", "redirect_uri": REDIRECT, "scope": "openid",
            **parameters}))


def test_when_a_session_must_sign_in_again(org):
    app = make_app(org)
    now = utcnow()
    fresh = lambda parameters, at=now, method="Password": oauth.needs_fresh_sign_in(  # noqa: E731
        _authorization(app, **parameters), at, method)
    assert not fresh({}) and not fresh({"max_age": "60"}, now - timedelta(seconds=50))
    assert fresh({"max_age": "60"}, now - timedelta(seconds=70)) and fresh({"max_age": "0"}, now - timedelta(seconds=1))
    assert fresh({"prompt": "login"}) and fresh({"prompt": "consent login"}) and not fresh({"prompt": "consent"})
    assert fresh({"acr_values": "2"}) and not fresh({"acr_values": "2"}, method="Password+app")
    assert not fresh({"acr_values": "1 2"}) and not fresh({"acr_values": "unknown-level"})
    assert fresh({"claims": json.dumps({"id_token": {"acr": {"values": ["2"]}}})})
    assert not fresh({"acr_values": "2"}, method="WebAuthn")


def test_the_claims_request_is_read_for_standard_claims_only(org):
    app = make_app(org)
    claims = _authorization(app, claims=json.dumps({
        "id_token": {"email": None, "birthdate": {"essential": True}, "made_up": None, "acr": {"value": "2",
                                                                                             "essential": True}},
        "userinfo": {"given_name": None}})).claims
    assert claims.id_token == ("email", "birthdate") and claims.userinfo == ("given_name",)
    assert claims.acr == ("2",) and claims.acr_essential
    for bad in ("[]", '{"id_token": []}', '{"userinfo": {"email": true}}', "x" * 2001):
        with pytest.raises(ServiceError):
            _authorization(app, claims=bad)
    for bad in ("-1", "1e3", "9999999999"):
        with pytest.raises(ServiceError):
            _authorization(app, max_age=bad)


def test_ui_locales_choose_the_first_language_the_pages_speak():
    assert language_from_locales("zh-CN en") == "zh"
    assert language_from_locales("tlh-KX x-klingon en-GB") == "en"
    assert language_from_locales("tlh") == ""
    assert language_from_locales("") == ""
