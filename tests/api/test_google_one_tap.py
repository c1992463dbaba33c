"""Google One Tap: the state and nonce for the page (bound to the browser), then the credential
(an ID token signed by a local stand-in of Google's keys, IAM_GOOGLE_JWKS) verified by the server:
a good one signs in (and answers a pending authorization request); a forged, replayed, wrong
audience, expired or wrong-nonce one is refused with nothing written."""

from __future__ import annotations

import dataclasses
import time
from urllib.parse import urlencode

import pytest
from fastapi.testclient import TestClient
from joserfc.jwk import RSAKey

from iam_console.api.app import api
from iam_console.core import lookup
from iam_console.db import session_scope
from iam_console.federation import id_tokens, upstream
from tests.api.test_federation_api import GOOGLE_USER, live_states, setup
from tests.api.test_id_tokens import GOOGLE, users_of
from tests.api.test_oauth import REDIRECT
from tests.upstream_stub import UpstreamStub

START, SIGN_IN = "/api/federation/google-one-tap/start", "/api/federation/google-one-tap"


@pytest.fixture
def google(database, monkeypatch):
    id_tokens.forget_keys()
    with UpstreamStub(user=GOOGLE_USER) as stub:
        keys = dataclasses.replace(upstream.settings, google_jwks=stub.base + "/jwks")
        monkeypatch.setattr(upstream, "settings", keys)
        yield stub
    id_tokens.forget_keys()


@pytest.fixture
def one_tap(make_org, google):
    return setup(make_org, google, "Google", row_fields={"rule": "OneTap"})


def start(client, app, provider, **extra) -> dict:
    answer = client.post(START, json={"application": app.name, "provider": provider, **extra}).json()
    assert answer["status"] == "ok", answer
    return answer["data"]


def post(client, app, provider, state, credential):
    return client.post(SIGN_IN, json={"application": app.name, "provider": provider, "state": state,
                                      "credential": credential}).json()


def test_a_good_credential_signs_in_and_a_replay_is_refused(one_tap, google):
    org, app, provider = one_tap
    client = TestClient(api)
    started = start(client, app, provider, **{"from": "/account"})
    assert started["clientId"] == "upstream-client" and started["nonce"] and upstream.COOKIE in client.cookies
    credential = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", started["nonce"]))
    answer = post(client, app, provider, started["state"], credential)
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/gina@example.com", answer
    assert answer["data2"] == "/account"
    assert "iam_session" in client.cookies
    [user] = users_of(org.name)
    assert user.third_party_ids == {"google": "108234"} and user.email == "gina@example.com"
    assert google.calls and all(c.path == "/jwks" for c in google.calls)  # no token or user info call
    again = post(client, app, provider, started["state"], credential)
    assert again["status"] == "error" and again["msg"] == upstream.REPLAYED


@pytest.mark.parametrize(("change", "message"), [
    ("forged", "the ID token has an invalid signature"),
    ("aud", "the ID token is not for this client"),
    ("exp", "the ID token has expired"),
    ("nonce", "the ID token does not carry the nonce of this sign-in"),
    ("iss", "the ID token was issued by"),
])
def test_a_bad_credential_is_refused_with_nothing_written(one_tap, google, change, message):
    org, app, provider = one_tap
    client = TestClient(api)
    started = start(client, app, provider)
    now = int(time.time())
    over = {"aud": {"aud": "another-client"}, "exp": {"exp": now - 600, "iat": now - 1200},
            "nonce": {"nonce": "another-nonce"}, "iss": {"iss": "https://accounts.example.com"}}.get(change, {})
    claims = {**google.signer.claims(GOOGLE, "upstream-client", started["nonce"]), **over}
    key = RSAKey.generate_key(2048) if change == "forged" else None
    credential = google.signer.sign(claims, key=key, kid=google.signer.keys[0].kid)
    answer = post(client, app, provider, started["state"], credential)
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert users_of(org.name) == [] and "iam_session" not in client.cookies


