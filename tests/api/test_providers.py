"""Providers: the rules every write keeps (a category's types, sub types, a custom OAuth
provider's user mapping), and the edit page's test tools against local stand-ins: an SMTP server,
HTTP endpoints for SMS, Custom HTTP and the Telegram, Slack and Discord bot APIs (their base URLs
are settings), the Default captcha, and a server that never answers."""

from __future__ import annotations

import dataclasses
import json
import socket
import time

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.applications import provider_tools
from iam_console.applications.kinds.provider import DEFAULT_TYPE, TYPES
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.signin import captcha, delivery
from tests.api.conftest import ok_body
from tests.conftest import unique
from tests.sinks import HttpSink, SmtpSink, code_in


def _add(admin, owner: str, **fields) -> dict:
    return admin.post("/api/add-provider", json={"owner": owner, "name": unique("prov"), **fields}).json()


def test_every_category_takes_its_default_type_and_refuses_another_categorys(admin, make_org):
    org = make_org().name
    assert set(DEFAULT_TYPE) == set(TYPES)
    for category, default in DEFAULT_TYPE.items():
        assert default in TYPES[category]
        ok_body(admin.post("/api/add-provider", json={"owner": org, "name": unique("p"), "category": category,
                                                      "type": default}))
    refused = _add(admin, org, category="Email", type="GitHub")
    assert refused["status"] == "error" and refused["msg"] == "The type GitHub is not a type of the category Email"
    bogus = _add(admin, org, category="Pigeon", type="GitHub")
    assert bogus["status"] == "error" and bogus["msg"].startswith("The category must be Captcha, Email")


def test_the_types_casdoor_stores_beyond_its_page_are_accepted(admin, make_org):
    """Casdoor's SDKs' own data holds an Email provider of type SMTP (Casdoor sends any Email type
    it has no other sender for through SMTP); its captcha keeps its first reCAPTCHA name, and its
    newer categories are stored as given."""
    org = make_org().name
    for category, type_ in (("Email", "SMTP"), ("Captcha", "reCAPTCHA"), ("MFA", "RADIUS"), ("Log", "System Log"),
                            ("Face ID", "Local UniFace"), ("ID Verification", "Jumio"), ("Scan", "MCP Scan")):
        name = unique("p")
        ok_body(admin.post("/api/add-provider", json={"owner": org, "name": name, "category": category,
                                                      "type": type_}))
        saved = admin.get("/api/get-provider", params={"id": f"{org}/{name}"}).json()["data"]
        assert (saved["category"], saved["type"]) == (category, type_)  # stored as given
    assert _add(admin, org, category="SMS", type="SMTP")["msg"] == "The type SMTP is not a type of the category SMS"
    assert _add(admin, org, category="MFA", type="Jumio")["status"] == "error"


def test_sub_types_belong_to_their_type(admin, make_org):
    org = make_org().name
    ok_body(admin.post("/api/add-provider", json={"owner": org, "name": unique("p"), "category": "OAuth",
                                                  "type": "WeCom", "subType": "Internal"}))
    ok_body(admin.post("/api/add-provider", json={"owner": org, "name": unique("p"), "category": "Captcha",
                                                  "type": "Aliyun Captcha", "subType": "nc"}))
    refused = _add(admin, org, category="OAuth", type="GitHub", subType="Internal")
    assert refused["msg"] == "The sub type Internal is not a sub type of GitHub"


def test_a_custom_oauth_provider_needs_id_username_and_display_name_mapped(admin, make_org):
    org = make_org().name
    refused = _add(admin, org, category="OAuth", type="Custom", userMapping={"id": "sub", "email": "email"})
    assert refused["status"] == "error"
    assert refused["msg"] == "The user mapping's username, displayName: This field is required"
    blank = _add(admin, org, category="OAuth", type="Custom2",
                 userMapping={"id": " ", "username": "login", "displayName": "name"})
    assert blank["msg"] == "The user mapping's id: This field is required"
    ok_body(admin.post("/api/add-provider", json={
        "owner": org, "name": unique("p"), "category": "OAuth", "type": "Custom",
        "userMapping": {"id": "sub", "username": "preferred_username", "displayName": "name"}}))
    # other types keep no mapping
    ok_body(admin.post("/api/add-provider", json={"owner": org, "name": unique("p"), "category": "OAuth",
                                                  "type": "GitHub"}))


# --- the test tools ---

def _actor(owner: str, name: str) -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name)).one())


@pytest.fixture
def boss(make_org, make_user):
    """An organization and its admin (as the console's viewer)."""
    org = make_org()
    user = make_user(owner=org.name, is_admin=True, email="boss@example.com")
    return org.name, _actor(org.name, user.name)


