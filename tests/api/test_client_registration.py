"""Dynamic client registration (RFC 7591) and its management (RFC 7592) at Casdoor's
/api/oauth/register: the organization's policy, the initial access token, what a registered client
may do, rate limits and quotas, and bad metadata that writes nothing (oauth/registration.py)."""

from __future__ import annotations

import secrets
import time

import jwt
import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import RSAKey
from sqlmodel import delete, func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import builtin as b
from iam_console.db import session_scope
from iam_console.oauth import registration
from iam_console.settings import settings
from tests.api.test_oauth import PASSWORD, code_for, exchange, make_app, token_call

PATH = "/api/oauth/register"
KEY = RSAKey.generate_key(2048, parameters={"kid": "agent-1"})
PUBLIC_JWK, PRIVATE_JWK = KEY.as_dict(private=False), KEY.as_dict(private=True)
METADATA = {"client_name": "Agent", "redirect_uris": ["http://localhost:33418/callback"],
            "grant_types": ["authorization_code", "refresh_token"], "token_endpoint_auth_method": "client_secret_post",
            "contacts": ["ops@example.com"], "client_uri": "https://agent.example.com", "scope": "openid profile",
            "software_id": "agent-cli"}


@pytest.fixture(autouse=True)
def fresh_limits(database):
    """Each test starts with no registration counted against the test client's address."""
    with session_scope() as db:
        db.exec(delete(m.Throttle).where(m.Throttle.key.like("client-registration:%")))


@pytest.fixture
def open_org(make_org, make_user):
    org = make_org(dcr_policy="open")
    make_user(owner=org.name, name="alice", password=PASSWORD)
    return org.name


def register(body, org: str = "", token: str = "") -> tuple[int, dict]:
    response = TestClient(api).post(PATH, params={"organization": org} if org else {}, json=body,
                                    headers={"Authorization": f"Bearer {token}"} if token else {})
    return response.status_code, response.json()


def registered_count(org: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.Application).where(
            m.Application.organization == org, m.Application.registration_access_token != "")).one()


def test_registration_echoes_the_metadata_and_the_client_signs_users_in(open_org):
    status, client = register(METADATA, open_org)
    assert status == 201, client
    for key, value in METADATA.items():
        assert client[key] == value, key
    assert client["response_types"] == ["code"] and client["client_secret_expires_at"] == 0
    assert client["registration_client_uri"] == f"http://testserver{PATH}/{client['client_id']}"
    assert client["client_secret"] and client["registration_access_token"]
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.client_id == client["client_id"])).one()
        assert row.organization == open_org and row.display_name == "Agent" and not row.enable_sign_up
        # only the token's hash is kept
        assert client["registration_access_token"] not in row.registration_access_token
    # the new client runs the authorization code flow for the organization's users
    app = m.Application(name=row.name, client_id=client["client_id"])
    code, verifier = code_for(app, open_org, redirect_uri=METADATA["redirect_uris"][0])
    status, tokens = exchange(app, code, verifier, client_secret=client["client_secret"],
                              redirect_uri=METADATA["redirect_uris"][0])
    assert status == 200 and tokens["refresh_token"]


