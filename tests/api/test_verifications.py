"""Verification codes and the email and phone reset (signin/verifications.py, the
routes send-verification-code and reset-email-or-phone), against a real local SMTP
server and a real local HTTP endpoint for Custom HTTP SMS: the code is read from what
they received."""

from __future__ import annotations

import uuid

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.signin import verifications
from tests.api.conftest import sign_in
from tests.conftest import reload_user, unique
from tests.mail_world import SMTP_PASSWORD, SMTP_USER, Org, mail_organization
from tests.sinks import HttpSink, SmtpSink, code_in

PASSWORD = "s3cret-pass"
FROZEN = "You have entered the wrong password or code too many times, please wait for %d minutes and try again"


@pytest.fixture(scope="module")
def gateway():
    with HttpSink() as sink:
        yield sink


@pytest.fixture
def org(database, smtp) -> Org:
    return mail_organization(smtp)


def _user(make_user, org: Org, **fields) -> m.User:
    return make_user(owner=org.name, password=PASSWORD, **fields)


def _client(user: m.User):
    return sign_in(user.owner, user.name, PASSWORD)


def _send(client, dest: str, kind: str = "email", **extra) -> dict:
    return client.post("/api/send-verification-code", data={"dest": dest, "type": kind, "method": "reset",
                                                             **extra}).json()


def _reset(client, dest: str, code: str, kind: str = "email") -> dict:
    return client.post("/api/reset-email-or-phone", data={"type": kind, "dest": dest, "code": code}).json()


def _rows(receiver: str) -> list[m.Verification]:
    with session_scope() as db:
        return list(db.exec(select(m.Verification).where(m.Verification.receiver == receiver)
                            .order_by(m.Verification.pk)).all())


def _age(receiver: str, seconds: int) -> None:
    """Move the receiver's codes into the past."""
    with session_scope() as db:
        for row in db.exec(select(m.Verification).where(m.Verification.receiver == receiver)).all():
            row.time -= seconds
            db.add(row)


def _address() -> str:
    return f"{uuid.uuid4().hex[:10]}@new.test"


def _code(smtp: SmtpSink, address: str, count: int = 1) -> str:
    return code_in(smtp.wait_for(address, count).body)


def test_a_code_is_sent_through_the_organizations_provider_and_listed(org, make_user, smtp):
    alice, boss = _user(make_user, org), _user(make_user, org, is_admin=True)
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    mail = smtp.wait_for(address)
    assert mail.login == (SMTP_USER, SMTP_PASSWORD)
    assert mail.mail_from == SMTP_USER and mail.message["To"] == address
    assert mail.message["Subject"] == "Your code" and f"Org {org.name}" in mail.message["From"]
    code = code_in(mail.body)
    [row] = _rows(address)
    assert (row.owner, row.user, row.provider, row.type, row.code, row.is_used) == (
        org.name, f"{org.name}/{alice.name}", org.provider, "Email", code, False)
    assert row.remote_addr == "testclient"

    # the Verifications list shows it to the organization's admin, code included
    listed = _client(boss).get("/api/get-verifications", params={"owner": org.name, "p": "1",
                                                                  "pageSize": "10"}).json()
    assert listed["status"] == "ok" and listed["data2"] == 1
    [shown] = listed["data"]
    assert (shown["receiver"], shown["code"], shown["isUsed"], shown["user"]) == (
        address, code, False, f"{org.name}/{alice.name}")
    assert "attempts" not in shown and "pk" not in shown
    # and to no one else
    assert client.get("/api/get-verifications", params={"owner": org.name}).json()["status"] == "error"


def test_the_right_code_sets_the_email_as_verified_once(org, make_user, smtp):
    alice = _user(make_user, org, email="old@corp.test")
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    code = _code(smtp, address)
    wrong = str((int(code) + 1) % 1_000_000).zfill(6)
    answer = _reset(client, address, wrong)
    assert answer["msg"] == "password or code is incorrect, you have 4 remaining chances"
    assert reload_user(org.name, alice.name).email == "old@corp.test"

    assert _reset(client, address, code)["status"] == "ok"
    stored = reload_user(org.name, alice.name)
    assert (stored.email, stored.email_verified) == (address, True)
    assert _rows(address)[-1].is_used
    # a code works once
    assert _reset(client, address, code)["msg"] == "Code has not been sent yet!"
    with session_scope() as db:
        actions = db.exec(select(m.Record.action).where(m.Record.organization == org.name)).all()
    assert "send-verification-code" in actions and "update-user" in actions


