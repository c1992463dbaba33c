"""OpenID Connect Back-Channel Logout 1.0 and Front-Channel Logout 1.0 over HTTP (oauth/logout.py):
openid-client 6.9.0 signs in, validates the ID token's `sid` and builds the end-session URL; a local
sink receives the logout token, which joserfc (not the server's PyJWT) verifies against the
published key set; a failing receiver gets it again; an internal address is refused by the
outbound guard; the front-channel page frames each application's logout URI.

The delivery worker runs here as the server runs it (scheduler.py: operations/webhooks.py run, on
a thread of its own). The Node test needs node and `make node-sdk`, like test_sdk_node.py."""

from __future__ import annotations

import base64
import json
import subprocess
import threading
import time
from html.parser import HTMLParser
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient
from joserfc import jwt as jose_jwt
from joserfc.jwk import KeySet
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.api.callers import SESSION_COOKIE
from iam_console.db import session_scope
from iam_console.oauth import logout
from iam_console.oauth.api import front_channel_page
from iam_console.operations import webhooks
from iam_console.signin.auth import hash_token
from tests.api.conftest import ok_body
from tests.api.oauth_world import SDK_GRANTS, USER, World
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import PASSWORD, REDIRECT, code_for, exchange, make_app, token_call
from tests.api.test_sdk_node import NODE_DIR, NODE_TIMEOUT_SECONDS, node  # noqa: F401
from tests.conftest import unique
from tests.sinks import HttpSink, wait_until

ISSUER = "http://testserver"  # IAM_ORIGIN of the tests (tests/conftest.py)
DRIVER = NODE_DIR / "oidc_logout.mjs"
REFUSED = "Refused to connect to %s: an internal address, not listed in IAM_OUTBOUND_ALLOW"
DELIVERY_SECONDS = 20  # the notice is on its way within this (docs/api.md, "Standards")


@pytest.fixture(scope="module")
def worker(database):
    """The webhook outbox's delivery worker, as every server process runs it."""
    stop = threading.Event()
    thread = threading.Thread(target=webhooks.run, args=(stop, session_scope), name="test-delivery", daemon=True)
    thread.start()
    yield
    stop.set()
    webhooks.WAKE.set()
    thread.join(10)


@pytest.fixture(scope="module")
def sink():
    with HttpSink() as receiver:
        yield receiver


def _world(make_org, make_user, **fields) -> World:
    """An organization, its user alice, and an application (a plain and a regular-expression redirect URI)."""
    org = make_org().name
    make_user(owner=org, name=USER, password=PASSWORD, email="alice@example.com")
    return World(org, make_app(org, grant_types=SDK_GRANTS, **fields), "")


def _segment(token: str, index: int) -> dict:
    part = token.split(".")[index]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))


def verified_logout_token(token: str, jwks: dict, client_id: str) -> tuple[dict, dict]:
    """The logout token's header and claims, its signature checked by joserfc with the published key
    set and its registered claims (iss, aud, iat, exp, jti) validated."""
    header = _segment(token, 0)
    decoded = jose_jwt.decode(token, KeySet.import_key_set(jwks), algorithms=[header["alg"]])
    jose_jwt.JWTClaimsRegistry(iss={"essential": True, "value": ISSUER}, aud={"essential": True, "value": client_id},
                               iat={"essential": True}, exp={"essential": True},
                               jti={"essential": True}).validate(decoded.claims)
    return decoded.header, decoded.claims


def check_logout_token(call, jwks: dict, client_id: str, *, sub: str, sid: str, sent_after: int) -> dict:
    """What OpenID Back-Channel Logout 1.0 sections 2.4 to 2.6 asks of the POST and its token; the claims."""
    assert call.method == "POST" and call.headers["Content-Type"] == "application/x-www-form-urlencoded"
    assert list(parse_qs(call.body.decode())) == ["logout_token"]
    header, claims = verified_logout_token(call.fields["logout_token"], jwks, client_id)
    assert header["typ"] == "logout+jwt" and header["alg"].startswith(("RS", "PS", "ES"))  # asymmetric
    assert claims["events"] == {"http://schemas.openid.net/event/backchannel-logout": {}}
    assert (claims["sub"], claims["sid"]) == (sub, sid) and "nonce" not in claims
    # signed after the logout began, and short-lived
    assert sent_after <= claims["iat"] < claims["exp"] <= claims["iat"] + logout.TOKEN_SECONDS
    return claims


def notices(application: str) -> list[m.WebhookEvent]:
    with session_scope() as db:
        return list(db.exec(select(m.WebhookEvent).where(m.WebhookEvent.event_type == logout.LOGOUT_EVENT,
                                                         m.WebhookEvent.webhook == f"admin/{application}")
                            .order_by(m.WebhookEvent.pk)))


