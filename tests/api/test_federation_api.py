"""Upstream OAuth/OIDC providers over HTTP: the request shapes of GitHub and Google against a
local stub (their endpoints configured on the provider), state and PKCE, replayed, forged and
other-browser states, the outbound guard, bad provider configuration, /api/login with a provider,
/api/unlink, and an OAuth authorize request answered after the upstream sign-in."""

from __future__ import annotations

import base64
import hashlib
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.federation import upstream
from tests.api.test_oauth import REDIRECT, make_app
from tests.api.test_signup import items
from tests.conftest import reload_user, unique
from tests.upstream_stub import ACCESS_TOKEN, UpstreamStub

GITHUB_USER = {"id": 583231, "login": "octocat", "name": "The Octocat", "email": None,
               "avatar_url": "https://avatars.example.com/u/583231"}
GITHUB_EMAILS = [{"email": "old@example.com", "primary": False, "verified": True},
                 {"email": "octocat@example.com", "primary": True, "verified": True}]
GOOGLE_USER = {"sub": "108234", "email": "gina@example.com", "email_verified": True, "name": "Gina Google",
               "picture": "https://lh3.example.com/a.png"}


def row(name, **over):
    return {"name": name, "canSignUp": True, "canSignIn": True, "canUnlink": True, "prompted": False,
            "signupGroup": "", "rule": "None", "countryCodes": [], **over}


def setup(make_org, stub, kind="GitHub", *, app_fields=None, row_fields=None, **provider_fields):
    org = make_org()
    name = unique(kind.lower())
    paths = {"GitHub": ("/login/oauth/authorize", "/login/oauth/access_token", "/user"),
             "Google": ("/o/oauth2/v2/auth", "/token", "/v1/userinfo")}.get(kind, ("/authorize", "/token", "/userinfo"))
    fields = {"client_id": "upstream-client", "client_secret": "upstream-secret",
              "custom_auth_url": stub.base + paths[0], "custom_token_url": stub.base + paths[1],
              "custom_user_info_url": stub.base + paths[2], **provider_fields}
    with session_scope() as db:
        db.add(m.Provider(owner="admin", name=name, category="OAuth", type=kind, **fields))
    app = make_app(org.name, enable_sign_up=True, providers=[row(name, **(row_fields or {}))], **(app_fields or {}))
    return org, app, name


def begin(client, app, provider, method="signin", **extra):
    answer = client.get("/api/federation/start", params={"application": app.name, "provider": provider,
                                                          "method": method, **extra}, follow_redirects=False)
    assert answer.status_code == 302
    return answer.headers["location"]


def error_of(location: str) -> str:
    error_id = parse_qs(urlsplit(location).query)["upstreamError"][0]
    with session_scope() as db:
        return upstream.take_error(db, error_id)


def live_states() -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.UpstreamState).where(m.UpstreamState.error_id == "")).one()


@pytest.fixture
def github(database):
    with UpstreamStub(user=GITHUB_USER, emails=GITHUB_EMAILS) as stub:
        yield stub


@pytest.fixture
def google(database):
    with UpstreamStub(user=GOOGLE_USER) as stub:
        yield stub


def test_github_request_shapes_and_sign_up(make_org, github):
    org, app, provider = setup(make_org, github)
    client = TestClient(api)
    location = begin(client, app, provider, **{"from": "/account"})
    url = urlsplit(location)
    query = {k: v[0] for k, v in parse_qs(url.query).items()}
    assert f"{url.scheme}://{url.netloc}{url.path}" == github.base + "/login/oauth/authorize"
    assert query["response_type"] == "code" and query["client_id"] == "upstream-client"
    assert query["redirect_uri"] == "http://testserver/callback" and query["scope"] == "read:user user:email"
    assert query["code_challenge_method"] == "S256" and len(query["state"]) >= 32
    assert "client_secret" not in query and upstream.COOKIE in client.cookies
    answer = client.get("/callback", params={"code": "the-code", "state": query["state"]}, follow_redirects=False)
    assert answer.status_code == 302 and answer.headers["location"] == "/account"
    [token_call] = github.to("/access_token")
    assert token_call.method == "POST" and token_call.headers["accept"] == "application/json"
    assert token_call.form["grant_type"] == "authorization_code" and token_call.form["code"] == "the-code"
    assert token_call.form["redirect_uri"] == "http://testserver/callback"
    assert token_call.form["client_id"] == "upstream-client" and token_call.form["client_secret"] == "upstream-secret"
    verifier = token_call.form["code_verifier"]  # PKCE: the verifier of the challenge sent at start
    assert base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode() == \
        query["code_challenge"]
    [user_call] = github.to("/user")
    assert user_call.method == "GET" and user_call.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    [emails_call] = github.to("/user/emails")  # the profile's email is private: the emails endpoint
    assert emails_call.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    user = reload_user(org.name, "octocat")
    assert user.email == "octocat@example.com" and user.email_verified and user.third_party_ids == {"github": "583231"}
    assert ACCESS_TOKEN not in str(user.properties) and ACCESS_TOKEN not in (user.original_token or "")
    account = client.get("/api/get-account").json()
    assert account["status"] == "ok" and account["data"]["github"] == "583231"
    assert account["data"]["name"] == "octocat"


