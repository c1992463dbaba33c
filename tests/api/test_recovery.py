"""A forgotten password, through Casdoor's four calls (signin/recovery.py): get-email-and-phone,
send-verification-code with method forget, verify-code, set-password with the code. The code is
read from the local SMTP server it was sent to."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.signin import captcha, recovery
from tests.api.conftest import ok_body, sign_in
from tests.conftest import reload_user, unique
from tests.mail_world import Org, mail_organization
from tests.sinks import code_in

PASSWORD, NEW_PASSWORD = "s3cret-pass", "N3w-secret-pass"


@pytest.fixture(autouse=True)
def fresh_address_counts(database):
    """Every test starts with the client address's lookups and sends uncounted."""
    with session_scope() as db:
        db.execute(sa.delete(m.Throttle).where(m.Throttle.key.like("recovery:%")))


@pytest.fixture
def org(database, smtp) -> Org:
    return mail_organization(smtp)


def _user(make_user, org: Org, **fields) -> m.User:
    name = unique("forgetful")
    return make_user(owner=org.name, name=name, password=PASSWORD, email=f"{name}@corp.test", phone="4155550123",
                     country_code="US", **fields)


def _lookup(client: TestClient, org: Org, username: str) -> dict:
    return client.get("/api/get-email-and-phone", params={"organization": org.name, "username": username}).json()


def _send(client: TestClient, org: Org, user: m.User, dest: str, **extra) -> dict:
    return client.post("/api/send-verification-code", data={
        "applicationId": f"admin/{org.application}", "method": "forget", "type": "email", "dest": dest,
        "checkUser": user.name, **extra}).json()


def _verify(client: TestClient, org: Org, user: m.User, username: str, code: str) -> dict:
    return client.post("/api/verify-code", json={"organization": org.name, "name": user.name,
                                                 "username": username, "code": code}).json()


def _set(client: TestClient, user: m.User, code: str, password: str = NEW_PASSWORD) -> dict:
    return client.post("/api/set-password", data={"userOwner": user.owner, "userName": user.name,
                                                  "newPassword": password, "code": code}).json()


def _signs_in(user: m.User, password: str) -> bool:
    answer = TestClient(api).post("/api/login", json={"organization": user.owner, "username": user.name,
                                                      "password": password}).json()
    return answer["status"] == "ok"


def _code_for(client: TestClient, org: Org, user: m.User, smtp) -> tuple[str, str]:
    """Steps 1 and 2: (the masked email step 1 showed, the code that reached the real address)."""
    masked = ok_body(client.get("/api/get-email-and-phone",
                                params={"organization": org.name, "username": user.name}))["data"]["email"]
    assert ok_body(client.post("/api/send-verification-code", data={
        "applicationId": f"admin/{org.application}", "method": "forget", "type": "email", "dest": masked,
        "checkUser": user.name}))
    return masked, code_in(smtp.wait_for(user.email).body)


def test_the_whole_flow_sets_a_new_password_and_ends_the_old_sessions(org, make_user, smtp):
    user = _user(make_user, org)
    old_session = sign_in(user.owner, user.name, PASSWORD)
    visitor = TestClient(api)

    found = _lookup(visitor, org, user.name)
    assert found["status"] == "ok" and found["data2"] == "username"
    assert found["data"]["name"] == user.name
    assert found["data"]["email"] != user.email and found["data"]["email"].endswith("@corp.test")
    assert "*" in found["data"]["phone"] and "0123" in found["data"]["phone"]

    masked, code = _code_for(visitor, org, user, smtp)
    [row] = list(_rows(user))
    assert (row.user, row.receiver, row.is_used) == (f"{user.owner}/{user.name}", user.email, False)

    assert ok_body(visitor.post("/api/verify-code", json={"organization": org.name, "name": user.name,
                                                          "username": masked, "code": code}))
    assert visitor.cookies.get("iam_reset")
    assert ok_body(visitor.post("/api/set-password", data={"userOwner": user.owner, "userName": user.name,
                                                           "newPassword": NEW_PASSWORD, "code": code}))
    assert _signs_in(user, NEW_PASSWORD) and not _signs_in(user, PASSWORD)
    assert old_session.get("/api/get-account").json()["status"] == "error"
    # the grant worked once
    assert _set(visitor, user, code, "An0ther-pass")["status"] == "error"
    assert _signs_in(user, NEW_PASSWORD)


