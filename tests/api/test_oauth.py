"""The OAuth 2.0 / OpenID Connect provider through HTTP: flows, token formats,
signing methods, and the attacks each endpoint must refuse."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import uuid
from datetime import timedelta
from urllib.parse import parse_qs, quote_plus, urlsplit

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import rsa
from fastapi.testclient import TestClient
from joserfc.jwk import ECKey, RSAKey
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.applications import certs
from iam_console.db import session_scope
from iam_console.models.base import utcnow
from iam_console.oauth import oauth
from tests.conftest import unique

REDIRECT = "http://localhost:9000/callback"
PASSWORD = "oauth-pass-1"
ALL_GRANTS = ["authorization_code", "password", "client_credentials", "refresh_token", "token", "id_token",
              oauth.DEVICE_GRANT]


def make_cert(algorithm: str, bits: int = 2048) -> str:
    name = unique("cert")
    certificate, key = certs.generate(algorithm, bits, 1, name)
    with session_scope() as db:
        db.add(m.Cert(owner="admin", name=name, scope="JWT", type="x509", crypto_algorithm=algorithm,
                      bit_size=bits, certificate=certificate, private_key=key))
    return name


def thumbprint(certificate_pem: str) -> str:
    """The RFC 7638 thumbprint of a certificate's public key (joserfc), as anyone with the certificate computes it."""
    key = x509.load_pem_x509_certificate(certificate_pem.encode()).public_key()
    return (RSAKey if isinstance(key, rsa.RSAPublicKey) else ECKey).import_key(key).thumbprint()


def kid_of(cert: str) -> str:
    """The `kid` of the shared cert admin/<cert>: its key's thumbprint."""
    with session_scope() as db:
        return thumbprint(db.exec(select(m.Cert.certificate).where(m.Cert.owner == "admin",
                                                                  m.Cert.name == cert)).one())


@pytest.fixture
def world(make_org, make_user):
    """An organization with a user and an application allowed every grant."""
    org = make_org()
    user = make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com",
                     display_name="Alice", phone="5550100", country_code="US", address=["1 Main St"])
    return org, user


def make_app(org: str, **fields) -> m.Application:
    values = {"owner": "admin", "name": unique("app"), "organization": org, "cert": "cert-built-in",
              "client_id": secrets.token_hex(10), "client_secret": secrets.token_hex(20),
              "redirect_uris": [REDIRECT, r"^https://app\.example\.com/cb/[a-z]+$"], "grant_types": ALL_GRANTS,
              "enable_password": True, "token_format": "JWT", "expire_in_hours": 2, "refresh_expire_in_hours": 5,
              **fields}
    app = m.Application(**values)
    with session_scope() as db:
        db.add(app)
    return app


@pytest.fixture
def app_(world):
    return make_app(world[0].name)


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    return verifier, challenge


def authorize(app: m.Application, org: str, *, challenge: str = "", response_type: str = "code",
              redirect_uri: str = REDIRECT, password: str = PASSWORD, nonce: str = "n-1",
              scope: str = "openid profile email", client: TestClient | None = None) -> dict:
    """What the authorize page posts: the sign-in with the authorization request in the query."""
    params = {"clientId": app.client_id, "responseType": response_type, "redirectUri": redirect_uri,
              "scope": scope, "state": "st-1", "nonce": nonce}
    if challenge:
        params |= {"code_challenge": challenge, "code_challenge_method": "S256"}
    return (client or TestClient(api)).post("/api/login", params=params, json={
        "application": app.name, "organization": org, "username": "alice", "password": password,
        "type": response_type}).json()


def code_for(app, org, **kw) -> tuple[str, str]:
    verifier, challenge = pkce()
    answer = authorize(app, org, challenge=challenge, **kw)
    assert answer["status"] == "ok", answer
    return answer["data"], verifier


def token_call(**form) -> tuple[int, dict]:
    response = TestClient(api).post("/api/login/oauth/access_token", data=form)
    return response.status_code, response.json()


def exchange(app, code, verifier, **extra) -> tuple[int, dict]:
    return token_call(grant_type="authorization_code", client_id=app.client_id, code=code, code_verifier=verifier,
                      **extra)


