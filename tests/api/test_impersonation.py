"""impersonate-user and exit-impersonate-user: a global admin in the console acts as a
user, with that user's rights only, and comes back; nobody else starts one, nothing
nests, and both ends are recorded."""

from __future__ import annotations

from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.identity.impersonation import IMPERSONATION_HOURS
from iam_console.signin import auth
from tests.api.conftest import ok_body, sign_in
from tests.conftest import ADMIN_PASSWORD, unique

PASSWORD = "Imp-pass-1"


@pytest.fixture(scope="module")
def org(admin) -> str:
    name = unique("imp")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name}))
    for user, is_admin in (("boss", True), ("alice", False)):
        ok_body(admin.post("/api/add-user", json={"owner": name, "name": user, "password": PASSWORD,
                                              "isAdmin": is_admin}))
    return name


def _records(action: str, owner: str, name: str) -> int:
    with session_scope() as db:
        rows = db.exec(select(m.Record).where(m.Record.action == action, m.Record.user == "built-in/admin")).all()
    return sum(1 for row in rows if f'"name": "{name}"' in row.object and f'"owner": "{owner}"' in row.object)


def test_a_global_admin_acts_as_a_user_and_comes_back(org):
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    admin_token = admin.cookies["iam_session"]
    assert ok_body(admin.post("/api/impersonate-user", data={"owner": org, "name": "alice"}))["data"] == f"{org}/alice"
    impersonating = admin.cookies["iam_session"]
    assert impersonating != admin_token

    account = ok_body(admin.get("/api/get-account"))["data"]
    assert (account["owner"], account["name"]) == (org, "alice")
    # alice's rights, nothing of the admin's
    assert admin.get("/api/get-users", params={"owner": "built-in"}).json()["status"] == "error"
    assert ok_body(admin.get("/api/get-user", params={"id": f"{org}/boss"}))["data"] is None
    with session_scope() as db:
        row = db.exec(select(m.AuthSession).where(
            m.AuthSession.token_hash == auth.hash_token(impersonating))).one()
        assert row.impersonator == "built-in/admin"
        assert row.expires_at - row.created_time <= timedelta(hours=IMPERSONATION_HOURS, seconds=1)

    assert ok_body(admin.post("/api/exit-impersonate-user"))["data"] == "built-in/admin"
    assert ok_body(admin.get("/api/get-account"))["data"]["name"] == "admin"
    assert admin.cookies["iam_session"] == admin_token
    with session_scope() as db:
        assert auth.account_for_token(db, impersonating) is None  # the impersonation is over
    assert _records("impersonate-user", org, "alice") == 1 and _records("exit-impersonate-user", org, "alice") == 1


def test_only_a_global_admins_console_session_impersonates(admin, org):
    boss = sign_in(org, "boss", PASSWORD)
    refused = boss.post("/api/impersonate-user", data={"owner": org, "name": "alice"}).json()
    assert refused["status"] == "error" and refused["msg"] == "Unauthorized operation"
    keys = ok_body(admin.post("/api/add-user-keys", json={"owner": "built-in", "name": "admin"}))["data2"]
    by_key = TestClient(api).post("/api/impersonate-user", params={
        "accessKey": keys["accessKey"], "accessSecret": keys["accessSecret"]}, data={"owner": org, "name": "alice"})
    assert by_key.json()["status"] == "error" and "console session" in by_key.json()["msg"]
    anonymous = TestClient(api).post("/api/impersonate-user", data={"owner": org, "name": "alice"}).json()
    assert anonymous["status"] == "error"


@pytest.mark.parametrize("owner, name, message", [
    ("built-in", "admin", "A global admin cannot be impersonated"),
    ("{org}", "nobody", "doesn't exist"),
    ("", "", "doesn't exist"),
])
def test_who_cannot_be_impersonated(org, owner, name, message):
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    body = admin.post("/api/impersonate-user", data={"owner": owner.format(org=org), "name": name}).json()
    assert body["status"] == "error" and message in body["msg"], body
    assert ok_body(admin.get("/api/get-account"))["data"]["name"] == "admin"


def test_impersonation_does_not_nest_and_exit_needs_one(org):
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    assert admin.post("/api/exit-impersonate-user").json()["msg"] == "You are not impersonating anyone"
    ok_body(admin.post("/api/impersonate-user", data={"owner": org, "name": "alice"}))
    nested = admin.post("/api/impersonate-user", data={"owner": org, "name": "boss"}).json()
    assert nested["status"] == "error"
    # the way back must be the impersonator's own live session
    admin.cookies.set("iam_impersonator", "forged-token", path="/api/")
    assert "sign in again" in admin.post("/api/exit-impersonate-user").json()["msg"]