def _rows(user: m.User):
    with session_scope() as db:
        return db.exec(select(m.Verification).where(m.Verification.user == f"{user.owner}/{user.name}")).all()


def test_an_address_typed_in_full_is_answered_in_full(org, make_user):
    user = _user(make_user, org)
    visitor = TestClient(api)
    by_email = _lookup(visitor, org, user.email)
    assert (by_email["data2"], by_email["data"]["email"], by_email["data"]["phone"]) == ("email", user.email, "")
    by_phone = _lookup(visitor, org, user.phone)
    assert (by_phone["data2"], by_phone["data"]["phone"], by_phone["data"]["email"]) == ("phone", user.phone, "")


def test_unknown_accounts_and_ldap_accounts_are_refused(org, make_user, smtp):
    visitor = TestClient(api)
    missing = _lookup(visitor, org, "nobody-here")
    assert missing["status"] == "error" and "doesn't exist" in missing["msg"]
    directory_user = _user(make_user, org, ldap="uid=dir,dc=corp")
    for answer in (_lookup(visitor, org, directory_user.name),
                   _send(visitor, org, directory_user, directory_user.email)):
        assert answer["status"] == "error" and "managed by the LDAP server" in answer["msg"]
    assert not smtp.to(directory_user.email)


def test_a_code_goes_only_to_the_accounts_own_address(org, make_user, smtp):
    user, other = _user(make_user, org), _user(make_user, org)
    visitor = TestClient(api)
    for dest in ("attacker@evil.test", other.email):
        answer = _send(visitor, org, user, dest)
        assert answer["status"] == "error" and answer["msg"] == recovery.NO_ACCOUNT
    assert not smtp.to("attacker@evil.test") and not _rows(user)


def test_set_password_needs_this_browsers_grant_for_that_code_and_account(org, make_user, smtp):
    alice, bob = _user(make_user, org), _user(make_user, org)
    visitor = TestClient(api)
    # no verification at all
    assert _set(visitor, alice, "123456")["status"] == "error"
    masked, code = _code_for(visitor, org, alice, smtp)
    assert ok_body(visitor.post("/api/verify-code", json={"organization": org.name, "name": alice.name,
                                                          "username": masked, "code": code}))
    # another browser, another code, another account: refused, nothing changed
    assert _set(TestClient(api), alice, code)["status"] == "error"
    assert _set(visitor, alice, f"{(int(code) + 1) % 1_000_000:06d}")["status"] == "error"
    assert _set(visitor, bob, code)["status"] == "error"
    assert _signs_in(alice, PASSWORD) and _signs_in(bob, PASSWORD)
    assert reload_user(alice.owner, alice.name).password == alice.password
    # the organization's password rules apply, and a refused password leaves the grant for a better one
    with session_scope() as db:
        organization = db.exec(select(m.Organization).where(m.Organization.name == org.name)).one()
        organization.password_options = ["AtLeast6"]
        db.add(organization)
    weak = _set(visitor, alice, code, "abc")
    assert weak["status"] == "error" and not _signs_in(alice, "abc")
    assert ok_body(visitor.post("/api/set-password", data={"userOwner": alice.owner, "userName": alice.name,
                                                           "newPassword": NEW_PASSWORD, "code": code}))
    assert _signs_in(alice, NEW_PASSWORD)