def test_the_registration_access_token_reads_replaces_and_deletes_the_client(open_org):
    _, client = register(METADATA, open_org)
    uri = client["registration_client_uri"].removeprefix("http://testserver")
    bearer = {"Authorization": f"Bearer {client['registration_access_token']}"}
    http = TestClient(api)
    read = http.get(uri, headers=bearer)
    assert read.status_code == 200 and read.json()["client_name"] == "Agent"
    assert "registration_access_token" not in read.json()
    for wrong in ({}, {"Authorization": "Bearer nope"}, {"Authorization": f"Bearer {client['client_secret']}"}):
        refused = http.get(uri, headers=wrong)
        assert refused.status_code == 401 and refused.json()["error"] == "invalid_token"
        assert refused.headers["www-authenticate"].startswith("Bearer")
    replaced = http.put(uri, headers=bearer, json={"client_id": client["client_id"], "client_name": "Renamed",
                                                   "redirect_uris": ["https://agent.example.com/cb"]})
    assert replaced.status_code == 200, replaced.json()
    assert replaced.json()["client_name"] == "Renamed" and "contacts" not in replaced.json()
    assert http.get(uri, headers=bearer).json()["redirect_uris"] == ["https://agent.example.com/cb"]
    other = http.put(uri, headers=bearer, json={"client_id": "someone-else", "redirect_uris": []})
    assert other.status_code == 400 and other.json()["error"] == "invalid_client_metadata"
    assert http.delete(uri, headers={"Authorization": "Bearer nope"}).status_code == 401
    deleted = http.delete(uri, headers=bearer)
    assert deleted.status_code == 204 and deleted.content == b""
    assert http.get(uri, headers=bearer).status_code == 401
    assert registered_count(open_org) == 0


def test_registration_is_off_by_default_and_an_initial_access_token_vouches(make_org, make_user):
    org = make_org().name
    before = registered_count(org)
    status, body = register(METADATA, org)
    assert (status, body["error"]) == (403, "access_denied")
    with session_scope() as db:
        row = db.exec(select(m.Organization).where(m.Organization.name == org)).one()
        row.dcr_policy = "initial access token"
        db.add(row)
    status, body = register(METADATA, org)
    assert (status, body["error"]) == (401, "invalid_token")
    admin_app = make_app(org)
    _, issued = token_call(grant_type="client_credentials", client_id=admin_app.client_id,
                           client_secret=admin_app.client_secret)
    status, client = register(METADATA, token=issued["access_token"])  # the token names the organization
    assert status == 201, client
    assert registered_count(org) == before + 1
    # a user's token, a bad token, and a token of another organization vouch for nothing
    make_user(owner=org, name="alice", password=PASSWORD)
    _, user_tokens = token_call(grant_type="password", client_id=admin_app.client_id,
                                client_secret=admin_app.client_secret, username="alice", password=PASSWORD)
    status, body = register(METADATA, org, token=user_tokens["access_token"])
    assert (status, body["error"]) == (401, "invalid_token")
    status, body = register(METADATA, org, token="not-a-token")
    assert (status, body["error"]) == (401, "invalid_token")
    foreign = make_app(make_org(dcr_policy="open").name)
    _, foreign_token = token_call(grant_type="client_credentials", client_id=foreign.client_id,
                                  client_secret=foreign.client_secret)
    status, body = register(METADATA, org, token=foreign_token["access_token"])
    assert (status, body["error"]) == (403, "access_denied")
    # nor does a registered client's own token: it would register clients without end
    _, own = token_call(grant_type="client_credentials", client_id=client["client_id"],
                        client_secret=client["client_secret"])
    assert own["error"] == "unauthorized_client"  # it registered without client_credentials
    assert registered_count(org) == before + 1


def test_a_registered_client_has_no_admin_rights(open_org):
    status, client = register({**METADATA, "grant_types": ["client_credentials"], "response_types": []}, open_org)
    assert status == 201, client
    http = TestClient(api)
    credentials = {"clientId": client["client_id"], "clientSecret": client["client_secret"]}
    users = http.get("/api/get-users", params={"owner": open_org, **credentials}).json()
    assert users["status"] == "error" or users["data"] == [], users  # an ordinary user's view: nobody else
    added = http.post("/api/add-user", params=credentials, json={"owner": open_org, "name": "mallory"}).json()
    assert added["status"] == "error", added
    _, issued = token_call(grant_type="client_credentials", client_id=client["client_id"],
                           client_secret=client["client_secret"])
    as_bearer = http.get("/api/get-users", params={"owner": open_org},
                         headers={"Authorization": f"Bearer {issued['access_token']}"}).json()
    assert as_bearer["status"] == "error" or as_bearer["data"] == [], as_bearer
    # its token is no initial access token either
    status, body = register(METADATA, open_org, token=issued["access_token"])
    assert (status, body["error"]) == (401, "invalid_token")