def public_key(kid: str):
    keys = TestClient(api).get("/.well-known/jwks").json()["keys"]
    jwk = next(k for k in keys if k["kid"] == kid)
    return jwt.PyJWK(jwk).key


def decode(token: str, audience: str) -> dict:
    header = jwt.get_unverified_header(token)
    return jwt.decode(token, public_key(header["kid"]), algorithms=[header["alg"]], audience=audience,
                      issuer="http://testserver")


def row_of(access_token: str) -> m.Token:
    with session_scope() as db:
        return db.exec(select(m.Token).where(m.Token.access_token_hash == oauth.digest(access_token))).one()


# --- discovery ---

def test_discovery_links_come_from_the_configured_origin():
    doc = TestClient(api).get("/.well-known/openid-configuration", headers={"Host": "evil.example"}).json()
    assert doc["issuer"] == "http://testserver"
    assert doc["authorization_endpoint"] == "http://testserver/login/oauth/authorize"
    assert doc["jwks_uri"] == "http://testserver/.well-known/jwks"
    assert doc["code_challenge_methods_supported"] == ["S256"]
    assert "urn:ietf:params:oauth:grant-type:device_code" in doc["grant_types_supported"]


def test_jwks_lists_every_shared_signing_key_by_its_thumbprint(database):
    name = make_cert("ES256", 0)
    keys = {k["kid"]: k for k in TestClient(api).get("/.well-known/jwks").json()["keys"]}
    built_in = keys[kid_of("cert-built-in")]
    assert built_in["kty"] == "RSA" and built_in["alg"] == "RS256"
    key = keys[kid_of(name)]
    assert key["kty"] == "EC" and key["crv"] == "P-256" and key["use"] == "sig" and key["x5c"]


# --- the code flow ---

def test_code_flow_with_pkce_userinfo_refresh_introspect_and_revoke(world, app_):
    org, _ = world
    code, verifier = code_for(app_, org.name)
    status, tokens = exchange(app_, code, verifier)
    assert status == 200, tokens
    assert tokens["token_type"] == "Bearer" and tokens["expires_in"] == 7200
    claims = decode(tokens["id_token"], app_.client_id)
    assert claims["nonce"] == "n-1" and claims["name"] == "alice" and claims["tokenType"] == "access-token"
    assert claims["exp"] - claims["iat"] == 7200 and claims["password"] == ""

    client = TestClient(api)
    info = client.get("/api/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}).json()
    assert info["email"] == "alice@example.com" and info["preferred_username"] == "alice"
    assert info["sub"] == claims["sub"] and info["aud"] == app_.client_id

    # the bearer token is an API credential of alice
    account = client.get("/api/get-account", headers={"Authorization": f"Bearer {tokens['access_token']}"}).json()
    assert account["status"] == "ok", account

    refreshed = client.post("/api/login/oauth/refresh_token", data={
        "grant_type": "refresh_token", "refresh_token": tokens["refresh_token"], "client_id": app_.client_id,
        "client_secret": app_.client_secret, "scope": ""})
    assert refreshed.status_code == 200, refreshed.json()
    new = refreshed.json()
    assert new["access_token"] != tokens["access_token"]
    # a refresh token is for this server alone: HMAC-signed, Casdoor's claims inside
    refresh_claims = jwt.decode(new["refresh_token"], options={"verify_signature": False})
    assert jwt.get_unverified_header(new["refresh_token"])["alg"] == "HS256"
    assert refresh_claims["exp"] - refresh_claims["iat"] == 5 * 3600
    assert refresh_claims["tokenType"] == "refresh-token" and refresh_claims["name"] == "alice"
    # rotation: the old access token is done
    assert client.get("/api/userinfo", headers={"Authorization": f"Bearer {tokens['access_token']}"}).status_code == 401

    auth = (app_.client_id, app_.client_secret)
    live = client.post("/api/login/oauth/introspect", data={"token": new["access_token"]}, auth=auth).json()
    assert live["active"] is True and live["username"] == "alice" and live["client_id"] == app_.client_id
    assert client.post("/api/login/oauth/revoke", data={"token": new["refresh_token"]}, auth=auth).status_code == 200
    dead = client.post("/api/login/oauth/introspect", data={"token": new["access_token"]}, auth=auth).json()
    assert dead == {"active": False}
    assert client.get("/api/get-account", params={"accessToken": new["access_token"]}).json()["status"] == "error"
    # the old refresh token is spent (a replay: test_refresh_rotation.py)
    status, again = token_call(grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                               client_id=app_.client_id, client_secret=app_.client_secret)
    assert status == 400 and again["error"] == "invalid_grant"


def test_each_grant_writes_one_token_row(world, app_):
    org, _ = world
    code, verifier = code_for(app_, org.name)
    _, tokens = exchange(app_, code, verifier)
    row = row_of(tokens["access_token"])
    assert (row.owner, row.organization, row.user, row.application) == ("admin", org.name, "alice", app_.name)
    assert row.code != code and row.code_is_used and row.expires_in == 7200
    listed = TestClient(api).get("/api/get-tokens", params={"owner": "admin", "organization": org.name},
                                 auth=(app_.client_id, app_.client_secret)).json()
    assert any(t["name"] == row.name for t in listed["data"])
    assert all("accessTokenHash" not in t and "nonce" not in t for t in listed["data"])


def test_implicit_token_response_goes_in_the_fragment(world, app_):
    answer = authorize(app_, world[0].name, response_type="id_token token")
    assert answer["status"] == "ok", answer
    url = urlsplit(answer["data2"])
    assert url.query == "" and "access_token=" in url.fragment and "state=st-1" in url.fragment
    assert decode(parse_qs(url.fragment)["id_token"][0], app_.client_id)["nonce"] == "n-1"


def test_implicit_needs_the_grant_and_a_nonce(world):
    app = make_app(world[0].name, grant_types=["authorization_code"])
    refused = authorize(app, world[0].name, response_type="token")
    assert refused["status"] == "error" and "not allowed" in refused["msg"]
    app2 = make_app(world[0].name)
    assert "nonce" in authorize(app2, world[0].name, response_type="id_token", nonce="")["msg"]


# --- other grants ---

def test_password_grant_and_its_failed_signin_limit(world, app_):
    status, tokens = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                                username="alice", password=PASSWORD, scope="openid")
    assert status == 200 and tokens["refresh_token"]
    for _ in range(5):
        status, wrong = token_call(grant_type="password", client_id=app_.client_id,
                                   client_secret=app_.client_secret, username="alice", password="guess")
        assert status == 400 and wrong["error"] == "invalid_grant"
    status, frozen = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                                username="alice", password=PASSWORD)
    assert status == 400 and "too many times" in frozen["error_description"]