def test_google_request_shapes(make_org, google):
    org, app, provider = setup(make_org, google, "Google")
    client = TestClient(api)
    query = parse_qs(urlsplit(begin(client, app, provider)).query)
    assert query["scope"] == ["openid email profile"] and query["nonce"] and query["code_challenge_method"] == ["S256"]
    answer = client.get("/callback", params={"code": "the-code", "state": query["state"][0]}, follow_redirects=False)
    assert answer.status_code == 302 and answer.headers["location"] == "/"
    [token_call] = google.to("/token")
    assert token_call.form["grant_type"] == "authorization_code" and token_call.form["code_verifier"]
    [info_call] = google.to("/v1/userinfo")
    assert info_call.headers["authorization"] == f"Bearer {ACCESS_TOKEN}"
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name)).one()
    assert user.third_party_ids == {"google": "108234"} and user.display_name == "Gina Google"


def test_replayed_forged_and_other_browser_states_are_refused(make_org, github):
    org, app, provider = setup(make_org, github)
    client = TestClient(api)
    state = parse_qs(urlsplit(begin(client, app, provider)).query)["state"][0]
    assert client.get("/callback", params={"code": "the-code", "state": state},
                      follow_redirects=False).headers["location"] == "/"
    calls = len(github.calls)
    replay = client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    assert replay.headers["location"].startswith(f"/login/{org.name}?upstreamError=")
    assert error_of(replay.headers["location"]) == upstream.REPLAYED
    forged = client.get("/callback", params={"code": "the-code", "state": "forged-state"}, follow_redirects=False)
    assert forged.headers["location"].startswith("/login?upstreamError=")
    assert error_of(forged.headers["location"]) == upstream.UNKNOWN_STATE
    state = parse_qs(urlsplit(begin(client, app, provider)).query)["state"][0]
    stranger = TestClient(api)  # a browser without the cookie the state is bound to
    other = stranger.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    assert error_of(other.headers["location"]) == upstream.OTHER_BROWSER
    assert len(github.calls) == calls  # nothing was sent for a refused state
    assert "iam_session" not in stranger.cookies and not other.headers.get("set-cookie", "").startswith("iam_session")


def test_the_guard_refuses_a_provider_on_a_host_not_allowed(make_org, github, allow):
    org, app, provider = setup(make_org, github)
    client = TestClient(api)
    state = parse_qs(urlsplit(begin(client, app, provider)).query)["state"][0]
    allow("")  # 127.0.0.1 is internal: refused unless listed
    answer = client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    assert "Refused to connect to 127.0.0.1" in error_of(answer.headers["location"])
    assert github.calls == []
    with session_scope() as db:
        assert db.exec(select(m.User).where(m.User.owner == org.name)).first() is None


@pytest.mark.parametrize(("fields", "message"), [
    ({"client_id": ""}, "has no client ID"),
    ({"custom_token_url": "ftp://nowhere"}, "has no valid token URL"),
])
def test_bad_provider_config_is_a_clear_error_and_writes_nothing(make_org, github, fields, message):
    org, app, provider = setup(make_org, github, **fields)
    before = live_states()
    location = begin(TestClient(api), app, provider)
    assert location.startswith(f"/login/{org.name}?upstreamError=") and message in error_of(location)
    assert live_states() == before


def test_custom_without_endpoints_and_okta_without_domain(make_org, github):
    _, app, provider = setup(make_org, github, "Custom", custom_auth_url="", custom_token_url="",
                             custom_user_info_url="", user_mapping={"id": "sub", "username": "u", "displayName": "n"})
    assert "needs an issuer URL" in error_of(begin(TestClient(api), app, provider))
    _, app, provider = setup(make_org, github, "Okta", custom_auth_url="", custom_token_url="",
                             custom_user_info_url="")
    assert "needs its Okta authorization server in Domain" in error_of(begin(TestClient(api), app, provider))


