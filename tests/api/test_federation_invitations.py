"""Invitation codes on a sign-up through an upstream provider: the sign-up page's
?invitationCode= rides the provider button's start, is kept on the state, and the callback's
sign-up runs the sign-up form's invitation rules (required, quota, bound username), counts the
use with the new user and places it in the invitation's group. A refusal writes nothing; the
sign-in of an account already linked needs no code. /api/login with a provider (OAuth or
wallet) takes the body's invitationCode."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.audit import records
from iam_console.db import session_scope
from iam_console.federation import upstream
from tests.api.test_federation_api import GITHUB_EMAILS, GITHUB_USER, begin, error_of, setup
from tests.conftest import unique
from tests.upstream_stub import UpstreamStub
from tests.wallet import SoftWallet

# this module's own client address: its starts do not spend the per-address start budget
# (60 per 10 minutes) the other upstream tests share
ADDRESS = ("192.0.2.61", 40000)


def browser() -> TestClient:
    return TestClient(api, client=ADDRESS)


REQUIRED = [{"name": "Username", "visible": True, "required": True},
            {"name": "Invitation code", "visible": True, "required": True}]


@pytest.fixture
def github(database):
    with UpstreamStub(user=GITHUB_USER, emails=GITHUB_EMAILS) as stub:
        yield stub


@pytest.fixture
def world(make_org, github):
    """An application whose sign-up requires an invitation code, its GitHub row signing up into
    the group `by-row`; an invitation `spring` (quota 1, group `invited`) and a spent one."""
    org, app, provider = setup(make_org, github, app_fields={"signup_items": REQUIRED},
                               row_fields={"signupGroup": "by-row"})
    with session_scope() as db:
        for group in ("invited", "by-row"):
            db.add(m.Group(owner=org.name, name=group, display_name=group, type="Virtual"))
        db.add(m.Invitation(owner=org.name, name="spring", code="SPRING-1", quota=1, application="All",
                            signup_group=f"{org.name}/invited", state="Active"))
        db.add(m.Invitation(owner=org.name, name="spent", code="SPENT-1", quota=2, used_count=2,
                            application="All", state="Active"))
        db.add(m.Invitation(owner=org.name, name="for-bea", code="BEA-1", quota=5, application="All",
                            username="bea", state="Active"))
    return org, app, provider


def _callback(client: TestClient, location: str):
    state = parse_qs(urlsplit(location).query)["state"][0]
    return client.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)


def _users(org) -> list[m.User]:
    with session_scope() as db:
        return list(db.exec(select(m.User).where(m.User.owner == org.name)).all())


def _used(org, name: str) -> int:
    with session_scope() as db:
        return db.exec(select(m.Invitation.used_count).where(m.Invitation.owner == org.name,
                                                             m.Invitation.name == name)).one()


@pytest.mark.parametrize(("code", "message"), [
    ("", "Invitation code cannot be blank"),
    ("NOPE-1", "Invitation code is invalid"),
    ("SPENT-1", "Invitation code exhausted"),
    ("BEA-1", "Please register using the username corresponding to the invitation code"),  # octocat is not bea
])
def test_a_sign_up_without_a_good_code_is_refused_and_writes_nothing(world, code, message):
    org, app, provider = world
    client = browser()
    extra = {"invitationCode": code} if code else {}
    answer = _callback(client, begin(client, app, provider, method="signup", **extra))
    location = answer.headers["location"]
    assert location.startswith(f"/signup/{app.name}?upstreamError="), location
    assert error_of(location) == message
    assert _users(org) == [] and "iam_session" not in client.cookies
    assert (_used(org, "spring"), _used(org, "spent"), _used(org, "for-bea")) == (0, 2, 0)


def test_a_good_code_signs_up_into_the_invitation_group_and_counts_once(world):
    org, app, provider = world
    client = browser()
    location = begin(client, app, provider, method="signup", invitationCode="SPRING-1")
    with session_scope() as db:  # kept on the state for the callback
        assert db.exec(select(m.UpstreamState.invitation_code).where(
            m.UpstreamState.application == app.name, m.UpstreamState.used.is_(False))).all() == ["SPRING-1"]
    answer = _callback(client, location)
    assert answer.status_code == 302 and "upstreamError" not in answer.headers["location"]
    (user,) = _users(org)
    assert (user.name, user.invitation, user.invitation_code) == ("octocat", "spring", "SPRING-1")
    assert user.groups == [f"{org.name}/invited"]  # the invitation's group wins over the row's
    assert user.third_party_ids == {"github": "583231"} and _used(org, "spring") == 1
    # the linked account signs in again with no code (the quota is spent: a code would be refused)
    again = browser()
    answer = _callback(again, begin(again, app, provider))
    assert "upstreamError" not in answer.headers["location"] and "iam_session" in again.cookies
    assert len(_users(org)) == 1 and _used(org, "spring") == 1


def test_without_an_invitation_group_the_row_group_applies(make_org, github):
    org, app, provider = setup(make_org, github, row_fields={"signupGroup": "by-row"})
    with session_scope() as db:
        db.add(m.Group(owner=org.name, name="by-row", display_name="by-row", type="Virtual"))
        db.add(m.Invitation(owner=org.name, name="plain", code="PLAIN-1", quota=3, application="All",
                            state="Active"))
    client = browser()
    answer = _callback(client, begin(client, app, provider, method="signup", invitationCode="PLAIN-1"))
    assert "upstreamError" not in answer.headers["location"], error_of(answer.headers["location"])
    (user,) = _users(org)
    assert (user.groups, user.invitation) == ([f"{org.name}/by-row"], "plain") and _used(org, "plain") == 1


def test_api_login_with_a_provider_takes_the_body_code(world):
    org, app, provider = world
    client = browser()
    state = parse_qs(urlsplit(begin(client, app, provider, method="signup")).query)["state"][0]
    body = {"application": app.name, "provider": provider, "code": "the-code", "state": state, "type": "login",
            "invitationCode": "SPRING-1"}
    answer = client.post("/api/login", json=body).json()
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/octocat", answer
    assert _used(org, "spring") == 1 and _users(org)[0].invitation == "spring"


def test_a_too_long_code_is_refused_at_the_start(world):
    _org, app, provider = world
    location = begin(browser(), app, provider, method="signup", invitationCode="X" * 101)
    assert error_of(location) == "Invitation code is invalid"


def test_the_code_is_redacted_from_logged_uris():
    assert records.redact_text("/api/federation/start?provider=gh&invitationCode=SPRING-1") == \
        "/api/federation/start?provider=gh&invitationCode=***"


def test_the_provider_buttons_carry_the_code(world):
    _org, app, _provider = world
    with session_scope() as db:
        application = db.exec(select(m.Application).where(m.Application.name == app.name)).one()
        [button] = upstream.buttons(db, application, "signin", invitation_code="SPRING-1")
    assert parse_qs(urlsplit(button["href"]).query)["invitationCode"] == ["SPRING-1"]


def test_a_wallet_sign_up_spends_the_body_code(database):
    org, app = unique("w3inv"), unique("w3invapp")
    with session_scope() as db:
        db.add(m.Organization(owner="admin", name=org, password_type="argon2id", default_application=app))
        db.add(m.Provider(owner=org, name=f"{org}-mm", category="Web3", type="MetaMask"))
        db.add(m.Application(owner="admin", name=app, organization=org, enable_sign_up=True, client_id=unique("c"),
                             client_secret=unique("s"), signup_items=REQUIRED[1:],
                             providers=[{"name": f"{org}-mm", "canSignUp": True, "canSignIn": True}]))
        db.add(m.Invitation(owner=org, name="w3", code="W3-1", quota=1, application="All", state="Active"))
    key = SoftWallet()

    def login(code: str) -> dict:
        client = browser()
        issued = client.post("/api/web3/nonce", json={"organization": org, "provider": f"{org}-mm",
                                                      "address": key.address, "chainId": "0x1"}).json()["data"]
        token = {"address": key.address, "nonce": issued["nonce"], "createAt": issued["createAt"],
                 "typedData": issued["typedData"], "signature": key.sign(issued["typedData"]), "walletType": "MetaMask"}
        return client.post("/api/login", json={"organization": org, "provider": f"{org}-mm", "type": "login",
                                               "code": json.dumps(token), "invitationCode": code}).json()

    refused = login("")
    assert refused["status"] == "error" and refused["msg"] == "Invitation code cannot be blank"
    done = login("W3-1")
    assert done["status"] == "ok", done
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == org)).one()
        assert user.invitation == "w3"
        assert db.exec(select(m.Invitation.used_count).where(m.Invitation.owner == org)).one() == 1
    assert login("")["status"] == "ok"  # signing in again: no code