def _provider(owner: str, **fields) -> str:
    name = unique("tool")
    with session_scope() as db:
        db.add(m.Provider(owner=owner, name=name, **fields))
    return name


def _tool(actor: Actor, owner: str, name: str, changes: dict, run):
    with session_scope() as db:
        provider = provider_tools.edited(db, actor, owner, name, changes)
        return run(db, provider)


@pytest.mark.parametrize("type_", ["Default", "SMTP"])
def test_send_test_email_delivers_the_content_with_the_test_code(boss, type_):
    org, actor = boss
    with SmtpSink("mailer", "pw") as smtp:
        name = _provider(org, category="Email", type=type_, host="127.0.0.1", port=smtp.port, disable_ssl=True,
                         client_id="mailer", client_secret="pw", client_id2="noreply@example.com")
        # the page's unsaved title and content are what is sent
        _tool(actor, org, name, {"title": "Hello test", "content": "<p>Code %s within 5 minutes</p>"},
              lambda db, p: provider_tools.send_test_email(db, actor, p, "someone@example.com"))
        mail = smtp.wait_for("someone@example.com")
    assert mail.message["Subject"] == "Hello test"
    assert code_in(mail.body) == provider_tools.TEST_CODE
    with session_scope() as db:  # nothing was saved
        assert db.exec(select(m.Provider).where(m.Provider.name == name)).one().title == ""


def test_send_test_email_refuses_an_invalid_address(boss):
    org, actor = boss
    name = _provider(org, category="Email", type="Default", host="127.0.0.1", port=25, disable_ssl=True)
    with pytest.raises(ServiceError) as refused:
        _tool(actor, org, name, {}, lambda db, p: provider_tools.send_test_email(db, actor, p, "not-an-address"))
    assert refused.value.template == "Invalid Email receivers: %s"
    assert provider_tools.valid_email("a@b.co") and not provider_tools.valid_email("a@b")


def test_smtp_connection_test_signs_in_and_sends_nothing(boss):
    org, actor = boss
    with SmtpSink("mailer", "pw") as smtp:
        name = _provider(org, category="Email", type="Default", host="127.0.0.1", port=smtp.port, disable_ssl=True,
                         client_id="mailer", client_secret="pw")
        _tool(actor, org, name, {}, lambda db, p: provider_tools.test_smtp(db, actor, p))
        assert smtp.connections == 1 and smtp.mails == [] and smtp.refused_logins == 0
        with pytest.raises(ServiceError) as refused:
            _tool(actor, org, name, {"clientSecret": "wrong"}, lambda db, p: provider_tools.test_smtp(db, actor, p))
        assert refused.value.template == "Failed to send the email: %s" and smtp.refused_logins >= 1


def test_send_test_sms_to_a_custom_http_gateway(boss):
    org, actor = boss
    with HttpSink() as gateway:
        name = _provider(org, category="SMS", type="Custom HTTP SMS", endpoint=f"{gateway.url}/sms", method="POST")
        _tool(actor, org, name, {}, lambda db, p: provider_tools.send_test_sms(db, actor, p, "+15550001234"))
        call = gateway.wait_for("+15550001234")
    assert call.fields["code"] == provider_tools.TEST_CODE
    assert provider_tools.can_send_sms("Twilio SMS", "", "+15550001234")
    assert not provider_tools.can_send_sms("Custom HTTP SMS", "", "+15550001234")
    assert not provider_tools.can_send_sms("Twilio SMS", "", "phone")
    with pytest.raises(ServiceError):
        _tool(actor, org, name, {"endpoint": ""}, lambda db, p: provider_tools.send_test_sms(db, actor, p, "+1555"))


def test_send_test_notification_to_a_custom_http_receiver(boss):
    org, actor = boss
    with HttpSink() as hook:
        name = _provider(org, category="Notification", type="Custom HTTP", receiver=f"{hook.url}/notify",
                         method="POST", title="text")
        _tool(actor, org, name, {}, lambda db, p: provider_tools.send_test_notification(db, actor, p, "ping"))
    assert hook.calls[0].path == "/notify" and hook.calls[0].fields == {"text": "ping"}


@pytest.mark.parametrize(("kind", "setting", "path", "authorization", "body"), [
    ("Telegram", "telegram_api", "/botbot-token/sendMessage", None, {"chat_id": "chat-42", "text": "ping"}),
    ("Slack", "slack_api", "/chat.postMessage", "Bearer bot-token", {"channel": "chat-42", "text": "ping"}),
    ("Discord", "discord_api", "/channels/chat-42/messages", "Bot bot-token", {"content": "ping"}),
])
def test_chat_notifications_build_the_services_requests(boss, monkeypatch, kind, setting, path, authorization, body):
    org, actor = boss
    with HttpSink() as api:
        monkeypatch.setattr(delivery, "settings", dataclasses.replace(delivery.settings, **{setting: api.url}))
        name = _provider(org, category="Notification", type=kind, client_secret="bot-token", receiver="chat-42")
        _tool(actor, org, name, {}, lambda db, p: provider_tools.send_test_notification(db, actor, p, "ping"))
        call = api.calls[0]
    assert (call.method, call.path) == ("POST", path)
    assert call.headers.get("Authorization") == authorization
    assert json.loads(call.body) == body