def test_wrong_codes_count_against_the_code(org, make_user, smtp):
    user = _user(make_user, org)
    visitor = TestClient(api)
    masked, code = _code_for(visitor, org, user, smtp)
    wrong = f"{(int(code) + 1) % 1_000_000:06d}"
    answers = [_verify(visitor, org, user, masked, wrong) for _ in range(5)]
    assert all(a["status"] == "error" for a in answers)
    assert "remaining chances" in answers[0]["msg"]
    frozen = _verify(visitor, org, user, masked, code)
    assert frozen["status"] == "error" and "too many times" in frozen["msg"]
    assert not visitor.cookies.get("iam_reset")


def test_the_application_must_offer_forgot_password(database, make_user, smtp):
    org = mail_organization(smtp, application_fields={"signin_items": [
        {"name": "Forgot password?", "visible": False}, {"name": "Username", "visible": True}]})
    user = _user(make_user, org)
    answer = _send(TestClient(api), org, user, user.email)
    assert answer["status"] == "error" and answer["msg"] == "The forgot password feature is disabled"


def test_the_applications_captcha_is_checked(database, make_user, smtp, monkeypatch):
    org = mail_organization(smtp)
    picture = unique("captcha")
    with session_scope() as db:
        db.add(m.Provider(owner=org.name, name=picture, category="Captcha", type="Default"))
        application = db.exec(select(m.Application).where(m.Application.name == org.application)).one()
        application.providers = [*application.providers, {"name": picture, "rule": "Always"}]
        db.add(application)
    user = _user(make_user, org)
    visitor = TestClient(api)
    refused = _send(visitor, org, user, user.email)
    assert refused["status"] == "error" and refused["msg"] == "Turing test failed."
    monkeypatch.setattr(captcha, "_answer", lambda: "24680")
    shown = ok_body(visitor.get("/api/get-captcha", params={"applicationId": f"admin/{org.application}"}))["data"]
    wrong = _send(visitor, org, user, user.email, captchaType="Default", captchaToken="13579",
                  clientSecret=shown["captchaId"])
    assert wrong["status"] == "error" and not smtp.to(user.email)
    shown = ok_body(visitor.get("/api/get-captcha", params={"applicationId": f"admin/{org.application}"}))["data"]
    assert ok_body(visitor.post("/api/send-verification-code", data={
        "applicationId": f"admin/{org.application}", "method": "forget", "type": "email", "dest": user.email,
        "checkUser": user.name, "captchaType": "Default", "captchaToken": "24680",
        "clientSecret": shown["captchaId"]}))
    assert smtp.wait_for(user.email)


def test_lookups_and_sends_are_limited_per_client_address(org, make_user, monkeypatch):
    monkeypatch.setattr(recovery, "PER_ADDRESS", (3, 600))
    user = _user(make_user, org)
    visitor = TestClient(api)
    answers = [_lookup(visitor, org, user.name) for _ in range(4)]
    assert [a["status"] for a in answers] == ["ok", "ok", "ok", "error"]
    assert answers[3]["msg"].startswith("Too many requests from this address, please wait for ")
    assert _send(visitor, org, user, user.email)["msg"].startswith("Too many requests from this address")


def test_bad_input_is_refused_clearly(org, make_user):
    user = _user(make_user, org)
    visitor = TestClient(api)
    assert _send(visitor, org, user, "")["msg"] == "Email cannot be empty"
    assert _send(visitor, org, user, user.email, type="fax")["msg"] == "Unknown type"
    assert "does not exist" in visitor.post("/api/send-verification-code", data={
        "applicationId": "admin/no-such-app", "method": "forget", "type": "email", "dest": user.email,
        "checkUser": user.name}).json()["msg"]
    assert _verify(visitor, org, user, user.email, "")["msg"] == "Empty code"
    assert _set(visitor, user, "123456", "")["msg"] == "Empty input!"
    assert visitor.post("/api/verify-code", content=b"not json").json()["status"] == "error"
