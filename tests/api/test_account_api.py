"""POST /api/login, /api/logout and GET /api/get-account over HTTP, in Casdoor's envelope."""

import httpx
import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console.api.app import api
from iam_console.api.callers import SESSION_COOKIE
from iam_console.db import session_scope
from iam_console.models import AuthSession, Organization
from tests.conftest import ADMIN_PASSWORD, unique

ENVELOPE = {"status", "msg", "sub", "name", "data", "data2", "data3"}


@pytest.fixture
def client(database):
    return TestClient(api)


def login(client, **body):
    form = {"application": "app-built-in", "organization": "built-in", "username": "admin",
            "password": ADMIN_PASSWORD, "autoSignin": True, "type": "login", "signinMethod": "Password"}
    form.update(body)
    return client.post("/api/login", json=form)


def session_count():
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(AuthSession)).one()


def test_login_sets_an_httponly_samesite_cookie(client):
    response = login(client)
    body = response.json()
    assert response.status_code == 200 and set(body) == ENVELOPE
    assert body["status"] == "ok" and body["data"] == "built-in/admin"
    cookie = response.headers["set-cookie"].lower()
    assert "iam_session=" in cookie and "httponly" in cookie and "samesite=lax" in cookie and "max-age=" in cookie


def test_without_auto_signin_the_cookie_ends_with_the_browser(client):
    cookie = login(client, autoSignin=False).headers["set-cookie"].lower()
    assert "max-age" not in cookie and "expires" not in cookie


def test_get_account_returns_the_user_with_secrets_masked(client):
    login(client)
    body = client.get("/api/get-account").json()
    assert set(body) == ENVELOPE and body["status"] == "ok"
    assert body["name"] == "admin" and body["sub"] == body["data"]["id"]
    assert body["data"]["password"] == "***" and body["data"]["owner"] == "built-in"
    assert body["data2"]["name"] == "built-in"


def test_anonymous_get_account_says_please_login_first(client):
    body = client.get("/api/get-account").json()
    assert (body["status"], body["msg"], body["data"]) == ("error", "Please login first", "Please login first")


def test_logout_ends_the_session(client):
    login(client)
    body = client.post("/api/logout").json()
    assert body["status"] == "ok" and body["data"] == "built-in/admin"
    assert client.get("/api/get-account").json()["status"] == "error"


def test_a_stolen_cookie_dies_at_logout(client):
    login(client)
    token = client.cookies.get("iam_session")
    client.post("/api/logout")
    thief = TestClient(api, cookies={"iam_session": token})
    assert thief.get("/api/get-account").json()["msg"] == "Please login first"


def test_login_rotates_the_session_id(client):
    login(client)
    first = client.cookies.get("iam_session")
    login(client)
    second = client.cookies.get("iam_session")
    assert first != second
    assert TestClient(api, cookies={"iam_session": first}).get("/api/get-account").json()["status"] == "error"


def test_messages_follow_accept_language(client):
    body = client.post("/api/login", json={"organization": "nowhere", "username": "a", "password": "b"},
                       headers={"Accept-Language": "zh-CN,zh;q=0.9"}).json()
    assert body["msg"] == "组织：nowhere 不存在"


@pytest.mark.parametrize("content,content_type,message", [
    (b"", "application/json", "Please input your username and password"),
    (b"{}", "application/json", "Please input your username and password"),
    (b"{not json", "application/json", "not valid JSON"),
    (b"[1, 2]", "application/json", "must be a JSON object"),
    (b'"text"', "text/plain", "must be a JSON object"),
    (b'{"username": 5, "password": "x"}', "application/json", "username must be of type string"),
    (b'{"username": "admin", "password": "x", "autoSignin": "yes"}', None, "autoSignin must be of type boolean"),
    (b'{"organization": "no-such-org", "username": "a", "password": "b"}', None, "does not exist"),
    (b'{"username": "' + b"a" * 500 + b'", "password": "b"}', None, "too long"),
    (b'{"username": "admin", "password": "' + b"p" * 5000 + b'"}', None, "too long"),
    (b"\xff\xfe", None, "not valid JSON"),
])
def test_bad_login_bodies_get_a_clear_error_and_no_session(client, content, content_type, message):
    before = session_count()
    headers = {"Content-Type": content_type} if content_type else {}
    response = client.post("/api/login", content=content, headers=headers)
    body = response.json()
    assert response.status_code == 200 and set(body) == ENVELOPE
    assert body["status"] == "error" and message in body["msg"]
    assert "set-cookie" not in response.headers
    assert session_count() == before