def test_client_credentials_grant_is_the_applications_token(world, app_):
    client = TestClient(api)
    response = client.post("/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                           auth=(app_.client_id, app_.client_secret))
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    tokens = response.json()
    assert "refresh_token" not in tokens
    claims = decode(tokens["access_token"], app_.client_id)
    assert claims["sub"] == f"admin/{app_.name}" and claims["type"] == "application"
    # an API credential acting as the application (a global admin, as in Casdoor)
    users = client.get("/api/get-users", params={"owner": world[0].name},
                       headers={"Authorization": f"Bearer {tokens['access_token']}"}).json()
    assert [u["name"] for u in users["data"]] == ["alice"]


def test_grants_not_listed_are_refused(world):
    app = make_app(world[0].name, grant_types=["authorization_code"])
    for grant in ("password", "client_credentials", "refresh_token"):
        status, body = token_call(grant_type=grant, client_id=app.client_id, client_secret=app.client_secret,
                                  username="alice", password=PASSWORD, refresh_token="x")
        assert (status, body["error"]) == (400, "unauthorized_client"), grant
    status, body = token_call(grant_type="magic", client_id=app.client_id)
    assert (status, body["error"]) == (400, "unsupported_grant_type")


def test_client_authentication_errors_are_401_with_a_challenge(app_):
    response = TestClient(api).post("/api/login/oauth/access_token",
                                    data={"grant_type": "client_credentials", "client_id": app_.client_id,
                                          "client_secret": "wrong"})
    assert response.status_code == 401 and response.json()["error"] == "invalid_client"
    assert response.headers["www-authenticate"] == 'Basic realm="OAuth2"'
    unknown = TestClient(api).post("/api/login/oauth/access_token", json={"grant_type": "client_credentials",
                                                                         "client_id": "nobody"})
    assert unknown.status_code == 401


def test_json_bodies_and_basic_auth_are_accepted(world, app_):
    code, verifier = code_for(app_, world[0].name)
    response = TestClient(api).post("/api/login/oauth/access_token", json={
        "grant_type": "authorization_code", "code": code, "code_verifier": verifier},
        auth=(app_.client_id, app_.client_secret))
    assert response.status_code == 200 and response.json()["access_token"]


def test_device_flow(world, app_):
    client = TestClient(api)
    started = client.post("/api/device-auth", data={"client_id": app_.client_id, "scope": "openid"}).json()
    assert started["verification_uri"] == "http://testserver/login/oauth/device" and started["interval"] == 5
    poll = {"grant_type": oauth.DEVICE_GRANT, "client_id": app_.client_id, "device_code": started["device_code"]}
    assert token_call(**poll) == (400, {"error": "authorization_pending",
                                        "error_description": "The user has not yet approved this device"})
    with session_scope() as db:
        alice = db.exec(select(m.User).where(m.User.owner == world[0].name, m.User.name == "alice")).one()
        oauth.decide_device(db, alice, started["user_code"].lower().replace("-", " "), approve=True)
    status, tokens = token_call(**poll)
    assert status == 200 and decode(tokens["access_token"], app_.client_id)["name"] == "alice"
    assert token_call(**poll)[1]["error"] == "invalid_grant"  # a device code works once

    denied = client.post("/api/device-auth", data={"client_id": app_.client_id}).json()
    with session_scope() as db:
        oauth.decide_device(db, alice, denied["user_code"], approve=False)
    assert token_call(**{**poll, "device_code": denied["device_code"]})[1]["error"] == "access_denied"


# --- token formats and signing methods ---

@pytest.mark.parametrize("algorithm", ["RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512"])
def test_signing_methods(world, algorithm):
    cert = make_cert(algorithm if not algorithm.startswith("PS") else "RS256",
                     0 if algorithm.startswith("ES") else 2048)
    app = make_app(world[0].name, cert=cert, token_signing_method=algorithm)
    status, tokens = token_call(grant_type="client_credentials", client_id=app.client_id,
                                client_secret=app.client_secret)
    assert status == 200, tokens
    header = jwt.get_unverified_header(tokens["access_token"])
    assert (header["alg"], header["kid"]) == (algorithm, kid_of(cert))
    assert decode(tokens["access_token"], app.client_id)["azp"] == app.client_id


def test_an_ec_cert_signs_with_its_own_curve_whatever_the_application_asks(world):
    cert = make_cert("ES384", 0)
    app = make_app(world[0].name, cert=cert, token_signing_method="RS256")
    _, tokens = token_call(grant_type="client_credentials", client_id=app.client_id, client_secret=app.client_secret)
    assert jwt.get_unverified_header(tokens["access_token"])["alg"] == "ES384"


def _password_token(app) -> dict:
    status, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                                username="alice", password=PASSWORD, scope="openid profile phone address")
    assert status == 200, tokens
    return decode(tokens["access_token"], app.client_id)


