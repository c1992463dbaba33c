"""Sign-in with a verification code (signin/code_signin.py): the code goes to the account's
own email through a real local SMTP server, signs the account in once, and proves the email;
the application's rule decides which addresses may be used; wrong codes are counted."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from tests.conftest import unique
from tests.mail_world import Org, mail_organization
from tests.sinks import code_in


@pytest.fixture(autouse=True)
def fresh_address_counts(database):
    with session_scope() as db:
        db.execute(sa.delete(m.Throttle).where(m.Throttle.key.like("code-signin:%")))


def _org(smtp, rule: str = "All") -> Org:
    methods = [{"name": "Password", "displayName": "Password", "rule": "All"},
               {"name": "Verification code", "displayName": "Verification code", "rule": rule}]
    return mail_organization(smtp, {"signin_methods": methods})


def _user(make_user, org: Org, **fields) -> m.User:
    name = unique("coder")
    return make_user(owner=org.name, name=name, email=f"{name}@corp.test", phone="4155550199", country_code="US",
                     **fields)


def _send(client: TestClient, org: Org, dest: str) -> dict:
    return client.post("/api/send-verification-code", data={
        "applicationId": f"admin/{org.application}", "method": "login", "type": "email", "dest": dest}).json()


def _login(client: TestClient, org: Org, username: str, code: str) -> dict:
    return client.post("/api/login", json={"application": org.application, "organization": org.name,
                                            "username": username, "code": code,
                                            "signinMethod": "Verification code"}).json()


def test_a_code_sent_to_the_accounts_email_signs_it_in_once(smtp, make_user):
    org = _org(smtp)
    user = _user(make_user, org)
    visitor = TestClient(api)
    assert _send(visitor, org, user.email.upper())["status"] == "ok"
    code = code_in(smtp.wait_for(user.email).body)
    answer = _login(visitor, org, user.email, code)
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/{user.name}", answer
    me = visitor.get("/api/get-account").json()["data"]
    assert me["name"] == user.name and me["emailVerified"] is True
    again = _login(TestClient(api), org, user.email, code)
    assert again["status"] == "error" and again["msg"] == "Code has not been sent yet!"


def test_the_applications_rule_decides_the_addresses(smtp, make_user):
    org = _org(smtp, rule="Phone only")
    user = _user(make_user, org)
    refused = _send(TestClient(api), org, user.email)
    assert refused["msg"] == "The login method: login with email is not enabled for the application"
    assert _login(TestClient(api), org, user.email, "123456")["msg"] == refused["msg"]
    password_only = mail_organization(smtp, {"signin_methods": [{"name": "Password", "rule": "All"}]})
    assert _send(TestClient(api), password_only, "x@corp.test")["msg"] == refused["msg"]


def test_only_an_accounts_own_address_gets_a_code(smtp, make_user):
    org = _org(smtp)
    user = _user(make_user, org)
    for dest in ("nobody@corp.test", f"{user.name}@other.test"):
        answer = _send(TestClient(api), org, dest)
        assert answer["status"] == "error" and "doesn't exist" in answer["msg"], answer
    # the account's name is not an address
    assert _send(TestClient(api), org, user.name)["status"] == "error"
    with session_scope() as db:
        sent = db.exec(select(m.Verification).where(m.Verification.owner == org.name)).all()
    assert sent == []


def test_wrong_codes_are_counted_until_the_code_is_frozen(smtp, make_user):
    org = _org(smtp)
    user = _user(make_user, org)
    assert _send(TestClient(api), org, user.email)["status"] == "ok"
    code = code_in(smtp.wait_for(user.email).body)
    wrong = "000000" if code != "000000" else "111111"
    answers = [_login(TestClient(api), org, user.email, wrong)["msg"] for _ in range(5)]
    assert answers[0] == "password or code is incorrect, you have 4 remaining chances"
    assert "too many times" in answers[4]
    assert "too many times" in _login(TestClient(api), org, user.email, code)["msg"]  # even the right one now


def test_an_account_with_a_second_factor_owes_it(smtp, make_user):
    org = _org(smtp)
    user = _user(make_user, org, totp_secret="JBSWY3DPEHPK3PXP", mfa_email_enabled=False)
    with session_scope() as db:
        row = db.exec(select(m.User).where(m.User.owner == org.name, m.User.name == user.name)).one()
        row.totp_secret = "JBSWY3DPEHPK3PXP"
        row.preferred_mfa_type = "app"
        db.add(row)
    assert _send(TestClient(api), org, user.email)["status"] == "ok"
    code = code_in(smtp.wait_for(user.email).body)
    answer = _login(TestClient(api), org, user.email, code)
    assert answer["status"] == "ok" and answer["data"] == "NextMfa", answer