def test_an_expired_code_is_refused(org, make_user, smtp):
    alice = _user(make_user, org)
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    code = _code(smtp, address)
    _age(address, 10 * 60 + 1)
    assert _reset(client, address, code)["msg"] == "You should verify your code in 10 min!"
    assert reload_user(org.name, alice.name).email == ""


def test_one_code_per_receiver_and_per_user_every_60_seconds(org, make_user, smtp):
    alice, bob = _user(make_user, org), _user(make_user, org)
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    assert _send(client, address)["msg"] == "you can only send one code in 60s"
    assert _send(client, _address())["msg"] == "you can only send one code in 60s"  # the same user
    assert _send(_client(bob), address)["msg"] == "you can only send one code in 60s"  # the same receiver
    assert len(_rows(address)) == 1 and len(smtp.to(address)) == 1
    _age(address, 61)
    assert _send(client, address)["status"] == "ok"
    # the newest code is the one that works
    first, second = _code(smtp, address, 1), _code(smtp, address, 2)
    if first != second:
        assert _reset(client, address, first)["status"] == "error"
    assert _reset(client, address, second)["status"] == "ok"


def test_five_checks_void_a_code_and_freeze_its_receiver(org, make_user, smtp):
    alice = _user(make_user, org)
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    code = _code(smtp, address)
    wrong = str((int(code) + 1) % 1_000_000).zfill(6)
    messages = [_reset(client, address, wrong)["msg"] for _ in range(5)]
    # the count picks the plural form (docs/extending.md, "Languages"): one chance left reads singular
    assert messages[:4] == [f"password or code is incorrect, you have {n} remaining chances" for n in (4, 3, 2)] + \
        ["password or code is incorrect, you have 1 remaining chance"]
    assert messages[4] == FROZEN % 10
    # void: even the right code
    assert _reset(client, address, code)["msg"] == FROZEN % 10
    assert reload_user(org.name, alice.name).email == ""
    # and no new code for that receiver until the void one would have expired
    _age(address, 61)
    assert _send(client, address)["msg"] == FROZEN % 9
    _age(address, 10 * 60)
    assert _send(client, address)["status"] == "ok"
    assert _reset(client, address, _code(smtp, address, 2))["status"] == "ok"


def test_checks_are_counted_before_the_comparison(org, make_user, smtp):
    """The limit holds whatever the order of answers: the count is one atomic update per check."""
    alice = _user(make_user, org)
    client, address = _client(alice), _address()
    assert _send(client, address)["status"] == "ok"
    code = _code(smtp, address)
    actor = Actor(user=reload_user(org.name, alice.name))
    with session_scope() as db:
        to = verifications.receiver(actor, None, "email", address)
        for _ in range(verifications.MAX_ATTEMPTS - 1):
            with pytest.raises(ServiceError, match="remaining chance"):
                verifications.check_code(db, actor, to, "000000" if code != "000000" else "111111")
        assert verifications.check_code(db, actor, to, code).code == code  # the 5th check, right
    assert _rows(address)[-1].attempts == verifications.MAX_ATTEMPTS


def test_a_user_cannot_reset_another_users_address(org, make_user, smtp):
    alice, bob = _user(make_user, org, email="alice@corp.test"), _user(make_user, org, email="bob@corp.test")
    address = _address()
    assert _send(_client(alice), address)["status"] == "ok"
    code = _code(smtp, address)
    # bob holds alice's code: it was sent for her, not him
    assert _reset(_client(bob), address, code)["msg"] == "Code has not been sent yet!"
    assert reload_user(org.name, bob.name).email == "bob@corp.test"
    assert reload_user(org.name, alice.name).email == "alice@corp.test"
    # and nobody can ask for one on an address another member holds
    assert _send(_client(bob), "alice@corp.test")["msg"] == "Email already exists"
    # an admin sets another user's email in the form; the reset route only ever changes the caller
    boss = _user(make_user, org, is_admin=True)
    assert _reset(_client(boss), address, code)["msg"] == "Code has not been sent yet!"