def settled_notice(application: str) -> m.WebhookEvent:
    """The application's one notice, once the worker has reached an outcome that is final."""
    return wait_until(lambda: next((e for e in notices(application) if e.state in (webhooks.SUCCESS, webhooks.FAILED)),
                              None), DELIVERY_SECONDS * 3, f"the notice to {application}")


def session_id_of(browser: TestClient | httpx.Client) -> str:
    """The public id of the browser's console session (the cookie is a secret: found by its hash)."""
    with session_scope() as db:
        return db.exec(select(m.AuthSession.session_id).where(
            m.AuthSession.token_hash == hash_token(browser.cookies[SESSION_COOKIE]))).one()


def jwks_of(app: m.Application) -> dict:
    return TestClient(api).get(f"/.well-known/{app.name}/jwks").json()


# --- discovery ---

@pytest.mark.parametrize("path", ["/.well-known/openid-configuration", "/.well-known/oauth-authorization-server",
                                  "/.well-known/app-built-in/openid-configuration",
                                  "/.well-known/app-built-in/oauth-authorization-server"])
def test_discovery_advertises_both_logouts_and_sid(path):
    document = TestClient(api).get(path).json()
    assert document["end_session_endpoint"] == f"{ISSUER}/api/logout"
    for member in ("backchannel_logout_supported", "backchannel_logout_session_supported",
                   "frontchannel_logout_supported", "frontchannel_logout_session_supported"):
        assert document[member] is True
    assert "sid" in document["claims_supported"]


# --- openid-client, end to end ---

def _openid_client(node_path: str, job: dict) -> dict:
    process = subprocess.run([node_path, str(DRIVER)], input=json.dumps(job), capture_output=True, text=True,
                             timeout=NODE_TIMEOUT_SECONDS, cwd=NODE_DIR)
    assert process.returncode == 0, process.stderr
    answer = json.loads(process.stdout)
    assert answer["ok"], answer
    return answer


def test_openid_client_ends_the_session_and_the_back_channel_gets_a_verified_logout_token(
        node, api_server, worker, sink, make_org, make_user):  # noqa: F811
    path = f"/backchannel/{unique('rp')}"
    world = _world(make_org, make_user, backchannel_logout_uri=sink.url + path)
    browser = httpx.Client(base_url=api_server)
    answer = ok_body(browser.post("/api/login", params={
        "clientId": world.app.client_id, "responseType": "code", "redirectUri": REDIRECT,
        "scope": "openid profile", "state": "st-rp", "nonce": "n-rp"}, json={
        "application": world.app.name, "organization": world.org, "username": USER, "password": PASSWORD}))
    result = _openid_client(node, {
        "issuer": ISSUER, "endpoint": api_server, "clientId": world.app.client_id,
        "clientSecret": world.app.client_secret, "callbackUrl": answer["data2"], "state": "st-rp", "nonce": "n-rp",
        "postLogoutRedirectUri": REDIRECT, "logoutState": "bye"})
    assert result["metadata"] == {"end_session_endpoint": f"{ISSUER}/api/logout",
                                  "backchannel_logout_supported": True, "backchannel_logout_session_supported": True,
                                  "frontchannel_logout_supported": True,
                                  "frontchannel_logout_session_supported": True}
    sid = result["claims"]["sid"]  # validated by openid-client: signature, iss, aud, nonce, times
    assert sid == session_id_of(browser)

    # the browser follows the end-session URL openid-client built (IAM_ORIGIN is where this server listens)
    end_session = urlsplit(result["endSessionUrl"])
    assert parse_qs(end_session.query) == {"id_token_hint": [result["idToken"]], "client_id": [world.app.client_id],
                                           "post_logout_redirect_uri": [REDIRECT], "state": ["bye"]}
    began = int(time.time())
    response = browser.get(f"{end_session.path}?{end_session.query}", follow_redirects=False)
    assert response.status_code == 302 and response.headers["location"] == f"{REDIRECT}?state=bye"
    assert browser.get("/api/get-account").json()["status"] == "error"  # the browser's session ended with it

    call = sink.wait_at(path, timeout=DELIVERY_SECONDS)
    check_logout_token(call, httpx.get(f"{api_server}/.well-known/{world.app.name}/jwks").json(),
                       world.app.client_id, sub=result["claims"]["sub"], sid=sid, sent_after=began)
    # recorded as webhook events are: its application's admins read the outcome
    event = settled_notice(world.app.name)
    assert (event.state, event.attempt_count, event.last_status_code) == (webhooks.SUCCESS, 1, 200)
    assert event.organization == world.org


# --- sid ---

