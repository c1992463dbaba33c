"""Outbound requests to internal addresses (core/outbound.py), end to end: an organization
admin configures, through the API, a Custom HTTP SMS gateway, an SMTP server or an LDAP server
at an internal address and makes the server call it. The guard refuses with an error naming the
host and the listener there receives no connection; once IAM_OUTBOUND_ALLOW lists it, the same
configuration works. The suite allows 127.0.0.1 (tests/conftest.py): each test here sets its own
allow list (the `allow` fixture, empty until the test widens it)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from iam_console.core import outbound
from tests import ldap_server
from tests.api.conftest import sign_in
from tests.conftest import require_service, unique
from tests.sinks import HttpSink, SmtpSink, TcpSink, code_in

PASSWORD = "Outbound-pass-1"
REFUSED = "Refused to connect to %s: an internal address, not listed in IAM_OUTBOUND_ALLOW"


@dataclass
class Admin:
    org: str
    client: TestClient

    def add(self, kind: str, **fields) -> str:
        key, name = ("id" if kind == "ldap" else "name"), unique(kind)
        answer = self.client.post(f"/api/add-{kind}", json={"owner": self.org, key: name, **fields}).json()
        assert answer["status"] == "ok", answer
        return name

    def send_sms(self) -> tuple[dict, str]:
        """A code to a new phone number of their own: (the envelope, the number in E.164)."""
        number = f"202555{uuid.uuid4().int % 10000:04d}"
        answer = self.client.post("/api/send-verification-code", data={
            "dest": number, "type": "phone", "method": "reset", "countryCode": "US"}).json()
        return answer, f"+1{number}"

    def send_email(self, address: str) -> dict:
        return self.client.post("/api/send-verification-code", data={
            "dest": address, "type": "email", "method": "reset"}).json()


@pytest.fixture
def boss(make_org, make_user) -> Admin:
    """The admin of a new organization, signed in."""
    org = make_org(country_codes=["US"])
    user = make_user(owner=org.name, password=PASSWORD, is_admin=True, country_code="US")
    return Admin(org.name, sign_in(org.name, user.name, PASSWORD))


def _sms_gateway(boss: Admin, endpoint: str) -> str:
    return boss.add("provider", category="SMS", type="Custom HTTP SMS", endpoint=endpoint, method="POST")


# --- SMS ---

@pytest.mark.parametrize(("endpoint", "host"), [
    ("http://localhost:{port}/send", "localhost"),
    ("http://127.0.0.1:{port}/send", "127.0.0.1"),
    ("http://[::1]:{port6}/send", "::1"),
    ("http://loopback.test:{port}/send", "loopback.test"),  # a name resolving to loopback
    ("http://[::ffff:127.0.0.1]:{port}/send", "::ffff:127.0.0.1"),
    ("http://0.0.0.0:{port}/send", "0.0.0.0"),
    ("http://169.254.169.254/latest/meta-data/", "169.254.169.254"),
    ("http://10.20.30.40:{port}/send", "10.20.30.40"),
    ("http://[fd00::1]:{port}/send", "fd00::1"),
])
def test_an_sms_gateway_at_an_internal_address_is_refused(boss, allow, fake_dns, endpoint, host):
    answers, _ = fake_dns
    answers["loopback.test"] = [["127.0.0.1"]]
    with HttpSink() as sink, HttpSink(host="::1") as sink6:
        _sms_gateway(boss, endpoint.format(port=sink.port, port6=sink6.port))
        answer, _ = boss.send_sms()
        assert answer["status"] == "error"
        assert answer["msg"] == "Failed to send the SMS: " + REFUSED % host
        assert sink.connections == 0 and sink6.connections == 0


@pytest.mark.parametrize(("allowed", "endpoint"), [
    ("127.0.0.1", "http://localhost:{port}/send"),
    ("127.0.0.0/8", "http://127.0.0.1:{port}/send"),
    ("LocalHost", "http://localhost:{port}/send"),
    ("10.0.0.0/8, ::1", "http://[::1]:{port6}/send"),
])
def test_an_sms_gateway_that_the_allow_list_names_works(boss, allow, allowed, endpoint):
    allow(allowed)
    with HttpSink() as sink, HttpSink(host="::1") as sink6:
        _sms_gateway(boss, endpoint.format(port=sink.port, port6=sink6.port))
        answer, phone = boss.send_sms()
        assert answer["status"] == "ok", answer
        call = (sink6 if "::1" in endpoint else sink).wait_for(phone)
        assert call.fields["phoneNumber"] == phone and call.fields["content"] == call.fields["code"]


def test_a_gateway_redirecting_to_an_internal_address_is_refused_at_the_hop(boss, allow):
    allow("127.0.0.1")  # the gateway, not the address it redirects to
    with HttpSink(host="127.0.0.2") as internal, \
            HttpSink(status=307, location=f"{internal.url}/send") as gateway:
        _sms_gateway(boss, f"{gateway.url}/send")
        answer, phone = boss.send_sms()
        assert answer["msg"] == "Failed to send the SMS: " + REFUSED % "127.0.0.2"
        assert len(gateway.calls) == 1 and internal.connections == 0
        # allowed, the redirect is followed with the same request
        allow("127.0.0.1, 127.0.0.2")
        answer, phone = boss.send_sms()
        assert answer["status"] == "ok", answer
        assert internal.wait_for(phone).method == "POST"


# --- SMTP ---

@pytest.mark.parametrize(("host", "allowed"), [
    ("localhost", "localhost"), ("127.0.0.1", "127.0.0.1"), ("0.0.0.0", "0.0.0.0/32"),
    ("::ffff:127.0.0.1", "127.0.0.1"),  # an IPv4-mapped address is judged, and allowed, as its IPv4
])
def test_an_smtp_server_at_an_internal_address_is_refused_until_allowed(boss, allow, host, allowed):
    with SmtpSink() as smtp:
        boss.add("provider", category="Email", type="Default", host=host, port=smtp.port, disableSsl=True,
                 clientId="mailer@corp.test")
        address = f"{uuid.uuid4().hex[:10]}@new.test"
        answer = boss.send_email(address)
        assert answer["msg"] == "Failed to send the email: " + REFUSED % host
        assert smtp.connections == 0
        allow(allowed)
        assert boss.send_email(address)["status"] == "ok"
        assert code_in(smtp.wait_for(address).body)


# --- LDAP ---

@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "::ffff:127.0.0.1"])
def test_an_ldap_server_at_an_internal_address_is_refused_until_allowed(boss, allow, directory, host):
    with TcpSink() as listener:
        ident = boss.add("ldap", **directory.ldap_record(host=host, port=listener.port))
        params = {"id": f"{boss.org}/{ident}"}
        answer = boss.client.get("/api/get-ldap-users", params=params).json()
        assert answer["msg"] == "Failed to connect to the LDAP server: " + REFUSED % host
        assert listener.connections == 0
    allow("127.0.0.1")
    record = boss.client.get("/api/get-ldap", params=params).json()["data"]
    assert boss.client.post("/api/update-ldap", params=params,
                            json={**record, "port": directory.port}).json()["status"] == "ok"
    answer = boss.client.get("/api/get-ldap-users", params=params).json()
    assert answer["status"] == "ok" and len(answer["data"]["users"]) == directory.users


def test_a_directory_cannot_refer_the_server_to_another_host(boss, allow):
    """An LDAP referral is the directory's redirect: it is not followed."""
    require_service(ldap_server.available(), "OpenLDAP slapd")
    allow("127.0.0.1")
    with TcpSink(host="127.0.0.2") as elsewhere, ldap_server.Directory(
            users=3, referral=f"ldap://127.0.0.2:{elsewhere.port}/ou=elsewhere,{ldap_server.SUFFIX}") as directory:
        ident = boss.add("ldap", **directory.ldap_record(baseDn=f"ou=elsewhere,{ldap_server.SUFFIX}"))
        answer = boss.client.get("/api/get-ldap-users", params={"id": f"{boss.org}/{ident}"}).json()
        assert answer["status"] == "ok" and answer["data"]["users"] == []
        assert elsewhere.connections == 0


