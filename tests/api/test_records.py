"""The audit trail through HTTP: what every write, sign-in and sign-out records (the caller's
address, language, status code, response and object, secrets redacted), the client address
behind proxies (IAM_TRUSTED_PROXIES) and its spoofing, the list's filters, the CSV export and
the retention purge; and a verification's code, shown only to its organization's admins."""

from __future__ import annotations

import csv
import io
import json
import uuid
from datetime import timedelta

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.audit import trail
from iam_console.core import addresses, counts
from iam_console.db import session_scope
from iam_console.models.base import utcnow
from tests.conftest import ADMIN_PASSWORD

BOSS_PASSWORD = "Records-boss-pass-1"


def client_at(address: str) -> TestClient:
    return TestClient(api, client=(address, 50000))


def signed_in(address: str, org: str, name: str, password: str, **headers) -> TestClient:
    client = client_at(address)
    body = client.post("/api/login", json={"organization": org, "username": name, "password": password},
                       headers=headers).json()
    assert body["status"] == "ok", body
    return client


def last_record(**where) -> m.Record:
    with session_scope() as db:
        clauses = [getattr(m.Record, k) == v for k, v in where.items()]
        return db.exec(select(m.Record).where(*clauses).order_by(m.Record.pk.desc())).first()


@pytest.fixture
def acme(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="boss", password=BOSS_PASSWORD, is_admin=True)
    return org.name


def test_a_write_records_address_language_status_response_and_object_without_secrets(acme):
    boss = signed_in("198.51.100.7", acme, "boss", BOSS_PASSWORD)
    answer = boss.post("/api/update-user", params={"id": f"{acme}/boss"}, headers={"Accept-Language": "zh"},
                       json={"owner": acme, "name": "boss", "displayName": "The Boss", "password": "Leaked-1-pw",
                             "isAdmin": True}).json()
    assert answer["status"] == "ok", answer
    record = last_record(organization=acme, action="update-user")
    assert record.client_ip == "198.51.100.7" and record.language == "zh" and record.method == "POST"
    assert record.status_code == 200 and json.loads(record.response)["status"] == "ok"
    assert record.request_uri.startswith("/api/update-user?id=") and record.user == f"{acme}/boss"
    assert json.loads(record.object)["displayName"] == "The Boss" and "Leaked-1-pw" not in record.object


def test_a_refused_write_is_recorded_with_its_answer(acme):
    boss = signed_in("198.51.100.8", acme, "boss", BOSS_PASSWORD)
    answer = boss.post("/api/add-user", json={"owner": "built-in", "name": "intruder"}).json()
    assert answer["status"] == "error"
    record = last_record(user=f"{acme}/boss", action="add-user")
    assert record.request_uri == "/api/add-user" and record.client_ip == "198.51.100.8"
    assert json.loads(record.response) == {**answer, "data": answer["data"]}
    # reads are not writes: a refused get-* is not recorded
    boss.post("/api/get-records-filter", json={"organization": "built-in"})
    assert last_record(action="get-records-filter") is None


def test_sign_in_and_sign_out_are_recorded(acme):
    boss = signed_in("198.51.100.9", acme, "boss", BOSS_PASSWORD, **{"Accept-Language": "zh"})
    login = last_record(organization=acme, action="login")
    assert login.user == "boss" and login.client_ip == "198.51.100.9" and login.language == "zh"
    boss.post("/api/logout")
    logout = last_record(organization=acme, action="logout")
    assert logout.client_ip == "198.51.100.9" and logout.request_uri == "/api/logout"
    # a wrong password is a refused sign-in, recorded with its message and no password
    client_at("198.51.100.9").post("/api/login", json={"organization": acme, "username": "boss",
                                                        "password": "Wrong-pass-1"})
    refused = last_record(action="login", client_ip="198.51.100.9", user="anonymous")
    assert json.loads(refused.response)["status"] == "error" and "Wrong-pass-1" not in refused.object


def test_a_spoofed_forwarded_for_from_an_untrusted_peer_is_ignored(acme, monkeypatch):
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks(""))
    boss = signed_in("203.0.113.5", acme, "boss", BOSS_PASSWORD, **{"X-Forwarded-For": "1.2.3.4"})
    assert last_record(organization=acme, action="login").client_ip == "203.0.113.5"
    # a proxy that is not listed is no proxy either
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks("10.0.0.0/8"))
    boss.post("/api/update-user", params={"id": f"{acme}/boss"}, headers={"X-Forwarded-For": "1.2.3.4"},
              json={"owner": acme, "name": "boss", "displayName": "Spoofed"})
    assert last_record(organization=acme, action="update-user").client_ip == "203.0.113.5"