def test_token_formats(world):
    org = world[0].name
    empty = _password_token(make_app(org, token_format="JWT-Empty"))
    assert {"owner", "name", "id", "displayName", "avatar", "email", "email_verified", "phone"} <= set(empty)
    assert "score" not in empty and "roles" not in empty

    standard = _password_token(make_app(org, token_format="JWT-Standard"))
    assert standard["preferred_username"] == "alice" and standard["name"] == "Alice"
    assert standard["phone_number"] == "+15550100" and standard["address"]["street_address"] == "1 Main St"

    custom = _password_token(make_app(org, token_format="JWT-Custom",
                                      token_fields=["DisplayName", "Email", "Password", "permissionNames"],
                                      token_attributes=[{"name": "team", "value": "blue"}]))
    assert custom["displayName"] == "Alice" and custom["email"] == "alice@example.com"
    assert custom["team"] == "blue" and custom["permissionNames"] == [] and "password" not in custom
    assert "owner" not in custom

    full = _password_token(make_app(org, token_format="JWT"))
    assert full["displayName"] == "Alice" and full["roles"] == [] and full["password"] == ""
    assert "totpSecret" not in full and "passwordSalt" not in full


# --- attacks ---

def test_a_code_works_once_and_a_replay_revokes_its_tokens(world, app_):
    code, verifier = code_for(app_, world[0].name)
    status, tokens = exchange(app_, code, verifier)
    assert status == 200
    status, replay = exchange(app_, code, verifier)
    assert (status, replay["error"]) == (400, "invalid_grant")
    assert TestClient(api).get("/api/userinfo", params={"access_token": tokens["access_token"]}).status_code == 401