def test_the_state_is_bound_to_the_browser_and_the_route(one_tap, google):
    _org, app, provider = one_tap
    client = TestClient(api)
    started = start(client, app, provider)
    credential = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", started["nonce"]))
    other = post(TestClient(api), app, provider, started["state"], credential)
    assert other["status"] == "error" and other["msg"] == upstream.OTHER_BROWSER
    # a One Tap state is not a callback's, nor a callback's state a One Tap one
    refused = client.get("/callback", params={"code": "c", "state": start(client, app, provider)["state"]},
                         follow_redirects=False)
    assert refused.status_code == 302 and "upstreamError" in refused.headers["location"]
    assert google.to("/token") == []
    forged = post(client, app, provider, "no-such-state", credential)
    assert forged["status"] == "error" and forged["msg"] == upstream.UNKNOWN_STATE
    foreign = client.post(SIGN_IN, json={"application": app.name, "provider": provider, "state": started["state"],
                                         "credential": credential}, headers={"Origin": "https://evil.example"}).json()
    assert foreign["status"] == "error" and "origin" in foreign["msg"]


def test_start_needs_the_one_tap_rule(make_org, google):
    _org, app, provider = setup(make_org, google, "Google", row_fields={"rule": "Default"})
    before = live_states()
    answer = TestClient(api).post(START, json={"application": app.name, "provider": provider}).json()
    assert answer["status"] == "error" and answer["msg"] == upstream.NOT_ONE_TAP % provider
    assert live_states() == before
    _org, app, provider = setup(make_org, google, "Google", row_fields={"rule": "One Tap"})  # the former value
    assert start(TestClient(api), app, provider)["nonce"]
    _org, app, provider = setup(make_org, google, "Google", row_fields={"rule": "OneTap", "canSignIn": False})
    answer = TestClient(api).post(START, json={"application": app.name, "provider": provider}).json()
    assert answer["status"] == "error" and "cannot be used to sign in" in answer["msg"]


def test_an_authorization_request_is_answered_with_a_code(one_tap, google):
    _org, app, provider = one_tap
    authorize = urlencode({"client_id": app.client_id, "response_type": "code", "redirect_uri": REDIRECT,
                           "scope": "openid", "state": "client-state"})
    client = TestClient(api)
    started = start(client, app, provider, authorize=authorize)
    credential = google.signer.sign(google.signer.claims(GOOGLE, "upstream-client", started["nonce"]))
    answer = post(client, app, provider, started["state"], credential)
    assert answer["status"] == "ok" and answer["data2"].startswith(REDIRECT + "?code="), answer
    assert answer["data2"].endswith("&state=client-state")


def test_the_pages_script_only_for_a_one_tap_row(make_org, google):
    _org, plain, _provider = setup(make_org, google, "Google", row_fields={"rule": "Default"})
    _org, tapped, provider = setup(make_org, google, "Google", row_fields={"rule": "OneTap"})
    with session_scope() as db:
        assert upstream.one_tap_script(db, lookup.application(db, plain.name)) == ""
        script = upstream.one_tap_script(db, lookup.application(db, tapped.name), return_to="https://evil.example/")
    assert "window.iamGoogleOneTap(" in script and upstream.settings.google_gsi_script in script
    assert f'"provider": "{provider}"' in script and "evil.example" not in script


def test_a_saved_application_stores_the_former_one_tap_rule_as_casdoor_s(make_org, google, admin):
    _org, app, provider = setup(make_org, google, "Google", row_fields={"rule": "One Tap"})
    record = admin.get("/api/get-application", params={"id": f"admin/{app.name}"}).json()["data"]
    assert admin.post("/api/update-application", params={"id": f"admin/{app.name}"},
                      json={**record, "displayName": "Saved again"}).json()["status"] == "ok"
    saved = admin.get("/api/get-application", params={"id": f"admin/{app.name}"}).json()["data"]
    assert [row["rule"] for row in saved["providers"] if row["name"] == provider] == ["OneTap"]
