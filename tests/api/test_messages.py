"""send-email, send-sms and send-notification: an admin or an application's client sends
through its organization's providers, delivered to a local SMTP server and local HTTP
endpoints; nobody sends through another organization's provider, ordinary users send
nothing, and bad input is refused before anything is sent."""

from __future__ import annotations

from contextlib import contextmanager

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import outbound
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique
from tests.sinks import HttpSink, SmtpSink

PASSWORD = "Send-pass-1"
SMTP_USER, SMTP_PASSWORD = "mailer@send.test", "smtp-secret"


@pytest.fixture(scope="module")
def sinks():
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as smtp, HttpSink() as sms, HttpSink() as hook:
        yield {"smtp": smtp, "sms": sms, "hook": hook}


@pytest.fixture(scope="module")
def orgs(admin, sinks) -> dict:
    """Organization A with Email, SMS and Notification providers and an application listing
    them; organization B with an Email provider of its own."""
    a, b = unique("senda"), unique("sendb")
    for org in (a, b):
        ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
        for user, is_admin in (("boss", True), ("alice", False)):
            ok_body(admin.post("/api/add-user", json={"owner": org, "name": user, "password": PASSWORD,
                                                  "isAdmin": is_admin}))
        ok_body(admin.post("/api/add-provider", json={
            "owner": org, "name": f"{org}-mail", "category": "Email", "type": "Default", "host": "127.0.0.1",
            "port": sinks["smtp"].port, "disableSsl": True, "clientId": SMTP_USER, "clientSecret": SMTP_PASSWORD,
            "clientId2": f"noreply@{org}.test"}))
    ok_body(admin.post("/api/add-provider", json={"owner": a, "name": f"{a}-sms", "category": "SMS",
                                              "type": "Custom HTTP SMS", "endpoint": f"{sinks['sms'].url}/sms"}))
    ok_body(admin.post("/api/add-provider", json={"owner": a, "name": f"{a}-hook", "category": "Notification",
                                              "type": "Custom HTTP", "receiver": f"{sinks['hook'].url}/notify",
                                              "method": "POST", "title": "text"}))
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": f"{a}-app", "organization": a,
                                                  "providers": [{"name": f"{a}-mail"}, {"name": f"{a}-sms"}]}))
    ok_body(admin.post("/api/add-invitation", json={"owner": a, "name": "welcome", "code": "WELCOME42", "quota": 5,
                                                "application": f"{a}-app", "state": "Active"}))
    ok_body(admin.post("/api/add-invitation", json={"owner": b, "name": "welcome", "code": "THEIRS42", "quota": 5,
                                                "state": "Active"}))
    ok_body(admin.post("/api/add-invitation", json={"owner": a, "name": "paused", "code": "PAUSED42", "quota": 5,
                                                "application": f"{a}-app", "state": "Suspended"}))
    app = ok_body(admin.get("/api/get-application", params={"id": f"admin/{a}-app"}))["data"]
    client = TestClient(api)
    client.params = {"clientId": app["clientId"], "clientSecret": app["clientSecret"]}
    return {"a": a, "b": b, "client": client, "boss": sign_in(a, "boss", PASSWORD),
            "alice": sign_in(a, "alice", PASSWORD)}


def test_an_applications_client_sends_email_through_its_provider(orgs, sinks):
    to = f"{unique('reader')}@mail.test"
    ok_body(orgs["client"].post("/api/send-email", json={"title": "Hello", "content": "<p>Quarterly news</p>",
                                                     "sender": "Acme", "receivers": [to]}))
    mail = sinks["smtp"].wait_for(to)
    assert mail.login == (SMTP_USER, SMTP_PASSWORD) and mail.mail_from == f"noreply@{orgs['a']}.test"
    assert mail.message["Subject"] == "Hello" and "Quarterly news" in mail.message.get_body().get_content()


def test_test_smtp_server_signs_in_and_sends_nothing(orgs, sinks):
    before = len(sinks["smtp"].mails)
    ok_body(orgs["boss"].post("/api/send-email", json={"receivers": ["TestSmtpServer"],
                                                       "provider": f"{orgs['a']}-mail"}))
    assert len(sinks["smtp"].mails) == before


def test_sms_and_notifications_reach_their_gateways(orgs, sinks):
    ok_body(orgs["boss"].post("/api/send-sms", json={"content": "Your parcel is here", "receivers": ["+15550123"]}))
    call = sinks["sms"].wait_for("+15550123")
    assert call.path == "/sms" and "Your parcel is here" in call.fields.values()
    ok_body(orgs["client"].post("/api/send-notification", json={"content": "Deploy done", "recipient": "ops"}))
    note = sinks["hook"].calls[-1]
    assert note.path == "/notify" and note.fields == {"text": "Deploy done", "recipient": "ops"}


@contextmanager
def stored_as(owner: str, name: str, **fields):
    """The provider's fields rewritten in the database (as a record saved before destinations were
    checked on save), put back afterwards."""
    with session_scope() as db:
        row = db.exec(select(m.Provider).where(m.Provider.owner == owner, m.Provider.name == name)).one()
        before = {field: getattr(row, field) for field in fields}
        for field, value in fields.items():
            setattr(row, field, value)
    try:
        yield
    finally:
        with session_scope() as db:
            row = db.exec(select(m.Provider).where(m.Provider.owner == owner, m.Provider.name == name)).one()
            for field, value in before.items():
                setattr(row, field, value)