def test_a_code_expires_after_five_minutes(world, app_):
    code, verifier = code_for(app_, world[0].name)
    with session_scope() as db:
        row = db.exec(select(m.Token).where(m.Token.code == oauth.digest(code))).one()
        row.code_expire_in = int((utcnow() - timedelta(seconds=1)).timestamp())
        db.add(row)
    assert exchange(app_, code, verifier)[1]["error_description"] == "The authorization code has expired"


def test_a_code_of_another_client_is_refused(world, app_):
    other = make_app(world[0].name)
    code, verifier = code_for(app_, world[0].name)
    status, body = exchange(other, code, verifier)
    assert (status, body["error"]) == (400, "invalid_grant")
    assert exchange(app_, code, verifier)[0] == 200  # the code was not spent by the failed attempt


def test_pkce_verifier_wrong_or_missing(world, app_):
    code, verifier = code_for(app_, world[0].name)
    assert exchange(app_, code, pkce()[0])[1]["error"] == "invalid_grant"
    # without a verifier the client must authenticate, and the code still needs its verifier
    status, body = token_call(grant_type="authorization_code", client_id=app_.client_id, code=code)
    assert (status, body["error"]) == (401, "invalid_client")
    status, body = token_call(grant_type="authorization_code", client_id=app_.client_id,
                              client_secret=app_.client_secret, code=code)
    assert (status, body["error"]) == (400, "invalid_grant")
    assert exchange(app_, code, verifier)[0] == 200


def test_a_code_without_pkce_needs_the_client_secret(world, app_):
    answer = authorize(app_, world[0].name)
    status, body = token_call(grant_type="authorization_code", client_id=app_.client_id, code=answer["data"])
    assert status == 401
    status, body = token_call(grant_type="authorization_code", client_id=app_.client_id,
                              client_secret=app_.client_secret, code=answer["data"], redirect_uri=REDIRECT)
    assert status == 200, body


def test_the_exchange_must_name_the_same_redirect_uri(world, app_):
    code, verifier = code_for(app_, world[0].name)
    assert exchange(app_, code, verifier, redirect_uri="http://localhost:9000/other")[1]["error"] == "invalid_grant"


@pytest.mark.parametrize("uri", [
    "http://localhost:9000/callback/extra", "http://localhost:9000/callbackx", "https://localhost:9000/callback",
    "http://localhost:9000/callback#frag", "http://evil.example@localhost:9000/callback",
    "http://localhost:9000/x/../callback", "http://localhost:9000/%2e%2e/callback", "javascript:alert(1)//",
    "data:text/html,hi", "https://app.example.com/cb/abc/../../evil", "https://app.example.com/cb/abc?x=1",
    "https://appXexample.com/cb/abc", "https://app.example.com.evil.com/cb/abc", "http://localhost:9000\\@evil/",
    "",
])
def test_unregistered_and_look_alike_redirect_uris_get_nothing(world, app_, uri):
    answer = authorize(app_, world[0].name, redirect_uri=uri)
    assert answer["status"] == "error" and answer["data"] is None, answer
    with session_scope() as db:
        assert db.exec(select(m.Token).where(m.Token.application == app_.name)).first() is None


def test_a_regular_expression_entry_must_match_the_whole_uri(world, app_):
    answer = authorize(app_, world[0].name, redirect_uri="https://app.example.com/cb/abc")
    assert answer["status"] == "ok" and answer["data2"].startswith("https://app.example.com/cb/abc?code=")