def test_custom_provider_by_discovery_with_user_mapping(make_org):
    with UpstreamStub(user={"uid": "u-1", "login": {"name": "dee"}, "full": "Dee Custom", "mail": "dee@example.com",
                            "email_verified": True}) as stub:
        stub.discovery = {"issuer": stub.base, "authorization_endpoint": stub.base + "/authorize",
                          "token_endpoint": stub.base + "/token", "userinfo_endpoint": stub.base + "/userinfo"}
        org, app, provider = setup(make_org, stub, "Custom", custom_auth_url="", custom_token_url="",
                                   custom_user_info_url="", issuer_url=stub.base, scopes="openid email",
                                   user_mapping={"id": "uid", "username": "login.name", "displayName": "full",
                                                 "email": "mail", "avatarUrl": "pic"})
        client = TestClient(api)
        location = begin(client, app, provider)
        assert location.startswith(stub.base + "/authorize?")
        state = parse_qs(urlsplit(location).query)["state"][0]
        client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    user = reload_user(org.name, "dee")
    assert user.third_party_ids == {"custom": "u-1"} and user.display_name == "Dee Custom"
    assert user.email == "dee@example.com"


def test_discovery_naming_another_issuer_is_refused(make_org):
    with UpstreamStub() as stub:
        stub.discovery = {"issuer": "https://evil.example.com", "authorization_endpoint": stub.base + "/a",
                          "token_endpoint": stub.base + "/t", "userinfo_endpoint": stub.base + "/u"}
        _, app, provider = setup(make_org, stub, "Custom", custom_auth_url="", custom_token_url="",
                                 custom_user_info_url="", issuer_url=stub.base,
                                 user_mapping={"id": "sub", "username": "u", "displayName": "n"})
        assert "names another issuer" in error_of(begin(TestClient(api), app, provider))


def test_api_login_with_provider_code_and_state(make_org, github):
    org, app, provider = setup(make_org, github)
    client = TestClient(api)
    state = parse_qs(urlsplit(begin(client, app, provider)).query)["state"][0]
    body = {"application": app.name, "provider": provider, "code": "the-code", "state": state, "type": "login"}
    answer = client.post("/api/login", json=body).json()
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/octocat"
    again = client.post("/api/login", json=body).json()
    assert again["status"] == "error" and again["msg"] == upstream.REPLAYED


def test_sign_in_refused_when_can_sign_in_is_off(make_org, github):
    _org, app, provider = setup(make_org, github, row_fields={"canSignIn": False})
    location = begin(TestClient(api), app, provider)
    assert "cannot be used to sign in" in error_of(location)


def test_authorize_request_is_answered_at_the_registered_redirect_uri(make_org, github):
    _org, app, provider = setup(make_org, github)
    authorize = urlencode({"client_id": app.client_id, "response_type": "code", "redirect_uri": REDIRECT,
                           "scope": "openid", "state": "client-state"})
    client = TestClient(api)
    state = parse_qs(urlsplit(begin(client, app, provider, authorize=authorize)).query)["state"][0]
    answer = client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    location = answer.headers["location"]
    assert location.startswith(REDIRECT + "?code=") and location.endswith("&state=client-state")
    # an authorize request naming an unregistered redirect URI is refused at the start
    bad = urlencode({"client_id": app.client_id, "response_type": "code", "redirect_uri": "https://evil.example/cb",
                     "scope": "openid", "state": "s"})
    refused = begin(TestClient(api), app, provider, authorize=bad)
    assert refused.startswith("/login/oauth/authorize?") and "evil.example" not in urlsplit(refused).netloc


