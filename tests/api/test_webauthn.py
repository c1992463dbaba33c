"""WebAuthn over HTTP with a software authenticator (tests/authenticator.py): registration
on the signed-in user's own account, sign-in answering as /api/login does, delete-credential,
and the attacks: another origin or rp id, a replayed or stale challenge, an unknown or
another user's credential, a sign count that does not grow, no user verification, an
application that does not allow WebAuthn, and the failed sign-in limits."""

from __future__ import annotations

import itertools
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.models.base import utcnow
from iam_console.signin import webauthn
from tests.api.test_oauth import REDIRECT, make_app
from tests.authenticator import SoftAuthenticator, b64url
from tests.conftest import reload_user

ORIGIN = "http://testserver"  # IAM_ORIGIN of the test session (tests/conftest.py)
PASSWORD = "Webauthn-pass-1"
_addresses = itertools.count(1)
# creation options no server gave: for credentials made on the side
UNASKED = {"publicKey": {"challenge": b64url(b"made up"), "rp": {"id": "testserver"}, "user": {"id": b64url(b"x")}}}


def client() -> TestClient:
    """A browser of its own, from an address of its own (the per-address limit is not shared)."""
    n = next(_addresses)
    address = f"10.9.{n // 250}.{n % 250 + 1}"
    browser = TestClient(api, client=(address, 50000))
    browser.address = address
    return browser


def signed_in(org: str, name: str) -> TestClient:
    browser = client()
    body = browser.post("/api/login", json={"organization": org, "username": name, "password": PASSWORD}).json()
    assert body["status"] == "ok", body
    return browser


@pytest.fixture
def org(make_org, make_user):
    organization = make_org()
    for name in ("alice", "bob"):
        make_user(owner=organization.name, name=name, password=PASSWORD, display_name=name.title())
    return organization.name


def register(browser: TestClient, authenticator: SoftAuthenticator, name: str = "", **knobs) -> dict:
    options = browser.get("/api/webauthn/signup/begin").json()
    assert "publicKey" in options, options
    answer, _ = authenticator.create(options, **knobs)
    return browser.post("/api/webauthn/signup/finish", params={"name": name} if name else {}, json=answer).json()


def sign_in(browser: TestClient, authenticator: SoftAuthenticator, org: str, name: str, params: dict | None = None,
            **knobs) -> dict:
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": name}).json()
    assert "publicKey" in options, options
    return browser.post("/api/webauthn/signin/finish", params=params or {},
                        json=authenticator.get(options, **knobs)).json()


def credentials(org: str, name: str) -> list[dict]:
    return reload_user(org, name).webauthn_credentials


def test_register_then_sign_in_like_a_password_sign_in(org):
    alice = signed_in(org, "alice")
    options = alice.get("/api/webauthn/signup/begin").json()["publicKey"]
    assert options["rp"]["id"] == "testserver"
    assert options["authenticatorSelection"]["userVerification"] == "required"
    assert options["user"]["id"] == b64url(reload_user(org, "alice").uuid.encode())
    assert options["excludeCredentials"] == []

    key = SoftAuthenticator(ORIGIN)
    added = register(alice, key, name="My laptop")
    assert added["status"] == "ok" and added["data"]["name"] == "My laptop", added
    [stored] = credentials(org, "alice")
    assert stored["Name"] == "My laptop" and stored["ID"] == added["data"]["id"] and stored["PublicKey"]
    assert stored["Authenticator"]["SignCount"] == 0 and stored["Transport"] == ["internal"] and stored["CreatedTime"]
    # the second registration excludes the first credential
    again = alice.get("/api/webauthn/signup/begin").json()["publicKey"]
    assert [c["id"] for c in again["excludeCredentials"]] == [b64url(key.credentials[0].credential_id)]

    browser = client()
    begun = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"})
    assert "httponly" in begun.headers["set-cookie"].lower()
    allowed = begun.json()["publicKey"]
    assert allowed["rpId"] == "testserver" and allowed["userVerification"] == "required"
    assert [c["id"] for c in allowed["allowCredentials"]] == [b64url(key.credentials[0].credential_id)]
    finished = browser.post("/api/webauthn/signin/finish", json=key.get(begun.json()))
    body = finished.json()
    assert set(body) == {"status", "msg", "sub", "name", "data", "data2", "data3"}
    assert body["status"] == "ok" and body["data"] == f"{org}/alice", body
    assert "iam_session=" in finished.headers["set-cookie"]
    assert browser.get("/api/get-account").json()["data"]["name"] == "alice"
    assert credentials(org, "alice")[0]["Authenticator"]["SignCount"] == 1
    with session_scope() as db:
        records = db.exec(select(m.Record).where(m.Record.user == "alice", m.Record.organization == org,
                                                 m.Record.action == "login")).all()
    # the same record as a password sign-in's, but for the method
    assert len(records) == 2 and records[0].request_uri == records[1].request_uri == "/api/login"
    assert '"signinMethod": "Password"' in records[0].object and '"signinMethod": "WebAuthn"' in records[1].object
    # the next sign-in counts on
    assert sign_in(client(), key, org, "alice")["status"] == "ok"
    assert credentials(org, "alice")[0]["Authenticator"]["SignCount"] == 2


