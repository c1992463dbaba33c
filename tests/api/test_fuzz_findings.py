"""What schema fuzzing (tests/fuzz) found: each answered with a clear error, nothing written."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.models import Record

from .conftest import ENVELOPE

NO_NAME = b'--x\r\nContent-Disposition: form-data\r\n\r\nabc\r\n--x--\r\n'
MALFORMED = [
    (NO_NAME, "multipart/form-data; boundary=x"),
    (b"a=1", "multipart/form-data"),  # no boundary
]
FORM_ROUTES = ["/api/set-password", "/api/remove-user-from-group", "/api/send-verification-code",
               "/api/reset-email-or-phone", "/api/mfa/setup/initiate", "/api/set-preferred-mfa",
               "/api/webauthn/delete-credential", "/api/logout"]


@pytest.mark.parametrize("body,content_type", MALFORMED)
@pytest.mark.parametrize("path", FORM_ROUTES)
def test_malformed_multipart_is_an_envelope_error(admin, path, body, content_type):
    response = admin.post(path, content=body, headers={"content-type": content_type})
    assert response.status_code == 200
    answer = response.json()
    assert set(answer) == ENVELOPE and answer["status"] == "error"
    assert answer["msg"].startswith("The request body is not a valid form: ")


@pytest.mark.parametrize("body,content_type", MALFORMED)
def test_malformed_multipart_at_the_token_endpoint_is_an_oauth_error(database, body, content_type):
    response = TestClient(api).post("/api/login/oauth/access_token", content=body,
                                    headers={"content-type": content_type})
    assert response.status_code == 400
    assert response.json()["error"] == "invalid_request"


def _records_named(name: str) -> list[Record]:
    with session_scope() as db:
        return list(db.exec(select(Record).where(Record.name == name)))


@pytest.mark.parametrize("record,message", [
    ({"owner": "no-such-org", "organization": "no-such-org"}, "The organization: no-such-org does not exist"),
    ({"owner": "built-in", "organization": "no-such-org"}, "The organization: no-such-org does not exist"),
    ({"owner": "built-in\x01", "organization": "built-in"}, "The owner cannot contain control characters"),
    ({"owner": "built-in", "name": "a/b"}, "The name cannot contain '/' or control characters"),
    ({"owner": "built-in", "name": "tab\tname"}, "The name cannot contain '/' or control characters"),
])
def test_add_record_checks_owner_name_and_organization(admin, record, message):
    name = record.setdefault("name", "fuzz-record-refused")
    answer = admin.post("/api/add-record", json={**record, "action": "probe"}).json()
    assert answer["status"] == "error" and answer["msg"].startswith(message), answer
    assert _records_named(name) == []


def test_add_record_of_an_existing_organization_is_written(admin):
    answer = admin.post("/api/add-record", json={"owner": "built-in", "name": "fuzz-record-kept",
                                                 "action": "probe"}).json()
    assert answer == {**answer, "status": "ok", "data": "Affected"}
    assert [r.organization for r in _records_named("fuzz-record-kept")] == ["built-in"]


def test_a_record_keeps_the_longest_user_id(admin, make_org, make_user):
    """The acting user's id is owner/name, up to 201 characters: the column holds it whole
    (VARCHAR(100) broke the write on PostgreSQL), and the audit trail keeps it."""
    assert Record.__table__.columns["user"].type.length >= 201
    org = make_org("o" * 100)
    make_user(org.name, "u" * 100, password="long-names-pass", is_admin=True)
    client = TestClient(api)
    login = client.post("/api/login", json={"organization": org.name, "username": "u" * 100,
                                            "password": "long-names-pass"}).json()
    assert login["status"] == "ok", login
    added = client.post("/api/add-role", json={"owner": org.name, "name": "fuzz-role"}).json()
    assert added["data"] == "Affected", added
    with session_scope() as db:
        users = db.exec(select(Record.user).where(Record.owner == org.name, Record.action == "add-role")).all()
    assert users == [f"{org.name}/{'u' * 100}"]