# --- destinations checked on save ---

UNUSUAL = ["0177.0.0.1", "127.000.000.001", "127.1", "0x7f.1", "2130706433"]


def _destinations(org: str, host: str) -> list[tuple[str, dict]]:
    """(kind, body) of a record of each kind whose `host` the server would itself connect to."""
    url = f"http://{host}:8080/x"
    def provider() -> dict:
        return {"owner": org, "name": unique("provider"),
                "userMapping": {"id": "sub", "username": "preferred_username", "displayName": "name"}}

    return [
        ("webhook", {"owner": "admin", "name": unique("hook"), "organization": org, "url": url}),
        ("provider", {**provider(), "category": "SMS", "type": "Custom HTTP SMS", "endpoint": url}),
        ("provider", {**provider(), "category": "SMS", "type": "Custom HTTP SMS", "providerUrl": url}),
        ("provider", {**provider(), "category": "Notification", "type": "Custom HTTP", "receiver": url}),
        ("provider", {**provider(), "category": "Email", "type": "Default", "host": host, "port": 25}),
        ("provider", {**provider(), "category": "Storage", "type": "MinIO", "endpoint": url}),
        ("provider", {**provider(), "category": "OAuth", "type": "Custom", "customTokenUrl": url}),
        ("provider", {**provider(), "category": "OAuth", "type": "Custom", "customUserInfoUrl": url}),
        ("provider", {**provider(), "category": "OAuth", "type": "Custom", "issuerUrl": url}),
        ("provider", {**provider(), "category": "OAuth", "type": "GitLab", "domain": host}),
        ("provider", {**provider(), "category": "OAuth", "type": "Okta", "domain": url}),
        ("ldap", {"owner": org, "id": unique("ldap"), "host": host, "port": 389}),
        ("syncer", {"owner": "admin", "name": unique("syncer"), "organization": org, "databaseType": "mysql",
                    "host": host, "port": 3306}),
        ("syncer", {"owner": "admin", "name": unique("syncer"), "organization": org, "databaseType": "mysql",
                    "host": "db.example.com", "port": 3306, "sshType": "password", "sshHost": host}),
        ("adapter", {"owner": org, "name": unique("adapter"), "useSameDb": False, "type": "Database",
                     "databaseType": "mysql", "host": host, "port": 3306}),
    ]