def test_sign_in_answers_an_authorization_request_with_a_code(org):
    app = make_app(org, signin_methods=[{"name": "WebAuthn", "displayName": "WebAuthn", "rule": "None"}])
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    query = {"clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
             "state": "st"}
    body = sign_in(client(), key, org, "alice", params=query)
    assert body["status"] == "ok" and body["data2"].startswith(REDIRECT + "?code=" + body["data"]), body
    # an application that does not list WebAuthn refuses it, whatever begin was for
    closed = make_app(org, signin_methods=[{"name": "Password", "displayName": "Password", "rule": "All"}])
    body = sign_in(client(), key, org, "alice", params={**query, "clientId": closed.client_id})
    assert body["status"] == "error" and "WebAuthn is not enabled" in body["msg"]


def test_only_applications_allowing_webauthn_take_it(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    closed = make_app(org, signin_methods=[{"name": "Password", "displayName": "Password", "rule": "All"}])
    begun = client().get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice",
                                                              "application": closed.name}).json()
    assert begun["status"] == "error" and begun["msg"] == \
        "The login method: login with WebAuthn is not enabled for the application"
    flagged = make_app(org, signin_methods=[], enable_web_authn=True)
    browser = client()
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice",
                                                                "application": flagged.name}).json()
    assert browser.post("/api/webauthn/signin/finish", json=key.get(options)).json()["status"] == "ok"


@pytest.mark.parametrize(("knobs", "message"), [
    ({"origin": "http://evil.example"}, "origin"),
    ({"rp_id": "evil.example"}, "RP ID"),
    ({"challenge": b64url(b"a challenge of my own choosing!!")}, "challenge"),
    ({"user_verified": False}, "User verification"),
])
def test_a_bad_registration_stores_nothing(org, knobs, message):
    body = register(signed_in(org, "alice"), SoftAuthenticator(ORIGIN), **knobs)
    assert body["status"] == "error" and message.lower() in body["msg"].lower(), body
    assert credentials(org, "alice") == []


@pytest.mark.parametrize(("knobs", "message"), [
    ({"origin": "http://evil.example"}, "origin"),
    ({"rp_id": "evil.example"}, "RP ID"),
    ({"challenge": b64url(b"a challenge of my own choosing!!")}, "challenge"),
    ({"user_verified": False}, "User verification"),
])
def test_a_bad_assertion_signs_nobody_in(org, knobs, message):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    browser = client()
    body = sign_in(browser, key, org, "alice", **knobs)
    assert body["status"] == "error" and message.lower() in body["msg"].lower(), body
    assert browser.get("/api/get-account").json()["status"] == "error"
    assert reload_user(org, "alice").signin_wrong_times == 1


