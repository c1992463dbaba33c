"""Every way a session ends tells its applications (docs/api.md, "Logout"; oauth/logout.py tell):
an admin's delete-session, the scheduler's clean-up of expired sessions, another account signing
in over it in the same browser, sso-logout of every session, a password change, the user deleted
or forbidden. Each is done over HTTP (or by the scheduler's own job) and the notice is received by
a local sink, its logout token verified with joserfc against the published key set.
backchannelLogoutSessionRequired: sid in every ID token of the application, and never a notice
without one; otherwise a notice with sub alone for the user's tokens of no session."""

from __future__ import annotations

import json
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select, update

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.features import end_expired_sessions
from iam_console.models.base import utcnow
from iam_console.oauth import logout
from tests.api.conftest import ok_body, sign_in
from tests.api.oauth_world import SDK_GRANTS, USER
from tests.api.test_logout import (  # noqa: F401  the fixtures
    DELIVERY_SECONDS,
    ISSUER,
    _page,
    _segment,
    jwks_of,
    notices,
    session_id_of,
    sink,
    verified_logout_token,
    worker,
)
from tests.api.test_oauth import PASSWORD, code_for, exchange, make_app, token_call
from tests.conftest import unique

OTHER = "bob"


@pytest.fixture
def world(make_org, make_user, sink):  # noqa: F811
    """An organization with alice and bob, and an application whose back-channel URI is the sink."""
    org = make_org().name
    alice = make_user(owner=org, name=USER, password=PASSWORD, email="alice@example.com")
    bob = make_user(owner=org, name=OTHER, password=PASSWORD, email="bob@example.com")
    app = _app(org, sink)
    return org, alice, bob, app


def _app(org: str, sink, **fields) -> m.Application:  # noqa: F811
    return make_app(org, grant_types=SDK_GRANTS, backchannel_logout_uri=f"{sink.url}/bc/{unique('rp')}", **fields)


def _path(app: m.Application) -> str:
    return urlsplit(app.backchannel_logout_uri).path


def _signed_in(app: m.Application, org: str, browser: TestClient | None = None) -> tuple[TestClient, dict]:
    """A browser signed in to the application by the code flow, and the ID token's claims."""
    browser = browser or TestClient(api)
    code, verifier = code_for(app, org, client=browser)
    _, tokens = exchange(app, code, verifier)
    return browser, _segment(tokens["id_token"], 1)


def _password_token(app: m.Application) -> dict:
    """The claims of an ID token given by the password grant (no browser session)."""
    _, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                           username=USER, password=PASSWORD, scope="openid")
    return _segment(tokens["id_token"], 1)


def received(sink, app: m.Application, count: int = 1) -> list[dict]:  # noqa: F811
    """The claims of the application's first `count` logout tokens, each verified."""
    sink.wait_at(_path(app), count=count, timeout=DELIVERY_SECONDS)
    jwks = jwks_of(app)
    calls = [c for c in list(sink.calls) if c.path == _path(app)]
    claims = [verified_logout_token(c.fields["logout_token"], jwks, app.client_id)[1] for c in calls]
    for one in claims:
        assert one["events"] == {logout.EVENT_CLAIM: {}} and "nonce" not in one
    return claims


def told(app: m.Application) -> list[dict]:
    """The claims of the notices queued for the application (written in the ending's transaction)."""
    return [json.loads(e.payload)["claims"] for e in notices(app.name)]


def test_an_admins_delete_session_tells_the_sessions_applications(worker, sink, admin, world):  # noqa: F811
    org, alice, _, app = world
    browser, claims = _signed_in(app, org)
    gone = admin.post("/api/delete-session", json={"owner": org, "name": USER, "application": app.name}).json()
    assert gone["data"] == "Affected"
    assert browser.get("/api/get-account").json()["msg"] == "Please login first"
    [notice] = received(sink, app)
    assert (notice["sub"], notice["sid"], notice["aud"]) == (alice.uuid, claims["sid"], app.client_id)


def test_an_expired_session_is_ended_by_the_clean_up_and_told(worker, sink, world):  # noqa: F811
    org, alice, _, app = world
    _, claims = _signed_in(app, org)
    live, _ = _signed_in(app, org)  # another browser's session, not expired: it stays
    with session_scope() as db:
        db.exec(update(m.AuthSession).where(m.AuthSession.session_id == claims["sid"])
                .values(expires_at=utcnow() - timedelta(minutes=1)))
    end_expired_sessions()  # the scheduler's job (features.py)
    [notice] = received(sink, app)
    assert (notice["sub"], notice["sid"]) == (alice.uuid, claims["sid"])
    with session_scope() as db:
        left = db.exec(select(m.AuthSession.session_id).where(m.AuthSession.owner == org)).all()
    assert left == [session_id_of(live)]
    end_expired_sessions()  # nothing more to end: no second notice
    assert len(told(app)) == 1