def test_sid_is_the_browser_sessions_kept_by_refresh_and_new_for_another_session(make_org, make_user):
    world = _world(make_org, make_user)
    browser = TestClient(api)
    code, verifier = code_for(world.app, world.org, client=browser)
    _, tokens = exchange(world.app, code, verifier)
    sid = _segment(tokens["id_token"], 1)["sid"]
    assert sid == session_id_of(browser)
    _, refreshed = token_call(grant_type="refresh_token", client_id=world.app.client_id,
                              client_secret=world.app.client_secret, refresh_token=tokens["refresh_token"])
    assert _segment(refreshed["id_token"], 1)["sid"] == sid
    # signing in again in the same browser (a new cookie) to another application: the same session
    cookie = browser.cookies[SESSION_COOKIE]
    second = make_app(world.org, grant_types=SDK_GRANTS)
    code, verifier = code_for(second, world.org, client=browser)
    _, theirs = exchange(second, code, verifier)
    assert browser.cookies[SESSION_COOKIE] != cookie and _segment(theirs["id_token"], 1)["sid"] == sid

    other = TestClient(api)
    code, verifier = code_for(world.app, world.org, client=other)
    _, theirs = exchange(world.app, code, verifier)
    assert _segment(theirs["id_token"], 1)["sid"] == session_id_of(other) != sid
    # a token given outside any browser session names none
    _, password = token_call(grant_type="password", client_id=world.app.client_id,
                             client_secret=world.app.client_secret, username=USER, password=PASSWORD)
    assert "sid" not in _segment(password["id_token"], 1)


# --- retries and the outbound guard ---

def test_a_failing_receiver_gets_the_same_notice_again(worker, make_org, make_user):
    with HttpSink(first=(503,)) as flaky:
        world = _world(make_org, make_user, backchannel_logout_uri=f"{flaky.url}/bc")
        browser = TestClient(api)
        code, verifier = code_for(world.app, world.org, client=browser)
        _, tokens = exchange(world.app, code, verifier)
        began = int(time.time())
        ok_body(browser.post("/api/logout"))  # the console's own sign-out (no id_token_hint) tells them too

        first, second = flaky.wait_at("/bc"), flaky.wait_at("/bc", count=2, timeout=DELIVERY_SECONDS * 3)
        claims = _segment(tokens["id_token"], 1)
        jwks = jwks_of(world.app)
        one = check_logout_token(first, jwks, world.app.client_id, sub=claims["sub"], sid=claims["sid"],
                                 sent_after=began)
        again = check_logout_token(second, jwks, world.app.client_id, sub=claims["sub"], sid=claims["sid"],
                                   sent_after=one["iat"])
        assert again["jti"] == one["jti"]  # the same logout, signed anew: the receiver drops a repeat by jti
    event = settled_notice(world.app.name)
    assert (event.state, event.attempt_count, event.last_status_code) == (webhooks.SUCCESS, 2, 200)


def test_an_internal_address_is_refused_by_the_outbound_guard(worker, make_org, make_user):
    with HttpSink(host="127.0.0.2") as internal:  # loopback, but not in the tests' IAM_OUTBOUND_ALLOW
        world = _world(make_org, make_user, backchannel_logout_uri=f"{internal.url}/bc")
        browser = TestClient(api)
        code, verifier = code_for(world.app, world.org, client=browser)
        _, tokens = exchange(world.app, code, verifier)
        response = browser.get("/api/logout", params={"id_token_hint": tokens["id_token"]})
        assert ok_body(response)["data"] == f"{world.org}/{USER}"  # the answer never waits for the notice
        event = wait_until(lambda: next((e for e in notices(world.app.name) if e.attempt_count), None),
                      DELIVERY_SECONDS, "the refused attempt")
        assert event.last_error == REFUSED % "127.0.0.2" and event.state == webhooks.RETRYING
        assert internal.connections == 0 and not internal.calls


# --- front-channel ---

class _Frames(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.frames: list[dict] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list) -> None:
        if tag == "iframe":
            self.frames.append(dict(attrs))
        elif tag == "a":
            self.links.append(dict(attrs)["href"])


def _page(response) -> _Frames:
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/html")
    parsed = _Frames()
    parsed.feed(response.text)
    return parsed