def test_a_token_signed_by_another_key_is_refused(world, app_):
    _, key = certs.generate("RS256", 2048, 1, "forger")
    forged = jwt.encode({"iss": "http://testserver", "sub": "x", "aud": [app_.client_id], "tokenType": "refresh-token",
                         "exp": 4_000_000_000}, key, algorithm="RS256", headers={"kid": "cert-built-in"})
    client = TestClient(api)
    assert client.get("/api/userinfo", headers={"Authorization": f"Bearer {forged}"}).status_code == 401
    status, body = token_call(grant_type="refresh_token", refresh_token=forged, client_id=app_.client_id,
                              client_secret=app_.client_secret)
    assert (status, body["error"]) == (400, "invalid_grant")
    assert client.get("/api/logout", params={"id_token_hint": forged}).json()["status"] == "error"


def test_an_expired_token_is_inactive_everywhere(world, app_):
    _, tokens = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                           username="alice", password=PASSWORD)
    with session_scope() as db:
        row = db.exec(select(m.Token).where(m.Token.access_token_hash == oauth.digest(tokens["access_token"]))).one()
        row.created_time = utcnow() - timedelta(hours=3)
        db.add(row)
    client = TestClient(api)
    bearer = {"Authorization": f"Bearer {tokens['access_token']}"}
    assert client.get("/api/userinfo", headers=bearer).status_code == 401
    assert client.get("/api/get-account", headers=bearer).json()["status"] == "error"
    assert client.post("/api/login/oauth/introspect", data={"token": tokens["access_token"]},
                       auth=(app_.client_id, app_.client_secret)).json()["active"] is False


def test_a_refresh_token_of_another_application_is_refused(world, app_):
    other = make_app(world[0].name)
    _, tokens = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                           username="alice", password=PASSWORD)
    status, body = token_call(grant_type="refresh_token", refresh_token=tokens["refresh_token"],
                              client_id=other.client_id, client_secret=other.client_secret)
    assert (status, body["error"]) == (400, "invalid_grant")


def test_introspection_is_for_clients_of_the_tokens_organization(world, app_, make_org):
    foreign = make_app(make_org().name)
    _, tokens = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                           username="alice", password=PASSWORD)
    peek = TestClient(api).post("/api/login/oauth/introspect", data={"token": tokens["access_token"]},
                                auth=(foreign.client_id, foreign.client_secret)).json()
    assert peek == {"active": False}
    TestClient(api).post("/api/login/oauth/revoke", data={"token": tokens["access_token"]},
                         auth=(foreign.client_id, foreign.client_secret))
    assert row_of(tokens["access_token"]).expires_in > 0  # another client cannot revoke it


def test_a_user_of_another_organization_gets_no_code(world, app_, make_org, make_user):
    stranger_org = make_org()
    make_user(owner=stranger_org.name, name="alice", password=PASSWORD)
    answer = authorize(app_, stranger_org.name)
    assert answer["status"] == "error"


def test_authorize_request_errors(world, app_):
    check = TestClient(api).get
    base = {"client_id": app_.client_id, "response_type": "code", "redirect_uri": REDIRECT, "scope": "openid"}
    assert check("/api/get-app-login", params=base).json()["data"]["name"] == app_.name
    for change, message in [({"client_id": "nope"}, "Invalid client_id"),
                            ({"response_type": "magic"}, "Unsupported response type"),
                            ({"code_challenge_method": "plain", "code_challenge": "a" * 43}, "S256"),
                            ({"code_challenge_method": "S256", "code_challenge": "short"}, "malformed"),
                            ({"scope": "bad\"scope"}, "malformed")]:
        body = check("/api/get-app-login", params={**base, **change}).json()
        assert body["status"] == "error" and message in body["msg"], (change, body)


# --- logout ---

def test_logout_with_an_id_token_hint(world, app_):
    _, tokens = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                           username="alice", password=PASSWORD)
    client = TestClient(api, follow_redirects=False)
    response = client.get("/api/logout", params={"id_token_hint": tokens["id_token"], "state": "bye",
                                                 "post_logout_redirect_uri": REDIRECT})
    assert response.status_code == 302 and response.headers["location"] == f"{REDIRECT}?state=bye"
    assert row_of(tokens["access_token"]).expires_in == 0

    _, second = token_call(grant_type="password", client_id=app_.client_id, client_secret=app_.client_secret,
                           username="alice", password=PASSWORD)
    response = client.get("/api/logout", params={"id_token_hint": second["id_token"],
                                                 "post_logout_redirect_uri": "https://evil.example/"})
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_sso_logout_ends_every_token_and_session(world, app_):
    browser = TestClient(api)
    code, verifier = code_for(app_, world[0].name, client=browser)  # signs the browser in too
    _, tokens = exchange(app_, code, verifier)
    assert browser.get("/api/get-account").json()["status"] == "ok"
    assert browser.post("/api/sso-logout").json()["data"] == f"{world[0].name}/alice"
    assert browser.get("/api/get-account").json()["status"] == "error"
    assert row_of(tokens["access_token"]).expires_in == 0