BAD = [
    ({**METADATA, "redirect_uris": ["https://agent.example.com/cb#frag"]}, "invalid_redirect_uri"),
    ({**METADATA, "redirect_uris": ["http://agent.example.com/cb"]}, "invalid_redirect_uri"),
    ({**METADATA, "redirect_uris": ["^https://.*$"]}, "invalid_redirect_uri"),
    ({**METADATA, "redirect_uris": ["javascript:alert(1)"]}, "invalid_redirect_uri"),
    ({**METADATA, "redirect_uris": []}, "invalid_redirect_uri"),
    ({**METADATA, "redirect_uris": "https://agent.example.com/cb"}, "invalid_client_metadata"),
    ({**METADATA, "grant_types": ["password"]}, "invalid_client_metadata"),
    ({**METADATA, "grant_types": ["implicit"]}, "invalid_client_metadata"),
    ({**METADATA, "response_types": ["token"]}, "invalid_client_metadata"),
    ({**METADATA, "token_endpoint_auth_method": "tls_client_auth"}, "invalid_client_metadata"),
    ({**METADATA, "client_name": "x" * 101}, "invalid_client_metadata"),
    ({**METADATA, "logo_uri": "javascript:alert(1)"}, "invalid_client_metadata"),
    ({**METADATA, "scope": "openid \"quoted\""}, "invalid_client_metadata"),
    ({**METADATA, "contacts": [1]}, "invalid_client_metadata"),
    ([METADATA], "invalid_client_metadata"),
    # private_key_jwt needs keys; keys are public only, inline or by URL but not both
    ({**METADATA, "token_endpoint_auth_method": "private_key_jwt"}, "invalid_client_metadata"),
    ({**METADATA, "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [PRIVATE_JWK]}},
     "invalid_client_metadata"),
    ({**METADATA, "jwks": {"keys": [PUBLIC_JWK]}, "jwks_uri": "https://agent.example.com/jwks"},
     "invalid_client_metadata"),
    ({**METADATA, "jwks": ["not", "a", "set"]}, "invalid_client_metadata"),
    ({**METADATA, "jwks_uri": "ftp://agent.example.com/jwks"}, "invalid_client_metadata"),
    ({**METADATA, "token_endpoint_auth_method": "tls_client_auth"}, "invalid_client_metadata"),
]


@pytest.mark.parametrize(("body", "error"), BAD, ids=range(len(BAD)))
def test_bad_metadata_is_refused_and_nothing_written(open_org, body, error):
    status, answer = register(body, open_org)
    assert (status, answer["error"]) == (400, error), answer
    assert registered_count(open_org) == 0


def test_a_body_that_is_no_json_is_refused(open_org):
    response = TestClient(api).post(PATH, params={"organization": open_org}, content=b"{not json",
                                    headers={"Content-Type": "application/json"})
    assert response.status_code == 400 and response.json()["error"] == "invalid_client_metadata"
    assert registered_count(open_org) == 0


def test_public_clients_get_no_secret(open_org):
    status, client = register({**METADATA, "token_endpoint_auth_method": "none",
                               "redirect_uris": ["com.example.agent:/callback"], "application_type": "native"},
                              open_org)
    assert status == 201 and "client_secret" not in client and client["token_endpoint_auth_method"] == "none"


def test_registrations_are_rate_limited_per_address(open_org, monkeypatch):
    monkeypatch.setattr(registration, "REGISTRATIONS_PER_ADDRESS", (2, 3600))
    assert [register(METADATA, open_org)[0] for _ in range(2)] == [201, 201]
    status, body = register(METADATA, open_org)
    assert (status, body["error"]) == (429, "too_many_requests")
    assert registered_count(open_org) == 2


def test_an_organization_holds_a_quota_of_registered_clients(open_org, monkeypatch):
    monkeypatch.setattr(registration, "QUOTA", 1)
    assert register(METADATA, open_org)[0] == 201
    status, body = register(METADATA, open_org)
    assert (status, body["error"]) == (403, "access_denied") and "1 registered clients" in body["error_description"]
    assert registered_count(open_org) == 1


def test_discovery_advertises_registration_only_where_an_organization_allows_it(make_org):
    http = TestClient(api)
    with session_scope() as db:
        allowing = db.exec(select(m.Organization).where(m.Organization.dcr_policy.in_(
            ("open", "initial access token")))).all()
        for row in allowing:  # other tests' organizations
            row.dcr_policy = "disabled"
            db.add(row)
    try:
        for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
            assert "registration_endpoint" not in http.get(path).json()
        closed = make_app(make_org().name)
        assert "registration_endpoint" not in http.get(f"/.well-known/{closed.name}/openid-configuration").json()
        org = make_org(dcr_policy="open").name
        for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
            assert http.get(path).json()["registration_endpoint"] == f"http://testserver{PATH}"
        app = make_app(org)
        assert http.get(f"/.well-known/{app.name}/openid-configuration").json()["registration_endpoint"] == \
            f"http://testserver{PATH}?organization={org}"
    finally:
        with session_scope() as db:
            for row in allowing:
                row.dcr_policy = "open"
                db.add(row)


def test_organizations_store_the_policy_and_refuse_unknown_ones(admin, make_org):
    org = make_org().name
    record = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    answer = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                        json=record | {"dcrPolicy": "initial access token"}).json()
    assert answer["status"] == "ok", answer
    refused = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                         json=record | {"dcrPolicy": "anyone"}).json()
    assert refused["status"] == "error" and "anyone" in refused["msg"]
    stored = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    assert stored["dcrPolicy"] == "initial access token"
    builtin = admin.get("/api/get-organization", params={"id": f"admin/{b.BUILT_IN_ORG}"}).json()["data"]
    assert builtin["dcrPolicy"] == "disabled"  # off by default, as Casdoor seeds it