def test_link_and_unlink_from_the_account(make_org, make_user, github):
    org, app, provider = setup(make_org, github, row_fields={"canUnlink": True})
    make_user(owner=org.name, name="linda", password="linda-pass-1", signup_application=app.name)
    client = TestClient(api)
    assert client.post("/api/login", json={"organization": org.name, "application": app.name, "username": "linda",
                                           "password": "linda-pass-1"}).json()["status"] == "ok"
    state = parse_qs(urlsplit(begin(client, app, provider, method="link")).query)["state"][0]
    answer = client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    assert answer.headers["location"] == "/account"
    assert reload_user(org.name, "linda").third_party_ids == {"github": "583231"}
    bad = client.post("/api/unlink", json={"providerType": "Nope"}).json()
    assert bad["status"] == "error" and "not supported" in bad["msg"]
    done = client.post("/api/unlink", json={"providerType": "GitHub", "providerName": provider}).json()
    assert done["status"] == "ok", done
    assert reload_user(org.name, "linda").third_party_ids == {}
    anonymous = TestClient(api).post("/api/unlink", json={"providerType": "GitHub"}).json()
    assert anonymous["status"] == "error" and anonymous["msg"] == "Please login first"


def test_a_second_factor_is_owed_after_the_upstream_sign_in(make_org, github):
    import pyotp

    org, app, provider = setup(make_org, github)
    client = TestClient(api)
    state = parse_qs(urlsplit(begin(client, app, provider)).query)["state"][0]
    client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)  # signed up
    secret = pyotp.random_base32()
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == "octocat")).one()
        user.totp_secret, user.preferred_mfa_type = secret, "app"
        db.add(user)
    browser = TestClient(api)
    state = parse_qs(urlsplit(begin(browser, app, provider, **{"from": "/account"})).query)["state"][0]
    answer = browser.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
    location = answer.headers["location"]
    assert location == f"/login/{org.name}?from=%2Faccount&nextMfa=1", location
    assert "iam_session" not in browser.cookies  # no session before the second factor
    pending = browser.get("/api/federation/pending-mfa").json()
    assert pending["data"] == "NextMfa" and pending["data2"][0]["mfaType"] == "app"
    wrong = browser.post("/api/login", json={"passcode": "000000", "mfaType": "app"}).json()
    assert wrong["status"] == "error"
    done = browser.post("/api/login", json={"passcode": pyotp.TOTP(secret).now(), "mfaType": "app"}).json()
    assert done["status"] == "ok" and done["data"] == f"{org.name}/octocat", done
    assert TestClient(api).get("/api/federation/pending-mfa").json()["status"] == "error"


@pytest.mark.parametrize(("params", "message"), [
    ({"method": "steal"}, "Unknown method: steal"),
    ({"application": "no-such-app"}, "The application: no-such-app does not exist"),
    ({"provider": "no-such-provider"}, "The provider: no-such-provider does not exist"),
    ({"method": "link"}, "Please sign in first"),
    ({"authorize": "x" * 5000}, "The authorization request is too long"),
])
def test_bad_starts_are_refused_with_nothing_written(make_org, github, params, message):
    _org, app, provider = setup(make_org, github)
    before = live_states()
    query = {"application": app.name, "provider": provider, "method": "signin", **params}
    location = TestClient(api).get("/api/federation/start", params=query, follow_redirects=False).headers["location"]
    assert error_of(location) == message
    assert live_states() == before and github.calls == []


def test_link_by_email_never_lands_in_an_account_that_claimed_the_address_unproven(make_org, google):
    """Issue 26: with enableLinkWithEmail on and sign-up email verification off, an attacker signs
    up with the victim's address; the victim's later sign-in at a provider that vouches for it
    (email_verified: true) must not land in the attacker's account."""
    org, app, provider = setup(make_org, google, "Google", app_fields={
        "enable_link_with_email": True, "signup_items": items(Email={"rule": "No verification"})})
    attacker = TestClient(api)
    signed_up = attacker.post("/api/signup", json={
        "application": app.name, "organization": org.name, "username": "squatter", "name": "Squatter",
        "password": "Squat-pass-123", "email": GOOGLE_USER["email"]}).json()
    assert signed_up["status"] == "ok", signed_up
    victim = TestClient(api)
    state = parse_qs(urlsplit(begin(victim, app, provider)).query)["state"][0]
    answer = victim.post("/api/login", json={"application": app.name, "provider": provider, "code": "the-code",
                                             "state": state, "type": "login"}).json()
    assert answer["status"] == "error", answer
    assert answer["msg"].startswith(f"The account with the email {GOOGLE_USER['email']} has not verified it")
    assert victim.get("/api/get-account").json()["status"] == "error"  # no session
    squatter = reload_user(org.name, "squatter")
    assert not (squatter.third_party_ids or {}).get("google") and "oauth_Google_id" not in (squatter.properties or {})
    with session_scope() as db:
        assert db.exec(select(func.count()).select_from(m.User).where(m.User.owner == org.name)).one() == 1