def test_a_chat_service_refusal_is_the_error(boss, monkeypatch):
    org, actor = boss
    with HttpSink(status=401) as api:
        monkeypatch.setattr(delivery, "settings", dataclasses.replace(delivery.settings, slack_api=api.url))
        name = _provider(org, category="Notification", type="Slack", client_secret="bot-token", receiver="c")
        with pytest.raises(ServiceError) as refused:
            _tool(actor, org, name, {}, lambda db, p: provider_tools.send_test_notification(db, actor, p, "x"))
    assert refused.value.template == "Failed to send the notification: the %s API answered %s"
    with pytest.raises(ServiceError) as missing:
        _tool(actor, org, name, {"clientSecret": "", "receiver": ""},
              lambda db, p: provider_tools.send_test_notification(db, actor, p, "x"))
    assert "Chat ID" in missing.value.template


def test_a_server_that_never_answers_is_an_error_within_the_time_limit(boss, monkeypatch):
    org, actor = boss
    monkeypatch.setattr(delivery, "TIMEOUT_SECONDS", 1)
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts connections, never says a word
        port = silent.getsockname()[1]
        name = _provider(org, category="Email", type="Default", host="127.0.0.1", port=port, disable_ssl=True)
        started = time.monotonic()
        with pytest.raises(ServiceError) as refused:
            _tool(actor, org, name, {}, lambda db, p: provider_tools.test_smtp(db, actor, p))
    assert time.monotonic() - started < 8
    assert "did not answer" in refused.value.args_[0]


def test_captcha_preview_draws_a_default_captcha_and_says_plainly_what_it_cannot(boss):
    org, actor = boss
    name = _provider(org, category="Captcha", type="Default")
    shown = _tool(actor, org, name, {}, lambda db, p: provider_tools.captcha_preview(db, actor, p, "127.0.0.1"))
    assert shown["captchaImage"] and shown["captchaId"]
    with session_scope() as db:
        assert captcha.verify(db, "Default", "abcde", shown["captchaId"]) is False  # a picture of digits
    with pytest.raises(ServiceError) as keyless:
        _tool(actor, org, name, {"type": "hCaptcha"},
              lambda db, p: provider_tools.captcha_preview(db, actor, p, "127.0.0.1"))
    assert keyless.value.template == "The captcha preview needs the client ID and client secret"
    with pytest.raises(ServiceError) as internet:
        _tool(actor, org, name, {"type": "reCAPTCHA v2", "clientId": "site", "clientSecret": "secret"},
              lambda db, p: provider_tools.captcha_preview(db, actor, p, "127.0.0.1"))
    assert "a service on the internet" in internet.value.template


def test_only_those_who_may_change_a_provider_test_it(boss, make_org, make_user):
    org, actor = boss
    shared = _provider("admin", category="Email", type="Default", host="127.0.0.1")
    try:
        with pytest.raises(ServiceError):  # shared: read-only to an organization admin
            _tool(actor, "admin", shared, {}, lambda db, p: p)
    finally:  # other tests count on no shared Email provider
        with session_scope() as db:
            db.delete(db.exec(select(m.Provider).where(m.Provider.owner == "admin",
                                                       m.Provider.name == shared)).one())
    other = make_org().name
    theirs = _provider(other, category="Email", type="Default", host="127.0.0.1")
    with pytest.raises(ServiceError) as missing:
        _tool(actor, other, theirs, {}, lambda db, p: p)
    assert missing.value.template == "The provider: %s is not found"
    mine = _provider(org, category="Email", type="Default", host="127.0.0.1")
    assert _tool(actor, org, mine, {"host": "mail.example.com"}, lambda db, p: p.host) == "mail.example.com"


def test_send_notification_api_reaches_a_telegram_stand_in(admin, monkeypatch):
    org = "built-in"
    with HttpSink() as api:
        monkeypatch.setattr(delivery, "settings", dataclasses.replace(delivery.settings, telegram_api=api.url))
        name = _provider(org, category="Notification", type="Telegram", client_secret="t0ken", receiver="99")
        ok_body(admin.post(f"/api/send-notification?provider={name}", json={"content": "hello"}))
        assert api.calls and json.loads(api.calls[0].body) == {"chat_id": "99", "text": "hello"}