def test_cross_origin_clients_may_call_the_token_endpoints():
    client = TestClient(api, cookies={"iam_session": "x"})
    preflight = client.options("/api/login/oauth/access_token", headers={
        "Origin": "https://spa.example", "Access-Control-Request-Method": "POST"})
    assert preflight.status_code == 204 and preflight.headers["access-control-allow-origin"] == "*"
    # a cookie riding along from another origin does not trip the CSRF check there
    response = client.post("/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                           headers={"Origin": "https://spa.example"})
    assert response.status_code == 401


def test_token_names_are_unique_uuids(world, app_):
    names = set()
    for _ in range(3):
        _, tokens = token_call(grant_type="client_credentials", client_id=app_.client_id,
                               client_secret=app_.client_secret)
        names.add(str(uuid.UUID(row_of(tokens["access_token"]).name)))
    assert len(names) == 3


def test_a_client_id_in_the_body_with_its_secret_in_basic_auth(app_):
    response = TestClient(api).post("/api/login/oauth/access_token",
                                    data={"grant_type": "client_credentials", "client_id": app_.client_id},
                                    auth=(app_.client_id, app_.client_secret))
    assert response.status_code == 200, response.json()


def test_client_secret_basic_is_form_decoded(world):
    """RFC 6749 §2.3.1: the id and secret are each form-encoded before they are joined with ':' and
    base64-encoded; a secret holding + / = % & : is accepted under Basic as under POST."""
    app = make_app(world[0].name, client_id=f"id:{secrets.token_hex(4)}+x", client_secret="s+e/c=r%e&t:" +
                   secrets.token_hex(8))
    pair = f"{quote_plus(app.client_id)}:{quote_plus(app.client_secret)}"
    header = {"Authorization": "Basic " + base64.b64encode(pair.encode()).decode()}
    basic = TestClient(api).post("/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                                 headers=header)
    assert basic.status_code == 200, basic.json()
    posted = TestClient(api).post("/api/login/oauth/access_token", data={
        "grant_type": "client_credentials", "client_id": app.client_id, "client_secret": app.client_secret})
    assert posted.status_code == 200, posted.json()
    # the introspection and revocation endpoints read the client the same way
    token = basic.json()["access_token"]
    answer = TestClient(api).post("/api/login/oauth/introspect", data={"token": token}, headers=header).json()
    assert answer["active"] is True, answer
    # the pair as it was before encoding is another pair: the '+' is a space
    raw = "Basic " + base64.b64encode(f"{app.client_id}:{app.client_secret}".encode()).decode()
    refused = TestClient(api).post("/api/login/oauth/access_token", data={"grant_type": "client_credentials"},
                                   headers={"Authorization": raw})
    assert refused.status_code == 401, refused.json()


def test_a_refresh_token_forged_with_the_public_key_is_refused(world, app_):
    """HS256 under a key anyone could know (the certificate) must not pass as a refresh token."""
    with session_scope() as db:
        certificate = db.exec(select(m.Cert.certificate).where(m.Cert.owner == "admin",
                                                               m.Cert.name == "cert-built-in")).one()
    def part(value: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(value).encode()).rstrip(b"=").decode()

    unsigned = part({"alg": "HS256", "typ": "JWT", "kid": "cert-built-in"}) + "." + part(
        {"iss": "http://testserver", "tokenType": "refresh-token", "exp": 4_000_000_000})
    signature = hmac.new(certificate.encode(), unsigned.encode(), hashlib.sha256).digest()
    forged = unsigned + "." + base64.urlsafe_b64encode(signature).rstrip(b"=").decode()
    status, body = token_call(grant_type="refresh_token", refresh_token=forged, client_id=app_.client_id,
                              client_secret=app_.client_secret)
    assert (status, body["error"]) == (400, "invalid_grant")