def test_another_account_signing_in_over_a_session_ends_it(worker, sink, world):  # noqa: F811
    org, alice, _, app = world
    browser, claims = _signed_in(app, org)
    # the same account again in that browser: the session goes on, nobody is told
    _, again = _signed_in(app, org, browser)
    assert again["sid"] == claims["sid"] and told(app) == []
    ok_body(browser.post("/api/login", json={"application": app.name, "organization": org, "username": OTHER,
                                            "password": PASSWORD}))
    assert browser.get("/api/get-account").json()["data"]["name"] == OTHER
    [notice] = received(sink, app)
    assert (notice["sub"], notice["sid"]) == (alice.uuid, claims["sid"])


def test_a_password_change_tells_the_other_sessions_not_the_changers(worker, sink, world):  # noqa: F811
    org, alice, _, app = world
    own, own_claims = _signed_in(app, org)
    _, other_claims = _signed_in(app, org)
    _password_token(app)  # a token of no session: a sub-only notice would end the kept session too
    ok_body(own.post("/api/set-password", data={"userOwner": org, "userName": USER, "oldPassword": PASSWORD,
                                                "newPassword": "An0ther-pass-phrase"}))
    assert own.get("/api/get-account").json()["data"]["name"] == USER
    [notice] = received(sink, app)
    assert (notice["sub"], notice["sid"]) == (alice.uuid, other_claims["sid"]) != (alice.uuid, own_claims["sid"])
    assert len(told(app)) == 1


def test_sso_logout_of_every_session_tells_each_and_sub_alone_for_tokens_of_no_session(
        worker, sink, world, make_org):  # noqa: F811
    org, alice, _, app = world
    first, one = _signed_in(app, org)
    _, two = _signed_in(app, org)
    assert "sid" not in _password_token(app)
    ok_body(first.post("/api/sso-logout"))
    got = received(sink, app, count=3)
    assert sorted((c["sub"], c.get("sid", "")) for c in got) == sorted(
        [(alice.uuid, one["sid"]), (alice.uuid, two["sid"]), (alice.uuid, "")])


def test_session_required_puts_sid_in_every_id_token_and_never_sends_without(worker, sink, world):  # noqa: F811
    org, alice, _, _ = world
    strict = _app(org, sink, backchannel_logout_session_required=True)
    granted = _password_token(strict)  # no browser session: a session of its own
    assert len(granted["sid"]) == 32
    browser, claims = _signed_in(strict, org)
    assert claims["sid"] != granted["sid"]
    ok_body(browser.post("/api/sso-logout"))
    got = received(sink, strict, count=2)
    assert sorted(c["sid"] for c in got) == sorted([granted["sid"], claims["sid"]])
    assert all(c["sub"] == alice.uuid for c in got) and len(told(strict)) == 2


def test_a_deleted_user_is_told_of_by_sid_and_by_sub(worker, sink, admin, world):  # noqa: F811
    org, alice, _, app = world
    strict = _app(org, sink, backchannel_logout_session_required=True)
    _, claims = _signed_in(app, org)
    _password_token(app)
    _password_token(strict)
    ok_body(admin.post("/api/delete-user", json={"owner": org, "name": USER}))
    got = received(sink, app, count=2)
    assert sorted(c.get("sid", "") for c in got) == ["", claims["sid"]] and {c["sub"] for c in got} == {alice.uuid}
    [strict_notice] = received(sink, strict)
    assert strict_notice["sid"] and strict_notice["sub"] == alice.uuid  # its grant's session: never sub alone
    assert len(told(strict)) == 1


def test_a_forbidden_user_is_signed_out_and_told(worker, sink, admin, world):  # noqa: F811
    org, alice, _, app = world
    browser, claims = _signed_in(app, org)
    user = admin.get("/api/get-user", params={"id": f"{org}/{USER}"}).json()["data"]
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/{USER}"}, json={**user, "isForbidden": True}))
    assert browser.get("/api/get-account").json()["status"] == "error"
    [notice] = received(sink, app)
    assert (notice["sub"], notice["sid"]) == (alice.uuid, claims["sid"])
    with session_scope() as db:
        assert db.exec(select(m.AuthSession).where(m.AuthSession.owner == org)).all() == []
    # saved again, still forbidden: nothing more is ended or told
    user = admin.get("/api/get-user", params={"id": f"{org}/{USER}"}).json()["data"]
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/{USER}"}, json={**user, "displayName": "A"}))
    assert len(told(app)) == 1


def test_a_refused_delete_session_tells_nobody(worker, sink, make_org, make_user, world):  # noqa: F811
    org, _, _, app = world
    _signed_in(app, org)
    outsider_org = make_org().name
    make_user(owner=outsider_org, name="mallory", password=PASSWORD, is_admin=True)
    mallory = sign_in(outsider_org, "mallory", PASSWORD)
    answer = mallory.post("/api/delete-session", json={"owner": org, "name": USER, "application": app.name}).json()
    assert answer["status"] == "error" or answer["data"] == "Unaffected"
    assert told(app) == []