def test_anonymous_and_application_callers_get_no_code(org):
    from fastapi.testclient import TestClient

    from iam_console.api.app import api

    anonymous = TestClient(api)
    assert _send(anonymous, _address())["msg"] == "Please login first"
    assert _reset(anonymous, _address(), "123456")["msg"] == "Please login first"
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.name == org.application)).one()
    client = TestClient(api)
    client.auth = (app.client_id, app.client_secret)
    assert _send(client, _address())["msg"] == "Unauthorized operation"


def test_an_organization_admin_cannot_use_another_organizations_provider(database, make_user, smtp):
    mine, theirs = mail_organization(None), mail_organization(smtp)
    boss = _user(make_user, mine, is_admin=True)
    client, address = _client(boss), _address()
    # naming the other organization's application
    answer = _send(client, address, applicationId=f"admin/{theirs.application}")
    assert answer["msg"] == f"The application: admin/{theirs.application} does not exist"
    # their provider exists, but is not theirs to use: nothing of its own, nothing shared
    assert _send(client, address)["msg"] == (
        f'please add an Email provider to the "Providers" list for the application: {mine.application}')
    # not even when their own application lists the other's provider by name
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.name == mine.application)).one()
        app.providers = [{"name": theirs.provider, "rule": "All"}]
        db.add(app)
    assert _send(client, address)["status"] == "error"
    assert smtp.to(address) == [] and _rows(address) == []


def test_a_shared_provider_serves_an_organization_without_its_own(database, make_user, smtp):
    org = mail_organization(None)
    shared = unique("shared-smtp")
    with session_scope() as db:
        db.add(m.Provider(owner=b.ADMIN_OWNER, name=shared, category="Email", type="Default", host="127.0.0.1",
                          port=smtp.port, disable_ssl=True, client_id=SMTP_USER, client_secret=SMTP_PASSWORD,
                          content="Code: %{code}"))
    try:
        alice = _user(make_user, org)
        client, address = _client(alice), _address()
        assert _send(client, address)["status"] == "ok"
        assert code_in(smtp.wait_for(address).body)
        assert _rows(address)[0].provider == shared and _rows(address)[0].owner == org.name
    finally:
        with session_scope() as db:
            db.delete(db.exec(select(m.Provider).where(m.Provider.name == shared)).one())


def test_the_organizations_items_and_regexes_apply(database, make_user, smtp):
    items = b.default_account_items()
    for item in items:
        if item["name"] == "Email":
            item["regex"] = r"[^@]+@corp\.test"
        if item["name"] == "Phone":
            item["modifyRule"] = "Admin"
    org = mail_organization(smtp, account_items=items)
    alice = _user(make_user, org)
    client = _client(alice)
    assert _send(client, _address())["msg"] == "This field value doesn't match the pattern rule"
    assert _send(client, "+1 202-555-0143", "phone")["msg"] == "You are not allowed to change the field: phone"
    actor = Actor(user=reload_user(org.name, alice.name))
    with session_scope() as db:
        assert verifications.may_reset(db, actor, "email") and not verifications.may_reset(db, actor, "phone")
    address = f"{uuid.uuid4().hex[:8]}@corp.test"
    assert _send(client, address)["status"] == "ok"
    assert _reset(client, address, _code(smtp, address))["status"] == "ok"


def test_empty_and_bad_input(org, make_user):
    client = _client(_user(make_user, org))
    assert _send(client, "")["msg"] == "Email cannot be empty"
    assert _send(client, " ", "phone")["msg"] == "Phone cannot be empty"
    assert _send(client, "not-an-email")["msg"] == "Email is invalid"
    assert _send(client, "12", "phone")["msg"] == "Phone number is invalid in your region US"
    assert _send(client, "x@y.test", "fax")["msg"] == "Unknown type"
    assert _send(client, "x@y.test", method="invite")["msg"] == "The verification method invite is not supported here"
    assert _reset(client, "x@y.test", "")["msg"] == "Empty code"
    assert _reset(client, "", "123456")["msg"] == "Email cannot be empty"