def test_a_challenge_serves_once(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    browser = client()
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    answer = key.get(options)
    assert browser.post("/api/webauthn/signin/finish", json=answer).json()["status"] == "ok"
    replayed = browser.post("/api/webauthn/signin/finish", json=answer).json()
    assert replayed["msg"] == "Please call WebAuthnSigninBegin first"
    # nor does an old answer fit a new challenge
    browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"})
    assert "challenge" in browser.post("/api/webauthn/signin/finish", json=answer).json()["msg"]


def test_a_stale_or_foreign_challenge_is_refused(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    browser = client()
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    with session_scope() as db:
        for row in db.exec(select(m.WebAuthnChallenge).where(m.WebAuthnChallenge.user_name == "alice",
                                                             m.WebAuthnChallenge.owner == org)):
            row.expires_at = utcnow() - timedelta(seconds=1)
            db.add(row)
    assert browser.post("/api/webauthn/signin/finish", json=key.get(options)).json()["msg"] == \
        "Please call WebAuthnSigninBegin first"
    # without the begin's cookie, the answer finds no challenge
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    assert client().post("/api/webauthn/signin/finish", json=key.get(options)).json()["msg"] == \
        "Please call WebAuthnSigninBegin first"
    # a sign-in challenge is no registration challenge
    alice = signed_in(org, "alice")
    options = alice.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    answer, _ = SoftAuthenticator(ORIGIN).create(UNASKED, challenge=options["publicKey"]["challenge"])
    assert alice.post("/api/webauthn/signup/finish", json=answer).json()["msg"] == \
        "Please call WebAuthnSignupBegin first"


def test_a_registration_challenge_belongs_to_its_session(org):
    first, second = signed_in(org, "alice"), signed_in(org, "alice")
    options = first.get("/api/webauthn/signup/begin").json()
    answer, _ = SoftAuthenticator(ORIGIN).create(options)
    second.cookies.set("iam_webauthn", first.cookies.get("iam_webauthn"), path="/api/webauthn")
    assert second.post("/api/webauthn/signup/finish", json=answer).json()["msg"] == \
        "Please call WebAuthnSignupBegin first"
    assert credentials(org, "alice") == []


def test_unknown_and_foreign_credentials_are_refused(org):
    alice_key, bob_key = SoftAuthenticator(ORIGIN), SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), alice_key)["status"] == "ok"
    assert register(signed_in(org, "bob"), bob_key)["status"] == "ok"
    # bob's credential offered for alice's sign-in
    body = sign_in(client(), bob_key, org, "alice")
    assert body["status"] == "error" and "not registered for the user" in body["msg"]
    # a credential nobody registered
    stranger = SoftAuthenticator(ORIGIN)
    stranger.create(UNASKED)
    body = sign_in(client(), stranger, org, "alice")
    assert body["status"] == "error" and "not registered for the user" in body["msg"]
    # alice's own credential claiming to be bob's
    body = sign_in(client(), alice_key, org, "alice", user_handle=reload_user(org, "bob").uuid.encode())
    assert body["status"] == "error" and "not registered for the user" in body["msg"]
    assert reload_user(org, "alice").signin_wrong_times == 3