@pytest.mark.parametrize("address", ["127.000.000.001", "0177.0.0.1"])
def test_a_gateway_at_an_unusual_address_is_an_error_envelope(orgs, sinks, address):
    """Issue 26: such an endpoint or receiver made send-sms and send-notification answer HTTP 500."""
    a = orgs["a"]
    refusal = outbound.USUAL_IPV4 % address
    sent = len(sinks["sms"].calls), len(sinks["hook"].calls)
    with stored_as(a, f"{a}-sms", endpoint=f"http://{address}:{sinks['sms'].port}/sms"), \
            stored_as(a, f"{a}-hook", receiver=f"http://{address}:{sinks['hook'].port}/notify"):
        sms = orgs["boss"].post("/api/send-sms", json={"content": "c", "receivers": ["+15550199"]})
        assert sms.status_code == 200 and sms.json()["status"] == "error", sms.text
        assert sms.json()["msg"] == f"Failed to send the SMS: {refusal}"
        note = orgs["boss"].post("/api/send-notification", json={"content": "c"})
        assert note.status_code == 200 and note.json()["msg"] == f"Failed to send the notification: {refusal}"
    assert (len(sinks["sms"].calls), len(sinks["hook"].calls)) == sent


def test_nobody_sends_through_another_organizations_provider_nor_as_an_ordinary_user(orgs, sinks):
    to = f"{unique('victim')}@mail.test"
    foreign = orgs["boss"].post("/api/send-email", json={"title": "x", "content": "y", "sender": "z",
                                                         "receivers": [to], "provider": f"{orgs['b']}-mail"}).json()
    assert foreign["status"] == "error" and "not found" in foreign["msg"]
    for caller in (orgs["alice"], TestClient(api)):
        refused = caller.post("/api/send-email", json={"title": "x", "content": "y", "sender": "z",
                                                       "receivers": [to]}).json()
        assert refused["status"] == "error"
    assert sinks["smtp"].to(to) == []


@pytest.mark.parametrize("route, body, message", [
    ("send-email", {"title": "t", "content": "c", "sender": "s", "receivers": ["not-an-address"]}, "Invalid Email"),
    ("send-email", {"title": "", "content": "c", "sender": "s", "receivers": ["a@b.test"]}, "cannot be empty"),
    ("send-email", {"title": "t", "content": "c", "sender": "s", "receivers": []}, "cannot be empty"),
    ("send-email", {"title": "t", "content": "c", "sender": "s", "receivers": "a@b.test"}, "list of strings"),
    ("send-email", {"title": "t", "content": "c", "sender": "s", "receivers": [f"u{i}@b.test" for i in range(51)]},
     "At most 50"),
    ("send-sms", {"content": "c", "receivers": ["555-CALL-NOW"]}, "Invalid phone"),
    ("send-sms", {"content": "", "receivers": ["+15550100"]}, "cannot be empty"),
    ("send-notification", {"content": 5}, "must be a string"),
])
def test_bad_input_is_refused_before_anything_is_sent(orgs, sinks, route, body, message):
    sent = len(sinks["smtp"].mails), len(sinks["sms"].calls), len(sinks["hook"].calls)
    answer = orgs["boss"].post(f"/api/{route}", json=body).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert (len(sinks["smtp"].mails), len(sinks["sms"].calls), len(sinks["hook"].calls)) == sent


def test_an_invitation_is_mailed_with_its_code_and_sign_up_link(orgs, sinks):
    a = orgs["a"]
    to = f"{unique('guest')}@mail.test"
    ok_body(orgs["boss"].post("/api/send-invitation", params={"id": f"{a}/welcome"}, json=[to]))
    body = sinks["smtp"].wait_for(to).message.get_body().get_content()
    assert "WELCOME42" in body and f"/signup/{a}-app?invitationCode=WELCOME42" in body


@pytest.mark.parametrize("caller, ident, body, message", [
    ("boss", "{a}/paused", ["x@mail.test"], "suspended or used up"),
    ("boss", "{a}/nothing", ["x@mail.test"], "does not exist"),
    ("boss", "{b}/welcome", ["x@mail.test"], "does not exist"),
    ("boss", "{a}/welcome", ["not-an-address"], "Invalid Email"),
    ("boss", "{a}/welcome", {"to": "x@mail.test"}, "must be a list"),
    ("alice", "{a}/welcome", ["x@mail.test"], "Unauthorized"),
])
def test_an_invitation_goes_only_where_it_should(orgs, sinks, caller, ident, body, message):
    sent = len(sinks["smtp"].mails)
    answer = orgs[caller].post("/api/send-invitation", params={"id": ident.format(a=orgs["a"], b=orgs["b"])},
                               json=body).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert len(sinks["smtp"].mails) == sent


def test_the_send_limit_says_what_was_limited(orgs, sinks, monkeypatch):
    """Issue 26: past the send limit, send-email and send-sms answered the password lockout's
    message; they say that too many messages were sent."""
    from iam_console.signin import messages

    monkeypatch.setattr(messages, "SENDS", 2)
    boss = sign_in(orgs["b"], "boss", PASSWORD)
    receivers = [f"{unique('many')}@mail.test" for _ in range(3)]
    answer = boss.post("/api/send-email", json={"title": "Hi", "content": "<p>x</p>", "sender": "B",
                                                "receivers": receivers}).json()
    assert answer["status"] == "error", answer
    assert answer["msg"].startswith("Too many messages were sent, please wait for "), answer
    assert not {r for mail in sinks["smtp"].mails for r in mail.recipients} & set(receivers)
    chinese = boss.post("/api/send-email", headers={"Accept-Language": "zh-CN"}, json={
        "title": "Hi", "content": "<p>x</p>", "sender": "B", "receivers": receivers[:1]}).json()
    assert chinese["status"] == "error" and chinese["msg"].startswith("发送的消息过多"), chinese
