"""get-invitation-info: a sign-up page learns what invitation a code opens for its
application, never the codes, quota or group; suspended, used-up and unknown codes are
refused clearly, patterns run on RE2, and guessing is limited per client address."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.identity import invitations
from tests.api.conftest import ok_body
from tests.conftest import unique


@pytest.fixture(scope="module")
def org(admin) -> dict[str, str]:
    name = unique("inv")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name}))
    for app in ("signup", "other"):
        ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": f"{name}-{app}",
                                                     "organization": name}))
    for label, fields in (
        ("welcome", {"code": "WELCOME-1", "quota": 3, "state": "Active", "email": "guest@x.test",
                     "application": f"{name}-signup", "signupGroup": ""}),
        ("paused", {"code": "PAUSED-1", "quota": 3, "state": "Suspended"}),
        ("spent", {"code": "SPENT-1", "quota": 1, "usedCount": 1, "state": "Active"}),
        ("pattern", {"code": "TEAM-[0-9]{4}", "defaultCode": "TEAM-0001", "isRegexp": True, "quota": 50,
                     "state": "Active"}),
        ("elsewhere", {"code": "OTHER-1", "quota": 3, "state": "Active", "application": f"{name}-other"}),
    ):
        ok_body(admin.post("/api/add-invitation", json={"owner": name, "name": label, **fields}))
    return {"org": name, "app": f"admin/{name}-signup"}


def _info(org, code: str, address: str = "192.0.2.10") -> dict:
    client = TestClient(api, client=(address, 40000))
    return client.get("/api/get-invitation-info", params={"code": code, "applicationId": org["app"]}).json()


def test_a_code_opens_its_invitation_without_its_secrets(org):
    found = _info(org, "WELCOME-1")["data"]
    assert (found["name"], found["email"]) == ("welcome", "guest@x.test")
    assert (found["code"], found["defaultCode"], found["quota"], found["usedCount"], found["createdTime"]) == \
        ("***", "***", -1, -1, "")
    assert _info(org, "TEAM-1234")["data"]["name"] == "pattern"


@pytest.mark.parametrize("code, message", [
    ("PAUSED-1", "Invitation code suspended"),
    ("SPENT-1", "Invitation code exhausted"),
    ("NOPE-1", "Invitation code is invalid"),
    ("TEAM-12345", "Invitation code is invalid"),  # a pattern matches the whole code or nothing
    ("OTHER-1", "Invitation code is invalid"),  # another application's invitation
    ("", "Invitation code is invalid"),
])
def test_codes_that_open_nothing(org, code, message):
    body = _info(org, code)
    assert body["status"] == "error" and body["msg"] == message, body


def test_guessing_is_limited_per_client_address(org):
    address = "192.0.2.99"
    for attempt in range(invitations.CODE_CHECKS[0]):
        _info(org, f"GUESS-{attempt}", address)
    refused = _info(org, "WELCOME-1", address)
    assert refused["status"] == "error" and "try again" in refused["msg"]
    assert _info(org, "WELCOME-1", "192.0.2.100")["status"] == "ok"


def test_an_unknown_application(org):
    body = TestClient(api).get("/api/get-invitation-info", params={"code": "WELCOME-1",
                                                                     "applicationId": "admin/none-such"}).json()
    assert body["status"] == "error" and "does not exist" in body["msg"]