# --- the front-channel page for sign-outs that are browser navigations ---

NAVIGATION = {"Sec-Fetch-Mode": "navigate", "Sec-Fetch-Dest": "document"}  # what a browser sends (Fetch Metadata)


def _frames_of(response) -> list[dict[str, list[str]]]:
    return [parse_qs(urlsplit(frame["src"]).query) for frame in _page(response).frames]


def test_the_consoles_sign_out_by_navigation_frames_the_sessions_applications(make_org, make_user):
    org = make_org().name
    make_user(owner=org, name=USER, password=PASSWORD)
    app = make_app(org, grant_types=SDK_GRANTS, frontchannel_logout_uri="https://rp.example/fc")
    browser = TestClient(api, follow_redirects=False)
    _, claims = _signed_in(app, org, browser)
    response = browser.post("/api/logout", headers=NAVIGATION)
    assert _frames_of(response) == [{"iss": [ISSUER], "sid": [claims["sid"]]}]
    assert _page(response).links == [f"/login/{org}"]  # where the console goes after signing out
    assert "frame-src https://rp.example;" in response.headers["content-security-policy"]
    assert browser.get("/api/get-account").json()["msg"] == "Please login first"
    # nothing to frame (no session any more): on to the sign-in page at once
    again = browser.post("/api/logout", headers=NAVIGATION)
    assert (again.status_code, again.headers["location"]) == (303, "/")


def test_a_sign_out_that_is_not_a_navigation_answers_the_envelope(make_org, make_user):
    org = make_org().name
    make_user(owner=org, name=USER, password=PASSWORD)
    app = make_app(org, grant_types=SDK_GRANTS, frontchannel_logout_uri="https://rp.example/fc")
    browser, _ = _signed_in(app, org)
    answer = ok_body(browser.post("/api/logout", headers={"Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}))
    assert answer["data"] == f"{org}/{USER}"


def test_a_navigation_without_front_channel_uris_is_redirected(make_org, make_user):
    org = make_org().name
    make_user(owner=org, name=USER, password=PASSWORD)
    app = make_app(org, grant_types=SDK_GRANTS)
    browser = TestClient(api, follow_redirects=False)
    _signed_in(app, org, browser)
    response = browser.post("/api/logout", headers=NAVIGATION)
    assert (response.status_code, response.headers["location"]) == (303, f"/login/{org}")
    assert response.headers["cache-control"] == "no-store"


def test_sso_logout_by_navigation_frames_every_session_of_the_user(make_org, make_user):
    org = make_org().name
    make_user(owner=org, name=USER, password=PASSWORD)
    app = make_app(org, grant_types=SDK_GRANTS, frontchannel_logout_uri="https://rp.example/fc")
    browser = TestClient(api, follow_redirects=False)
    _, mine = _signed_in(app, org, browser)
    _, elsewhere = _signed_in(app, org)
    response = browser.post("/api/sso-logout", headers=NAVIGATION)
    assert sorted(f["sid"][0] for f in _frames_of(response)) == sorted([mine["sid"], elsewhere["sid"]])
    assert _page(response).links == [f"/login/{org}"]
    # logoutAll=false: the caller's own session alone
    _, mine = _signed_in(app, org, browser)
    _signed_in(app, org)
    response = browser.post("/api/sso-logout", params={"logoutAll": "false"}, headers=NAVIGATION)
    assert [f["sid"] for f in _frames_of(response)] == [[mine["sid"]]]


@pytest.mark.parametrize("required", [False, True])
def test_delete_session_with_no_sid_known_to_its_application_tells_it_by_sub_alone_unless_required(
        worker, sink, admin, world, required):  # noqa: F811
    org, alice, _, _ = world
    app = _app(org, sink, backchannel_logout_session_required=required)
    browser = TestClient(api)  # signed in through the application's page, no token given: no sid known to it
    ok_body(browser.post("/api/login", json={"application": app.name, "organization": org, "username": USER,
                                            "password": PASSWORD}))
    gone = admin.post("/api/delete-session", json={"owner": org, "name": USER, "application": app.name}).json()
    assert gone["data"] == "Affected"
    assert browser.get("/api/get-account").json()["msg"] == "Please login first"
    if required:
        assert told(app) == []
    else:
        [notice] = received(sink, app)
        assert notice["sub"] == alice.uuid and "sid" not in notice


def test_an_admins_password_change_tells_every_session_and_by_sub_alone(worker, sink, admin, world):  # noqa: F811
    org, alice, _, app = world
    _, claims = _signed_in(app, org)
    _password_token(app)
    ok_body(admin.post("/api/set-password", data={"userOwner": org, "userName": USER,
                                                  "newPassword": "An0ther-pass-phrase"}))
    got = received(sink, app, count=2)
    assert sorted(c.get("sid", "") for c in got) == ["", claims["sid"]] and {c["sub"] for c in got} == {alice.uuid}
