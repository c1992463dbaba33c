"""The prompt after sign-in (signin/prompt.py): a sign-in through an application whose prompted
items the account has not answered, or whose prompted provider rows it has not linked, goes to
/prompt first; the answers pass sign-up's checks and only the asked items are written; a link
started there comes back there."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.signin import prompt
from tests.api.test_oauth import REDIRECT, make_app
from tests.conftest import reload_user

PASSWORD = "Prompt-pass-1"
ITEMS = [{"name": "Email", "visible": True, "prompted": True, "rule": "No verification"},
         {"name": "Affiliation", "visible": True, "prompted": True},
         {"name": "Team", "visible": True, "prompted": True, "type": "Input", "regex": "[A-Z][a-z]+"},
         {"name": "Bio", "visible": False, "prompted": True},
         {"name": "Password", "visible": True, "prompted": True}]


@pytest.fixture
def world(make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name, name="pat", password=PASSWORD, affiliation="Acme")
    make_user(owner=org.name, name="other", email="taken@corp.test")
    app = make_app(org.name, signup_items=ITEMS, grant_types=["authorization_code"])
    return org, user, app


def test_a_sign_in_through_the_application_asks_first(world):
    org, user, app = world
    query = {"clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
             "state": "s1"}
    answer = TestClient(api).post("/api/login", params=query, json={
        "application": app.name, "organization": org.name, "username": "pat", "password": PASSWORD}).json()
    assert answer["status"] == "ok" and answer["data2"].startswith(f"/prompt/{app.name}?clientId="), answer
    with session_scope() as db:
        pat = reload_user(user.owner, user.name)
        asked = [item["name"] for item in prompt.missing(db.get(m.Application, app.pk), pat)]
    assert asked == ["Email", "Team"]  # Affiliation answered, Bio hidden, Password never asked
    with session_scope() as db:
        prompt.answer(db, app.name, db.exec(select(m.User).where(m.User.pk == user.pk)).one(),
                      {"Email": "Pat@Corp.test", "Team": "Blue", "Affiliation": "ignored", "Bio": "ignored"})
    again = TestClient(api).post("/api/login", params=query, json={
        "application": app.name, "organization": org.name, "username": "pat", "password": PASSWORD}).json()
    assert again["data2"].startswith(f"{REDIRECT}?code="), again
    pat = reload_user(user.owner, user.name)
    assert (pat.email, pat.affiliation, pat.bio, pat.properties) == ("pat@corp.test", "Acme", "", {"Team": "Blue"})


@pytest.mark.parametrize(("values", "message"), [
    ({"Email": "taken@corp.test", "Team": "Blue"}, "Email already exists"),
    ({"Email": "not-an-email", "Team": "Blue"}, "Email is invalid"),
    ({"Email": "ok@corp.test", "Team": "blue"}, "doesn't match the signup item regex"),
    ({"Email": "ok@corp.test"}, "Please input your Team!"),
])
def test_bad_answers_write_nothing(world, values, message):
    _, user, app = world
    with session_scope() as db, pytest.raises(ServiceError, match=message):
        prompt.answer(db, app.name, db.exec(select(m.User).where(m.User.pk == user.pk)).one(), values)
    assert reload_user(user.owner, user.name).email == ""


def test_a_prompted_provider_row_sends_the_sign_in_to_the_prompt_until_linked(make_org, make_user):
    from urllib.parse import parse_qs, urlsplit

    from tests.api.test_federation_api import GITHUB_EMAILS, GITHUB_USER, row
    from tests.upstream_stub import UpstreamStub

    org = make_org()
    make_user(owner=org.name, name="lee", password=PASSWORD)
    with UpstreamStub(user=GITHUB_USER, emails=GITHUB_EMAILS) as stub:
        with session_scope() as db:
            db.add(m.Provider(owner=org.name, name=f"{org.name}-gh", category="OAuth", type="GitHub",
                              client_id="c", client_secret="s", custom_auth_url=stub.base + "/login/oauth/authorize",
                              custom_token_url=stub.base + "/login/oauth/access_token",
                              custom_user_info_url=stub.base + "/user"))
            db.add(m.Provider(owner=org.name, name=f"{org.name}-mm", category="Web3", type="MetaMask"))
        app = make_app(org.name, grant_types=["authorization_code"],
                       providers=[row(f"{org.name}-gh", prompted=True), row(f"{org.name}-mm", prompted=True)])
        query = {"clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
                 "state": "s1"}
        browser = TestClient(api, client=("192.0.2.62", 40000))  # its own start budget
        answer = browser.post("/api/login", params=query, json={
            "application": app.name, "organization": org.name, "username": "lee", "password": PASSWORD}).json()
        prompt_url = answer["data2"]
        assert answer["status"] == "ok" and prompt_url.startswith(f"/prompt/{app.name}?clientId="), answer
        with session_scope() as db:
            lee = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == "lee")).one()
            application = db.get(m.Application, app.pk)
            assert prompt.missing(application, lee) == []  # the authorize page asks for items only
            [link] = prompt.unlinked(db, application, lee)  # the wallet row cannot be linked here: not offered
        assert link["name"] == f"{org.name}-gh"
        start = dict(parse_qs(urlsplit(link["href"]).query))
        assert start["method"] == ["link"] and start["application"] == [app.name]
        # Link from the prompt page: the flow comes back to it
        location = browser.get("/api/federation/start", params={**{k: v[0] for k, v in start.items()},
                                                                 "from": prompt_url},
                               follow_redirects=False).headers["location"]
        state = parse_qs(urlsplit(location).query)["state"][0]
        back = browser.get("/callback", params={"code": "the-code", "state": state}, follow_redirects=False)
        assert back.headers["location"] == prompt_url
    assert reload_user(org.name, "lee").third_party_ids == {"github": "583231"}
    again = TestClient(api).post("/api/login", params=query, json={
        "application": app.name, "organization": org.name, "username": "lee", "password": PASSWORD}).json()
    assert again["data2"].startswith(f"{REDIRECT}?code="), again  # linked: no prompt


def test_a_refused_link_goes_back_to_the_page_it_started_from(make_org, make_user):
    from urllib.parse import urlsplit

    from tests.api.test_federation_api import row

    org = make_org()
    make_user(owner=org.name, name="kim", password=PASSWORD)
    with session_scope() as db:
        db.add(m.Provider(owner=org.name, name=f"{org.name}-gh", category="OAuth", type="GitHub", client_id="",
                          client_secret="s"))  # no client ID: the start is refused
    app = make_app(org.name, providers=[row(f"{org.name}-gh", prompted=True)])
    browser = TestClient(api, client=("192.0.2.63", 40000))  # its own start budget
    assert browser.post("/api/login", json={"application": app.name, "organization": org.name, "username": "kim",
                                            "password": PASSWORD}).json()["status"] == "ok"
    back = browser.get("/api/federation/start", params={"application": app.name, "provider": f"{org.name}-gh",
                                                        "method": "link", "from": f"/prompt/{app.name}?state=x"},
                       follow_redirects=False).headers["location"]
    assert urlsplit(back).path == f"/prompt/{app.name}" and "upstreamError=" in back
    # a link with no page named goes back to the account page; a foreign address is not followed
    evil = browser.get("/api/federation/start", params={"application": app.name, "provider": f"{org.name}-gh",
                                                        "method": "link", "from": "https://evil.example/x"},
                       follow_redirects=False).headers["location"]
    assert evil.startswith("/account?upstreamError=")