def test_a_trusted_proxy_forwards_the_client_address(acme, monkeypatch):
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks("10.0.0.0/8, 192.0.2.1"))
    # the client spoofs a first entry; the trusted proxies appended what they saw
    signed_in("10.1.2.3", acme, "boss", BOSS_PASSWORD, **{"X-Forwarded-For": "6.6.6.6, 198.51.100.20, 192.0.2.1"})
    assert last_record(organization=acme, action="login").client_ip == "198.51.100.20"


def test_a_rate_limit_is_not_escaped_by_spoofing_the_header(acme, monkeypatch):
    """The forgotten-password lookup allows 30 per address: a new X-Forwarded-For each time
    from one untrusted peer is still one address."""
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks(""))
    peer = f"198.51.{uuid.uuid4().int % 200}.{uuid.uuid4().int % 250 + 1}"
    client = client_at(peer)
    answers = [client.get("/api/get-email-and-phone", params={"organization": acme, "username": "boss"},
                          headers={"X-Forwarded-For": f"100.64.0.{i}"}).json() for i in range(31)]
    assert all(a["status"] == "ok" for a in answers[:30]) and answers[30]["status"] == "error"


def _seed(org: str, rows: list[dict]) -> None:
    with session_scope() as db:
        db.connection().execute(m.Record.__table__.insert(), [
            {"owner": org, "name": uuid.uuid4().hex[:20], "organization": org, "user": f"{org}/u",
             "client_ip": "", "method": "POST", "request_uri": "", "action": "update-user", "language": "",
             "object": "", "response": "", "status_code": 200, "detail": "", "is_triggered": False,
             "created_time": utcnow(), **row} for row in rows])


def test_the_list_filters_each_on_an_exact_value_and_a_time_range(admin, acme):
    now = utcnow()
    _seed(acme, [{"user": f"{acme}/ann", "method": "GET", "action": "login", "created_time": now - timedelta(days=3)},
                 {"user": f"{acme}/annie", "method": "POST", "action": "add-user", "created_time": now},
                 {"user": f"{acme}/bob", "method": "DELETE", "action": "delete-user",
                  "created_time": now - timedelta(days=1)}])

    def names(**params):
        body = admin.get("/api/get-records", params={"organizationName": acme, "p": "1", "pageSize": "20",
                                                     **params}).json()
        assert body["status"] == "ok", body
        return sorted(r["user"] for r in body["data"] if r["user"] != f"{acme}/boss"), body["data2"]

    assert names(user=f"{acme}/ann")[0] == [f"{acme}/ann"]  # exact: not annie
    assert names(field="user", value=f"{acme}/ann")[0] == [f"{acme}/ann"]  # the list's search too
    assert names(method="DELETE")[0] == [f"{acme}/bob"]
    assert names(field="method", value="POST")[0] == [f"{acme}/annie"]
    assert names(action="login") == ([f"{acme}/ann"], 1)
    start = (now - timedelta(days=2)).isoformat()
    assert names(startTime=start)[0] == [f"{acme}/annie", f"{acme}/bob"]
    assert names(startTime=start, endTime=(now - timedelta(hours=1)).isoformat())[0] == [f"{acme}/bob"]
    assert admin.get("/api/get-records", params={"startTime": "yesterday"}).json()["status"] == "error"


def test_every_filter_is_served_by_an_index(database):
    indexes = {tuple(ix["column_names"]) for ix in sa.inspect(database).get_indexes("record")}
    for column in ("owner", "organization", "user", "action", "method"):
        assert (column, "created_time", "pk") in indexes
    assert ("created_time", "pk") in indexes


def test_the_csv_export_streams_the_filtered_view(admin, acme):
    many = [{"user": f"{acme}/csv", "method": "PUT", "action": f"n{i}"} for i in range(2 * trail.EXPORT_BATCH + 5)]
    _seed(acme, [{"user": f"{acme}/csv", "method": "PUT", "object": '{"a": 1}', "action": "=HYPERLINK(1)"}, *many])
    with admin.stream("GET", "/api/export-records", params={"organizationName": acme, "method": "PUT"}) as answer:
        assert answer.headers["content-type"].startswith("text/csv")
        assert "attachment" in answer.headers["content-disposition"]
        text = "".join(answer.iter_text())
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 2 * trail.EXPORT_BATCH + 6 and {r["method"] for r in rows} == {"PUT"}
    assert len({r["id"] for r in rows}) == len(rows)  # batches neither repeat nor drop a row
    assert [int(r["id"]) for r in rows] == sorted((int(r["id"]) for r in rows), reverse=True)
    # a cell a spreadsheet would run as a formula is sent as text
    assert next(r for r in rows if r["object"] == '{"a": 1}')["action"] == "'=HYPERLINK(1)"