def test_a_sign_count_that_does_not_grow_is_a_cloned_authenticator(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    assert sign_in(client(), key, org, "alice", sign_count=5)["status"] == "ok"
    for count in (5, 4):
        body = sign_in(client(), key, org, "alice", sign_count=count)
        assert body["status"] == "error" and "sign count" in body["msg"].lower(), body
    assert credentials(org, "alice")[0]["Authenticator"]["SignCount"] == 5


def test_the_failed_sign_in_limit_freezes_the_account(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    answers = [sign_in(client(), key, org, "alice", origin="http://evil.example")["msg"] for _ in range(5)]
    assert answers[-1].startswith("You have entered the wrong password or code too many times")
    # now even a good assertion waits, and so does begin
    begun = client().get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    assert begun["msg"].startswith("You have entered the wrong password or code too many times")


def test_one_address_beginning_too_many_ceremonies_is_stopped(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    attacker = client()
    for _ in range(webauthn.MAX_CEREMONIES_PER_ADDRESS - 1):  # the registration's begin came from elsewhere
        assert "publicKey" in TestClient(api, client=(attacker.address, 1)).get(
            "/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    assert "publicKey" in attacker.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    refused = attacker.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    assert refused["msg"] == "Too many WebAuthn requests from this address, please try again later"
    # another address is not held back
    assert sign_in(client(), key, org, "alice")["status"] == "ok"
    # and this address is free again once its ceremonies have expired
    with session_scope() as db:
        for row in db.exec(select(m.WebAuthnChallenge).where(m.WebAuthnChallenge.client_ip == attacker.address)):
            row.expires_at = utcnow() - timedelta(seconds=1)
            db.add(row)
    assert sign_in(attacker, key, org, "alice")["status"] == "ok"


def test_signup_and_delete_are_for_the_signed_in_user_only(org):
    anonymous = client()
    assert anonymous.get("/api/webauthn/signup/begin").json()["msg"] == "Please login first"
    assert anonymous.post("/api/webauthn/signup/finish", json={}).json()["msg"] == "Please login first"
    assert anonymous.post("/api/webauthn/delete-credential", data={"credentialID": "x"}).json()["msg"] == \
        "Please login first"
    alice, bob = signed_in(org, "alice"), signed_in(org, "bob")
    assert register(alice, SoftAuthenticator(ORIGIN))["status"] == "ok"
    credential_id = credentials(org, "alice")[0]["ID"]
    # bob names alice's credential: nothing of alice's changes
    assert bob.post("/api/webauthn/delete-credential", data={"credentialID": credential_id}).json()["data"] == \
        "Unaffected"
    assert len(credentials(org, "alice")) == 1
    assert alice.post("/api/webauthn/delete-credential", data={"credentialID": credential_id}).json()["data"] == \
        "Affected"
    assert credentials(org, "alice") == []
    assert alice.post("/api/webauthn/delete-credential", json={}).json()["msg"] == "The credential ID is missing"


def test_bad_input_gets_a_clear_error(org):
    key = SoftAuthenticator(ORIGIN)
    alice = signed_in(org, "alice")
    assert register(alice, key)["status"] == "ok"
    browser = client()
    def begin(**params) -> str:
        return browser.get("/api/webauthn/signin/begin", params={"owner": org, **params}).json()["msg"]

    assert begin() == "Please input your username"
    assert "too long" in begin(name="x" * 101)
    assert begin(name="alice", application="no-such-app") == "The application: no-such-app does not exist"
    browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"})
    for body in (b"not json", b"[1, 2]", b'{"id": "x"}', b'{"id": 1, "rawId": "x", "response": {}}'):
        answer = browser.post("/api/webauthn/signin/finish", content=body).json()
        assert answer["status"] == "error" and answer["msg"], (body, answer)
        browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"})
    options = alice.get("/api/webauthn/signup/begin").json()
    answer, _ = SoftAuthenticator(ORIGIN).create(options)
    long_name = alice.post("/api/webauthn/signup/finish", params={"name": "n" * 101}, json=answer).json()
    assert long_name["status"] == "error" and "too long" in long_name["msg"]
    assert len(credentials(org, "alice")) == 1


def test_a_forbidden_user_cannot_sign_in(org):
    key = SoftAuthenticator(ORIGIN)
    assert register(signed_in(org, "alice"), key)["status"] == "ok"
    browser = client()
    options = browser.get("/api/webauthn/signin/begin", params={"owner": org, "name": "alice"}).json()
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org, m.User.name == "alice")).one()
        user.is_forbidden = True
        db.add(user)
    body = browser.post("/api/webauthn/signin/finish", json=key.get(options)).json()
    assert body["msg"] == "The user is forbidden to sign in, please contact the administrator"