def test_a_client_registers_its_keys_and_signs_in_with_private_key_jwt(open_org):
    """RFC 7591 `jwks` and `token_endpoint_auth_method` private_key_jwt: the application is held to
    that method (RFC 7523), its keys are the registered ones."""
    body = {"client_name": "Keyed agent", "grant_types": ["client_credentials"],
            "token_endpoint_auth_method": "private_key_jwt", "jwks": {"keys": [PUBLIC_JWK]}}
    status, answer = register(body, open_org)
    assert status == 201, answer
    assert answer["token_endpoint_auth_method"] == "private_key_jwt" and answer["jwks"] == {"keys": [PUBLIC_JWK]}
    with session_scope() as db:
        row = db.exec(select(m.Application).where(m.Application.client_id == answer["client_id"])).one()
        assert (row.token_endpoint_auth_method, row.jwks) == ("private_key_jwt", {"keys": [PUBLIC_JWK]})

    def assertion(key) -> str:
        now = int(time.time())
        claims = {"iss": answer["client_id"], "sub": answer["client_id"], "aud": settings.origin, "iat": now,
                  "exp": now + 60, "jti": secrets.token_hex(8)}
        return jwt.encode(claims, key.as_pem(private=True), algorithm="RS256", headers={"kid": key.kid})

    def grant(client_assertion: str) -> tuple[int, dict]:
        return token_call(grant_type="client_credentials", client_assertion=client_assertion,
                          client_assertion_type="urn:ietf:params:oauth:client-assertion-type:jwt-bearer")

    status, tokens = grant(assertion(KEY))
    assert status == 200 and tokens["access_token"], tokens
    other = RSAKey.generate_key(2048, parameters={"kid": "agent-1"})  # the same kid, another key
    assert grant(assertion(other))[0] == 401
    # held to its method: its secret alone no longer does
    status, refusal = token_call(grant_type="client_credentials", client_id=answer["client_id"],
                                 client_secret=answer["client_secret"])
    assert (status, refusal["error"]) == (401, "invalid_client"), refusal