def test_a_huge_body_is_refused(client):
    response = client.post("/api/login", content=b'{"username": "' + b"a" * (2 << 20) + b'"}')
    assert response.json()["msg"] == "The request body is too large"


def test_json_keys_match_without_case(client):
    body = client.post("/api/login", json={"USERNAME": "admin", "Password": ADMIN_PASSWORD,
                                           "Organization": "built-in"}).json()
    assert body["status"] == "ok"


def test_cross_site_cookie_writes_are_refused(client):
    login(client)
    refused = client.post("/api/logout", headers={"Origin": "https://evil.example"}).json()
    assert refused["status"] == "error" and "not allowed" in refused["msg"]
    assert client.get("/api/get-account").json()["status"] == "ok"  # still signed in
    assert client.post("/api/logout", headers={"Origin": "http://testserver"}).json()["status"] == "ok"


def _organizations() -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(Organization)).one()


# a same-site page: another port of the console's host (a sibling subdomain is the same case)
SAME_SITE = "http://testserver:8081"


def test_a_malformed_neighbour_cookie_does_not_hide_the_session_from_the_check(client):
    """SimpleCookie dropped the whole header over `junk=b c` while authentication still
    found the session: a same-site page could then write as the user."""
    login(client)
    token = client.cookies.get(SESSION_COOKIE)
    bare = TestClient(api)
    session = f"{SESSION_COOKIE}={token}"
    for header in (f"{session}; junk=b c", f'junk="x; {session}', f"a=[b]; {session}"):
        cookie = {"Cookie": header}
        assert bare.get("/api/get-account", headers=cookie).json()["status"] == "ok"  # authentication sees it
        before = _organizations()
        refused = bare.post("/api/add-organization", headers={**cookie, "Origin": SAME_SITE},
                            json={"owner": "admin", "name": unique("csrf")}).json()
        assert refused["msg"] == f"The request's origin {SAME_SITE} is not allowed", (header, refused)
        assert _organizations() == before


def test_without_origin_the_referer_decides(client):
    login(client)
    before = _organizations()
    for referer in (f"{SAME_SITE}/page", "https://evil.example/form.html", "not a url"):
        refused = client.post("/api/add-organization", headers={"Referer": referer},
                              json={"owner": "admin", "name": unique("csrf")}).json()
        assert refused["status"] == "error" and "is not allowed" in refused["msg"], (referer, refused)
    assert _organizations() == before
    own = client.post("/api/add-organization", headers={"Referer": "http://testserver/organizations"},
                      json={"owner": "admin", "name": unique("csrf")}).json()
    assert own["data"] == "Affected"
    # Origin, when sent, wins over the Referer; "null" (a sandboxed page) is another origin
    assert "is not allowed" in client.post("/api/add-organization", json={"owner": "admin", "name": unique("csrf")},
                                           headers={"Origin": "null", "Referer": "http://testserver/x"}).json()["msg"]


NO_ORIGIN = "A request signed in by the session cookie must carry an Origin or Referer header"


def test_a_cookie_write_without_origin_or_referer_is_refused(client):
    """Every current browser sends Origin on an unsafe request: a cookie-borne write with
    neither header is refused, whatever the method, and nothing is written."""
    login(client)
    script = TestClient(api, origin=False, cookies=client.cookies)
    before = _organizations()
    name = unique("csrf")
    refused = script.post("/api/add-organization", json={"owner": "admin", "name": name})
    assert refused.status_code == 403 and refused.json()["status"] == "error" and refused.json()["msg"] == NO_ORIGIN
    assert "origin" not in refused.request.headers  # the client really sent none
    assert _organizations() == before
    assert client.post("/api/add-organization", json={"owner": "admin", "name": name}).json()["data"] == "Affected"
    for method in ("PUT", "PATCH", "DELETE"):
        answer = script.request(method, "/api/delete-organization", json={"owner": "admin", "name": name})
        assert answer.status_code == 403 and answer.json()["msg"] == NO_ORIGIN, method
    assert _organizations() == before + 1
    # reads are not writes: a GET needs no Origin
    assert script.get("/api/get-account").json()["status"] == "ok"