def _sms_organization(gateway: HttpSink, **provider_fields) -> Org:
    org = mail_organization(None)
    provider = unique("sms")
    with session_scope() as db:
        db.add(m.Provider(owner=org.name, name=provider, category="SMS", **{
            "type": "Custom HTTP SMS", "endpoint": f"{gateway.url}/send", "method": "POST", "title": "message",
            "template_code": "Your code is %s", **provider_fields}))
        app = db.exec(select(m.Application).where(m.Application.name == org.application)).one()
        app.providers = [{"name": provider, "rule": "All", "countryCodes": ["US"]}]
        db.add(app)
    return Org(org.name, org.application, provider)


def test_a_custom_http_sms_provider_sends_the_code_and_the_phone_is_reset(database, make_user, gateway):
    org = _sms_organization(gateway, http_headers={"X-Token": "gateway-token"})
    alice = _user(make_user, org, country_code="US")
    client = _client(alice)
    number = f"202555{uuid.uuid4().int % 10000:04d}"
    assert _send(client, number, "phone")["status"] == "ok"
    call = gateway.wait_for(f"+1{number}")
    assert (call.method, call.path, call.headers["X-Token"]) == ("POST", "/send", "gateway-token")
    assert call.headers["Content-Type"].startswith("application/x-www-form-urlencoded")
    code = call.fields["code"]
    assert call.fields["message"] == f"Your code is {code}" and call.fields["phoneNumber"] == f"+1{number}"
    [row] = _rows(f"+1{number}")
    assert (row.type, row.provider, row.code) == ("SMS", org.provider, code)
    assert _reset(client, number, code, "phone")["status"] == "ok"
    stored = reload_user(org.name, alice.name)
    assert (stored.phone, stored.country_code) == (number, "US")


def test_a_custom_http_sms_provider_may_send_json_with_renamed_fields(database, make_user, gateway):
    org = _sms_organization(gateway, http_headers={"Content-Type": "application/json"},
                            user_mapping={"phoneNumber": "to", "content": "text"})
    client = _client(_user(make_user, org))
    number = f"+1 202 555 {uuid.uuid4().int % 10000:04d}"
    assert _send(client, number, "phone")["status"] == "ok"
    e164 = "+1" + number.replace(" ", "")[2:]
    call = gateway.wait_for(e164)
    assert call.fields["to"] == e164 and call.fields["text"] == f"Your code is {call.fields['code']}"


def test_a_failed_send_records_nothing_and_costs_no_wait(database, make_user):
    with HttpSink(status=500) as failing:
        org = _sms_organization(failing)
        client = _client(_user(make_user, org))
        number = f"202555{uuid.uuid4().int % 10000:04d}"
        assert _send(client, number, "phone")["msg"] == "Failed to send the SMS: the gateway answered 500"
        # (another test may have sent to the same random number: only this provider's rows count)
        assert [row for row in _rows(f"+1{number}") if row.provider == org.provider] == []
        failing.status = 200
        assert _send(client, number, "phone")["status"] == "ok"


def test_other_provider_types_are_refused_clearly(database, make_user, smtp):
    org = mail_organization(None)
    names = {"Email": unique("sendgrid"), "SMS": unique("twilio")}
    with session_scope() as db:
        db.add(m.Provider(owner=org.name, name=names["Email"], category="Email", type="SendGrid"))
        db.add(m.Provider(owner=org.name, name=names["SMS"], category="SMS", type="Twilio SMS"))
    client = _client(_user(make_user, org))
    assert _send(client, _address())["msg"] == "The Email provider type SendGrid is not supported here"
    assert _send(client, "2025550143", "phone")["msg"] == "The SMS provider type Twilio SMS is not supported here"


def test_wrong_smtp_credentials_fail_clearly(database, make_user, smtp):
    org = mail_organization(smtp)
    with session_scope() as db:
        provider = db.exec(select(m.Provider).where(m.Provider.name == org.provider)).one()
        provider.client_secret = "wrong"
        db.add(provider)
    client, address = _client(_user(make_user, org)), _address()
    answer = _send(client, address)
    assert answer["status"] == "error" and answer["msg"].startswith("Failed to send the email:")
    assert _rows(address) == []