def test_the_export_keeps_to_what_the_caller_may_read(acme, make_org):
    other = make_org().name
    _seed(other, [{"action": "secret-of-other"}])
    boss = signed_in("198.51.100.30", acme, "boss", BOSS_PASSWORD)
    assert "secret-of-other" not in boss.get("/api/export-records").text
    refused = boss.get("/api/export-records", params={"organizationName": other}).json()
    assert refused["status"] == "error"
    assert TestClient(api).get("/api/export-records").json()["status"] == "error"


def test_a_formula_cell_is_neutralised():
    assert trail._safe("=1+1") == "'=1+1" and trail._safe("-2") == "'-2" and trail._safe("ok") == "ok"
    assert trail._safe(True) == "true"


def test_the_purge_removes_old_records_in_batches_and_keeps_the_counts(database, make_org, monkeypatch):
    org = make_org().name
    old = utcnow() - timedelta(days=40)
    _seed(org, [{"created_time": old} for _ in range(25)] + [{"created_time": utcnow()} for _ in range(3)])
    monkeypatch.setattr(trail, "PURGE_BATCH", 10)
    monkeypatch.setattr(trail, "PURGE_BATCHES_PER_RUN", 2)
    first = trail.purge(session_scope, 30)
    assert first == 20  # two batches this run: the next run goes on
    assert trail.purge(session_scope, 30) >= 5
    with session_scope() as db:
        left = db.exec(select(sa.func.count()).select_from(m.Record).where(m.Record.owner == org)).one()
        assert left == 3 and counts.total(db, "record", org) == 3
    assert trail.purge(session_scope, 0) == 0  # 0 keeps everything


def _verification(owner: str, code: str) -> None:
    with session_scope() as db:
        db.add(m.Verification(owner=owner, name=uuid.uuid4().hex, type="Email", user="boss", provider="mail",
                              receiver="boss@example.com", code=code, remote_addr="198.51.100.1: "))


def test_a_verification_code_is_shown_only_to_its_organizations_admins(admin, acme):
    _verification(acme, "482913")
    boss = signed_in("198.51.100.31", acme, "boss", BOSS_PASSWORD)
    mine = boss.get("/api/get-verifications", params={"owner": acme, "p": "1", "pageSize": "10"}).json()["data"]
    assert [v["code"] for v in mine] == ["482913"]
    seen = admin.get("/api/get-verifications", params={"owner": acme, "p": "1", "pageSize": "10"}).json()["data"]
    assert [v["code"] for v in seen] == ["***"] and seen[0]["receiver"] == "boss@example.com"
    # nor is it found by searching for it
    assert admin.get("/api/get-verifications", params={"owner": acme, "field": "code", "value": "48"}
                     ).json()["status"] == "error"


def test_the_global_admin_reads_the_codes_of_the_built_in_organization(admin):
    _verification("built-in", "777111")
    found = admin.get("/api/get-verifications", params={"owner": "built-in", "field": "receiver",
                                                        "value": "boss@example.com", "p": "1", "pageSize": "50"})
    assert "777111" in [v["code"] for v in found.json()["data"]]


def test_addresses_parse_and_walk():
    trusted = addresses.parse_networks("10.0.0.0/8, ::1")
    assert addresses.client_ip("10.0.0.1", "203.0.113.1", trusted) == "203.0.113.1"
    assert addresses.client_ip("203.0.113.9", "1.1.1.1", trusted) == "203.0.113.9"
    assert addresses.client_ip("10.0.0.1", "1.1.1.1, 10.2.2.2", trusted) == "1.1.1.1"
    assert addresses.client_ip("10.0.0.1", "junk, 10.2.2.2", trusted) == "10.2.2.2"
    assert addresses.client_ip("::1", "[2001:db8::5]:443", trusted) == "2001:db8::5"
    assert addresses.client_ip("::ffff:10.0.0.1", "192.0.2.7:80", trusted) == "192.0.2.7"
    with pytest.raises(ValueError):
        addresses.parse_networks("10.0.0.0/33")


def test_the_ip_lookup_link():
    assert addresses.lookup_url("1.2.3.4", "") == ""
    assert addresses.lookup_url("1.2.3.4: ", "https://ip.example/{ip}?x=1") == "https://ip.example/1.2.3.4?x=1"
    assert addresses.lookup_url("1.2.3.4", "https://ip.example/") == "https://ip.example/1.2.3.4"
    assert addresses.lookup_url("not an address", "https://ip.example/{ip}") == ""
    assert addresses.lookup_url("1.2.3.4", "javascript:alert(1)//{ip}") == ""


def test_the_admin_password_is_not_recorded_on_sign_in(admin):
    signed_in("198.51.100.40", "built-in", "admin", ADMIN_PASSWORD)
    record = last_record(action="login", client_ip="198.51.100.40")
    assert ADMIN_PASSWORD not in record.object + record.request_uri + record.response