def test_a_cookie_write_from_a_foreign_origin_is_refused_with_403(client):
    login(client)
    before = _organizations()
    refused = client.post("/api/add-organization", headers={"Origin": "https://evil.example"},
                          json={"owner": "admin", "name": unique("csrf")})
    assert refused.status_code == 403
    assert refused.json()["msg"] == "The request's origin https://evil.example is not allowed"
    assert _organizations() == before


def test_a_cookie_write_from_the_own_origin_passes(client):
    login(client)
    answer = TestClient(api, origin=False, cookies=client.cookies).post(
        "/api/add-organization", headers={"Origin": "http://testserver"},
        json={"owner": "admin", "name": unique("csrf")})
    assert answer.status_code == 200 and answer.json()["data"] == "Affected"


def test_writes_with_credentials_of_their_own_need_no_origin(admin):
    """Access tokens, client id and secret (query or Basic) and access keys are not the
    cookie: their writes pass without Origin, with or without a cookie beside them."""
    from tests.api.test_audit_secrets import global_credentials

    held = global_credentials(admin)
    basic = httpx.BasicAuth(held["clientId"], held["clientSecret"])
    for cookies in ({}, admin.cookies):
        script = TestClient(api, origin=False, cookies=cookies)
        for how in ({"headers": {"Authorization": f"Bearer {held['access_token']}"}},
                    {"params": {"access_token": held["access_token"]}},
                    {"params": {"clientId": held["clientId"], "clientSecret": held["clientSecret"]}},
                    {"auth": basic},
                    {"params": {"accessKey": held["accessKey"], "accessSecret": held["accessSecret"]}}):
            answer = script.post("/api/add-organization", json={"owner": "admin", "name": unique("csrf")}, **how)
            assert "origin" not in answer.request.headers
            assert answer.status_code == 200, (how, bool(cookies), answer.json())
            assert answer.json()["data"] == "Affected", (how, bool(cookies), answer.json())


def test_a_sign_in_without_origin_passes_with_or_without_a_cookie(client):
    """A sign-in is authenticated by its password, not by a cookie beside it (which only names
    the session it replaces): a script signs in without Origin, first and again."""
    script = TestClient(api, origin=False)
    first = login(script)
    assert first.json()["status"] == "ok" and "origin" not in first.request.headers
    assert script.cookies.get(SESSION_COOKIE)
    again = login(script)
    assert again.json()["status"] == "ok" and "origin" not in again.request.headers


def test_other_origins_are_refused_on_every_unsafe_path_with_the_cookie(client):
    """Not only /api/: Reflex's own routes (its upload endpoint) sit behind the same guard."""
    login(client)
    answer = client.post("/_upload", headers={"Origin": SAME_SITE}, content=b"x")
    assert answer.json()["msg"] == f"The request's origin {SAME_SITE} is not allowed"


def test_cross_site_login_is_refused(client):
    before = session_count()
    response = client.post("/api/login", headers={"Origin": "https://evil.example"},
                           json={"username": "admin", "password": ADMIN_PASSWORD, "organization": "built-in"})
    assert response.json()["status"] == "error" and session_count() == before


def test_loopback_origins_are_interchangeable_but_not_other_ports(monkeypatch):
    from dataclasses import replace

    from iam_console.api import middleware as api_module

    monkeypatch.setattr(api_module, "settings", replace(api_module.settings, origin="http://localhost:3000"))
    api_module.allowed_origins.cache_clear()
    try:
        allowed = api_module.allowed_origins()
        assert {"http://localhost:3000", "http://127.0.0.1:3000", "http://[::1]:3000"} <= allowed
        assert "http://localhost:3001" not in allowed and "https://localhost:3000" not in allowed
    finally:
        api_module.allowed_origins.cache_clear()


def test_answers_carry_the_security_headers(admin):
    answer = admin.get("/api/get-account")
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["x-frame-options"] == "SAMEORIGIN"
    assert answer.headers["content-security-policy"] == "frame-ancestors 'self'"
    assert answer.headers["referrer-policy"] == "same-origin"
    assert answer.headers["cache-control"] == "no-store"
    # another origin gets no CORS answer from the API, with or without the cookie
    foreign = admin.get("/api/get-account", headers={"Origin": "http://localhost:1"})
    assert "access-control-allow-origin" not in foreign.headers
