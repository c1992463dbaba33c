"""The prompt after sign-in (services/prompt.py): a sign-in through an application whose prompted
items the account has not answered goes to /prompt first; the answers pass sign-up's checks and
only the asked items are written."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.services import prompt
from iam_console.services.errors import ServiceError
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