@pytest.mark.parametrize("host", UNUSUAL)
def test_a_destination_the_guard_would_refuse_is_refused_on_save(admin, make_org, host):
    """Issue 26: http://0177.0.0.1/x was saved as a webhook's URL and broke the worker. Every field
    naming a place the server itself calls refuses what the guard would, and nothing is written."""
    org = make_org().name
    for kind, body in _destinations(org, host):
        answer = admin.post(f"/api/add-{kind}", json=body).json()
        assert answer["status"] == "error", (kind, body, answer)
        assert answer["msg"] == outbound.USUAL_IPV4 % host, (kind, body, answer)
        ident = f"{body['owner']}/{body.get('name') or body['id']}"
        assert admin.get(f"/api/get-{kind}", params={"id": ident}).json()["data"] is None


def test_the_same_records_at_usual_addresses_are_saved_and_updates_are_checked(admin, make_org):
    org = make_org().name
    for kind, body in _destinations(org, "8.8.8.8"):
        assert admin.post(f"/api/add-{kind}", json=body).json()["status"] == "ok", (kind, body)
    kind, body = _destinations(org, "hooks.example.com")[0]
    assert admin.post(f"/api/add-{kind}", json=body).json()["status"] == "ok"
    ident = f"admin/{body['name']}"
    stored = admin.get("/api/get-webhook", params={"id": ident}).json()["data"]
    refused = admin.post("/api/update-webhook", params={"id": ident},
                         json={**stored, "url": "ftp://hooks.example.com/x"}).json()
    assert refused["msg"] == "The URL must be an http or https URL: ftp://hooks.example.com/x"
    assert admin.get("/api/get-webhook", params={"id": ident}).json()["data"]["url"] == body["url"]


def test_fields_the_server_never_calls_keep_what_casdoor_keeps(admin, make_org):
    """The same fields of other types are not destinations: a Telegram provider's receiver is a
    chat ID, a Custom HTTP SMS provider's issuer URL its content type, a SAML provider's endpoint
    the browser's."""
    org = make_org().name
    for fields in ({"category": "Notification", "type": "Telegram", "receiver": "-1001234567"},
                   {"category": "SMS", "type": "Custom HTTP SMS", "endpoint": "https://sms.example.com/send",
                    "providerUrl": "not a url", "issuerUrl": "application/json"},
                   {"category": "OAuth", "type": "GitHub", "issuerUrl": "127.1", "customAuthUrl": ""},
                   {"category": "OAuth", "type": "AzureAD", "domain": "72f988bf-86f1-41af-91ab-2d7cd011db47"}):
        answer = admin.post("/api/add-provider", json={"owner": org, "name": unique("provider"), **fields}).json()
        assert answer["status"] == "ok", (fields, answer)