def test_the_end_session_page_frames_each_applications_front_channel_uri_then_goes_on(make_org, make_user):
    world = _world(make_org, make_user, frontchannel_logout_uri="https://rp.example/front-logout?from=idp")
    other = make_app(world.org, grant_types=SDK_GRANTS, frontchannel_logout_uri="http://other.example:8080/fc")
    unrelated = make_app(world.org, grant_types=SDK_GRANTS, frontchannel_logout_uri="https://unrelated.example/fc")
    browser = TestClient(api, follow_redirects=False)
    code, verifier = code_for(world.app, world.org, client=browser)
    _, tokens = exchange(world.app, code, verifier)
    exchange(other, *code_for(other, world.org, client=browser))  # the same browser session signs in to both
    exchange(unrelated, *code_for(unrelated, world.org))  # another browser's session
    sid = _segment(tokens["id_token"], 1)["sid"]

    response = browser.get("/api/logout", params={"id_token_hint": tokens["id_token"], "state": "s&1",
                                                  "post_logout_redirect_uri": REDIRECT})
    page = _page(response)
    sources = {f"{u.scheme}://{u.netloc}{u.path}": parse_qs(u.query) for u in
               (urlsplit(frame["src"]) for frame in page.frames)}
    assert sources == {"https://rp.example/front-logout": {"from": ["idp"], "iss": [ISSUER], "sid": [sid]},
                       "http://other.example:8080/fc": {"iss": [ISSUER], "sid": [sid]}}
    assert all("hidden" in frame and frame["title"] for frame in page.frames)
    assert page.links == [f"{REDIRECT}?state=s%261"]
    assert json.dumps(f"{REDIRECT}?state=s%261") in response.text  # where the script goes once the frames load
    policy = response.headers["content-security-policy"]
    assert "frame-src http://other.example:8080 https://rp.example;" in policy and "frame-ancestors 'none'" in policy
    assert SESSION_COOKIE in response.headers["set-cookie"]  # the cookie is cleared


def test_post_logout_redirect_uri_must_equal_a_registered_uri(make_org, make_user):
    """A URI that only a registered regular expression matches is not one the application registered
    for its logout: the page frames the front-channel URI and goes nowhere."""
    world = _world(make_org, make_user, frontchannel_logout_uri="https://rp.example/front")
    browser = TestClient(api, follow_redirects=False)
    code, verifier = code_for(world.app, world.org, client=browser)
    _, tokens = exchange(world.app, code, verifier)
    response = browser.get("/api/logout", params={"id_token_hint": tokens["id_token"],
                                                  "post_logout_redirect_uri": "https://rp.example/after/x"})
    page = _page(response)
    assert len(page.frames) == 1 and page.links == [] and "You may close this window" in response.text
    assert 'const next = "";' in response.text


def test_the_front_channel_pages_markup_cannot_be_broken_out_of():
    """Whatever a registered URI holds stays an attribute's value or a script's string."""
    response = front_channel_page(['https://rp.example/fc?a="><script>x</script>'],
                                  "https://rp.example/after?s=</script><script>alert(1)</script>&t=1")
    text = response.body.decode()
    assert text.count("<script>") == 1 and text.count("</script>") == 1
    assert 'src="https://rp.example/fc?a=&quot;&gt;&lt;script&gt;x&lt;/script&gt;"' in text
    assert '"https://rp.example/after?s=\\u003c/script\\u003e\\u003cscript\\u003ealert(1)' in text


# --- the application's fields ---

@pytest.mark.parametrize("field, value, message", [
    ("backchannelLogoutUri", "ftp://rp.example/bc", "must be an http or https URL"),
    ("backchannelLogoutUri", "https://rp.example/bc#top", "without a fragment"),
    ("frontchannelLogoutUri", "javascript:alert(1)", "must be an http or https URL"),
    ("frontchannelLogoutUri", "https://0177.0.0.1/front", "0177.0.0.1"),
])
def test_bad_logout_uris_are_refused_and_nothing_is_written(admin, make_org, make_user, field, value, message):
    world = _world(make_org, make_user)
    record = ok_body(admin.get("/api/get-application", params={"id": f"admin/{world.app.name}"}))["data"]
    answer = admin.post("/api/update-application", params={"id": f"admin/{world.app.name}"},
                        json={**record, field: value}).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    stored = ok_body(admin.get("/api/get-application", params={"id": f"admin/{world.app.name}"}))["data"]
    assert stored[field] == ""


def test_the_application_takes_and_shows_its_logout_fields(admin, make_org, make_user):
    world = _world(make_org, make_user)
    ident = f"admin/{world.app.name}"
    record = ok_body(admin.get("/api/get-application", params={"id": ident}))["data"]
    assert (record["backchannelLogoutUri"], record["backchannelLogoutSessionRequired"],
            record["frontchannelLogoutUri"]) == ("", False, "")
    ok_body(admin.post("/api/update-application", params={"id": ident}, json={
        **record, "backchannelLogoutUri": "https://rp.example/bc", "backchannelLogoutSessionRequired": True,
        "frontchannelLogoutUri": "https://rp.example/front"}))
    stored = ok_body(admin.get("/api/get-application", params={"id": ident}))["data"]
    assert (stored["backchannelLogoutUri"], stored["backchannelLogoutSessionRequired"],
            stored["frontchannelLogoutUri"]) == ("https://rp.example/bc", True, "https://rp.example/front")
