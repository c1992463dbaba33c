"""Casdoor routes the SDKs and OAuth clients call beyond the CRUD family: the
Laravel-shaped userinfo, RFC 8414 and WebFinger discovery, sso-logout by GET,
health and get-records-filter."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.settings import settings
from tests.api.conftest import sign_in
from tests.api.test_oauth import PASSWORD, make_app, token_call
from tests.conftest import unique


@pytest.fixture
def world(make_org, make_user):
    """An organization, its user alice and an application allowed every grant."""
    org = make_org()
    alice = make_user(owner=org.name, name="alice", password=PASSWORD, email="alice@example.com")
    return org, alice, make_app(org.name)


def _token(app, scope: str) -> str:
    status, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                                username="alice", password=PASSWORD, scope=scope)
    assert status == 200, tokens
    return tokens["access_token"]


def test_api_user_answers_in_laravels_shape(world):
    _, alice, app_ = world
    answer = TestClient(api).get("/api/user", headers={"Authorization": f"Bearer {_token(app_, 'openid email')}"})
    assert answer.status_code == 200 and answer.headers["cache-control"] == "no-store"
    body = answer.json()
    assert set(body) == {"id", "name", "email", "email_verified_at", "created_at", "updated_at"}
    assert (body["id"], body["name"], body["email"]) == (alice.uuid, "alice", "alice@example.com")
    assert body["created_at"].endswith("Z")


def test_api_user_gives_the_email_only_with_its_scope(world):
    app_ = world[2]
    body = TestClient(api).get("/api/user", params={"access_token": _token(app_, "openid profile")}).json()
    assert body["name"] == "alice" and body["email"] == ""


def test_api_user_without_a_live_token_is_401():
    for headers in ({}, {"Authorization": "Bearer not-a-token"}):
        answer = TestClient(api).get("/api/user", headers=headers)
        assert answer.status_code == 401 and answer.json()["error"] == "invalid_token"


def test_authorization_server_metadata_is_the_discovery_document(world):
    app_ = world[2]
    client = TestClient(api)
    assert client.get("/.well-known/oauth-authorization-server").json() == \
        client.get("/.well-known/openid-configuration").json()
    own = client.get(f"/.well-known/{app_.name}/oauth-authorization-server").json()
    assert own["jwks_uri"].endswith(f"/.well-known/{app_.name}/jwks") and own["issuer"] == settings.origin
    assert client.get("/.well-known/no-such-app/oauth-authorization-server").status_code == 404


def test_webfinger_names_the_issuer_and_tells_nobody_who_has_an_account(world):
    app_ = world[2]
    client = TestClient(api)
    rel = "http://openid.net/specs/connect/1.0/issuer"
    answers = [client.get("/.well-known/webfinger", params={"resource": f"acct:{email}", "rel": rel})
               for email in ("alice@example.com", f"{unique('nobody')}@example.com")]
    for answer, email in zip(answers, ("alice@example.com", None), strict=True):
        assert answer.status_code == 200 and answer.headers["content-type"].startswith("application/jrd+json")
        assert answer.json()["links"] == [{"rel": rel, "href": settings.origin}]
        if email:
            assert answer.json()["subject"] == f"acct:{email}"
    assert client.get("/.well-known/webfinger", params={"resource": "acct:a@b"}).json()["links"] == []
    assert client.get(f"/.well-known/{app_.name}/webfinger", params={"resource": "acct:a@b", "rel": rel}
                      ).json()["links"][0]["href"] == settings.origin
    bad = client.get("/.well-known/webfinger", params={"resource": "https://example.com"})
    assert bad.status_code == 400 and bad.json()["error"] == "invalid_request"


def test_sso_logout_by_get_ends_a_bearers_sessions_but_never_a_cookies(world, admin):
    app_ = world[2]
    token = _token(app_, "openid")
    client = TestClient(api)
    assert client.get("/api/userinfo", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    # the session cookie alone, by GET (what a link on another site sends): nothing ends
    cookie_only = admin.get("/api/sso-logout").json()
    assert cookie_only["status"] == "error" and cookie_only["msg"] == "Please login first"
    assert admin.get("/api/get-account").json()["status"] == "ok"
    # a Bearer token by GET: its user's tokens end
    answer = client.get("/api/sso-logout", headers={"Authorization": f"Bearer {token}"}).json()
    assert answer["status"] == "ok" and answer["data"] == f"{world[0].name}/alice"
    assert client.get("/api/userinfo", headers={"Authorization": f"Bearer {token}"}).status_code == 401


def test_health_answers_anyone():
    body = TestClient(api).get("/api/health").json()
    assert (body["status"], body["data"]) == ("ok", None)


def test_get_records_filter_matches_fields_within_the_callers_reach(admin):
    action = unique("filtered-event")
    for _ in range(2):
        assert admin.post("/api/add-record", json={"action": action, "requestUri": "/x"}).json()["data"] == "Affected"
    rows = admin.post("/api/get-records-filter", json={"action": action}).json()["data"]
    assert len(rows) == 2 and {row["action"] for row in rows} == {action}
    assert admin.post("/api/get-records-filter", json={"action": action, "requestUri": "/y"}).json()["data"] == []

    org = unique("recorgs")
    assert admin.post("/api/add-organization", json={"owner": "admin", "name": org}).json()["data"] == "Affected"
    for name, is_admin in (("boss", True), ("alice", False)):
        assert admin.post("/api/add-user", json={"owner": org, "name": name, "password": "Rec-pass-1",
                                                 "isAdmin": is_admin}).json()["data"] == "Affected"
    boss = sign_in(org, "boss", "Rec-pass-1")
    assert boss.post("/api/get-records-filter", json={"action": action}).json()["data"] == []
    bad = boss.post("/api/get-records-filter", json={"action": 5}).json()
    assert bad["status"] == "error" and "action" in bad["msg"]
    for outsider in (TestClient(api), sign_in(org, "alice", "Rec-pass-1")):
        assert outsider.post("/api/get-records-filter", json={"action": action}).json()["status"] == "error"
