"""What a deleted or renamed user or application leaves behind (core/leftovers.py): nothing
that lets anyone act as it, even once a new record takes its name; no role or permission naming
it; its history kept. Another organization's records of the same name are untouched."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.api.test_oauth import REDIRECT, make_app, pkce, token_call
from tests.conftest import unique

PASSWORD = "Leftover-pass-1"


@dataclass
class Account:
    """A user of `org` signed in to the console and, through `app`, holding tokens, an
    authorization code not yet exchanged and an API key; listed by a role and a permission."""

    org: str
    name: str
    app: m.Application
    console: TestClient
    access_token: str
    refresh_token: str
    code: str
    verifier: str
    permission: str


def _code(app: m.Application, org: str, name: str) -> tuple[str, str]:
    verifier, challenge = pkce()
    answer = TestClient(api).post("/api/login", params={
        "clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
        "state": "s", "nonce": "n", "code_challenge": challenge, "code_challenge_method": "S256"},
        json={"application": app.name, "organization": org, "username": name, "password": PASSWORD,
              "type": "code"}).json()
    assert answer["status"] == "ok", answer
    return answer["data"], verifier


def _account(admin, org: str, name: str = "bob", app: m.Application | None = None) -> Account:
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": name, "password": PASSWORD}))
    app = app or make_app(org)
    status, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                                username=name, password=PASSWORD)
    assert status == 200, tokens
    code, verifier = _code(app, org, name)
    key = unique("key")
    ok_body(admin.post("/api/add-key", json={"owner": org, "name": key, "type": "User", "organization": org,
                                             "user": name, "state": "Active"}))
    role, permission = unique("role"), unique("perm")
    ok_body(admin.post("/api/add-role", json={"owner": org, "name": role, "users": [f"{org}/{name}"],
                                              "isEnabled": True}))
    ok_body(admin.post("/api/add-permission", json={
        "owner": org, "name": permission, "users": [f"{org}/{name}"], "resourceType": "Custom",
        "resources": ["doc"], "actions": ["read"], "effect": "Allow", "isEnabled": True, "state": "Approved"}))
    return Account(org, name, app, sign_in(org, name, PASSWORD), tokens["access_token"], tokens["refresh_token"],
                   code, verifier, f"{org}/{permission}")


def session_works(client: TestClient) -> bool:
    return client.get("/api/get-account").json()["status"] == "ok"


def bearer_works(token: str) -> bool:
    client = TestClient(api)
    account = client.get("/api/get-account", headers={"Authorization": f"Bearer {token}"}).json()["status"] == "ok"
    userinfo = client.get("/api/userinfo", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert account == userinfo
    return account


def refresh_works(account: Account) -> bool:
    status, _ = token_call(grant_type="refresh_token", refresh_token=account.refresh_token,
                           client_id=account.app.client_id, client_secret=account.app.client_secret)
    return status == 200


def code_works(account: Account) -> bool:
    status, _ = token_call(grant_type="authorization_code", client_id=account.app.client_id, code=account.code,
                           code_verifier=account.verifier, redirect_uri=REDIRECT)
    return status == 200


def introspected(account: Account) -> bool:
    answer = TestClient(api).post("/api/login/oauth/introspect", data={"token": account.access_token},
                                  auth=(account.app.client_id, account.app.client_secret)).json()
    return answer["active"]


def enforce(admin, account: Account, name: str = "") -> bool:
    data = ok_body(admin.post("/api/enforce", params={"permissionId": account.permission},
                              json=[f"{account.org}/{name or account.name}", "doc", "read"]))["data"]
    return data == [True]


def listed_by(org: str, user_id: str) -> list[str]:
    """The roles and permissions of `org` whose users list `user_id`."""
    with session_scope() as db:
        return sorted(row.name for model in (m.Role, m.Permission)
                      for row in db.exec(select(model).where(model.owner == org)).all() if user_id in row.users)


def keys_of(org: str, name: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.Key).where(m.Key.organization == org,
                                                                     m.Key.user == name)).one()


def records_of(org: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(m.Record).where(m.Record.organization == org)).one()


def usable(account: Account) -> dict[str, bool]:
    return {"session": session_works(account.console), "bearer": bearer_works(account.access_token),
            "refresh": refresh_works(account), "code": code_works(account)}


DEAD = {"session": False, "bearer": False, "refresh": False, "code": False}


@pytest.fixture
def org(admin) -> str:
    name = unique("gone")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": name, "passwordType": "argon2id"}))
    return name


def test_a_deleted_user_leaves_nothing_usable_and_its_history(admin, org):
    account = _account(admin, org)
    other_org = unique("kept")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": other_org}))
    namesake = _account(admin, other_org)  # the same name in another organization
    assert enforce(admin, account) and introspected(account)
    history = records_of(org)
    ok_body(admin.post("/api/delete-user", json={"owner": org, "name": "bob"}))

    assert not introspected(account) and usable(account) == DEAD
    assert listed_by(org, f"{org}/bob") == [] and keys_of(org, "bob") == 0
    assert not enforce(admin, account)
    assert records_of(org) == history + 1  # the delete's own record besides the rest
    # a new account of the same name inherits nothing: no sign-in, token, code, role or permission
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "bob", "password": PASSWORD}))
    assert usable(account) == DEAD
    assert not enforce(admin, account) and listed_by(org, f"{org}/bob") == []
    with session_scope() as db:
        assert db.exec(select(m.AuthSession).where(m.AuthSession.owner == org)).first() is None
        assert db.exec(select(m.Session).where(m.Session.owner == org)).first() is None
    # the other organization's bob is untouched
    assert listed_by(other_org, f"{other_org}/bob") and keys_of(other_org, "bob") == 1
    assert enforce(admin, namesake) and introspected(namesake)
    assert usable(namesake) == {"session": True, "bearer": True, "refresh": True, "code": True}


def test_a_user_flagged_deleted_is_signed_out_and_keeps_its_lists(admin, org):
    account = _account(admin, org)
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob", "columns": "isDeleted"},
                       json={"owner": org, "name": "bob", "isDeleted": True}))
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob", "columns": "isDeleted"},
                       json={"owner": org, "name": "bob", "isDeleted": False}))
    assert usable(account) == DEAD  # the flag lifted, nothing issued before comes back
    assert listed_by(org, f"{org}/bob") and keys_of(org, "bob") == 1 and enforce(admin, account)


def test_with_soft_deletion_a_deleted_user_stays_flagged_and_released(admin, org):
    ok_body(admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                       json={"owner": "admin", "name": org, "enableSoftDeletion": True}))
    account = _account(admin, org)
    ok_body(admin.post("/api/delete-user", json={"owner": org, "name": "bob"}))
    user = ok_body(admin.get("/api/get-user", params={"id": f"{org}/bob"}))["data"]
    assert user["isDeleted"] is True and user["deletedTime"]
    assert usable(account) == DEAD and not introspected(account)
    assert listed_by(org, f"{org}/bob") == [] and keys_of(org, "bob") == 0 and not enforce(admin, account)
    with session_scope() as db:
        assert db.exec(select(m.Record).where(m.Record.organization == org, m.Record.action == "delete-user")).all()


def test_a_renamed_user_is_signed_out_and_its_lists_follow(admin, org):
    account = _account(admin, org)
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob"}, json={"owner": org, "name": "robert"}))
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "bob", "password": PASSWORD}))
    assert usable(account) == DEAD
    assert listed_by(org, f"{org}/bob") == [] and not enforce(admin, account)
    assert len(listed_by(org, f"{org}/robert")) == 2 and enforce(admin, account, "robert")
    assert keys_of(org, "robert") == 1 and keys_of(org, "bob") == 0
    assert session_works(sign_in(org, "robert", PASSWORD))


def _default_application(org: str) -> str:
    with session_scope() as db:
        return db.exec(select(m.Organization.default_application).where(m.Organization.name == org)).one()


def test_a_deleted_application_leaves_nothing_usable(admin, org):
    app, kept = make_app(org), make_app(org)
    ok_body(admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                       json={"owner": "admin", "name": org, "defaultApplication": app.name}))
    account = _account(admin, org, app=app)
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob", "columns": "signupApplication"},
                       json={"owner": org, "name": "bob", "signupApplication": app.name}))
    status, other = token_call(grant_type="password", client_id=kept.client_id, client_secret=kept.client_secret,
                               username="bob", password=PASSWORD)
    assert status == 200, other
    history = records_of(org)
    ok_body(admin.post("/api/delete-application", json={"owner": "admin", "name": app.name}))

    assert _default_application(org) == ""
    # a new application of that name, even with the same client, inherits nothing
    make_app(org, name=app.name, client_id=app.client_id, client_secret=app.client_secret)
    assert {k: v for k, v in usable(account).items() if k != "session"} == {
        "bearer": False, "refresh": False, "code": False}
    assert bearer_works(other["access_token"])  # the other application's tokens stay
    assert records_of(org) == history + 1  # the delete's own record besides the rest
    # the user's sign-up application is released: the user can be saved again
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob"},
                       json={"owner": org, "name": "bob", "displayName": "Bob"}))


def test_a_renamed_application_takes_its_settings_along(admin, org):
    app = make_app(org)
    ok_body(admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                       json={"owner": "admin", "name": org, "defaultApplication": app.name}))
    account = _account(admin, org, app=app)
    renamed = unique("renamed")
    ok_body(admin.post("/api/update-application", params={"id": f"admin/{app.name}"},
                       json={"owner": "admin", "name": renamed}))
    assert _default_application(org) == renamed
    assert not bearer_works(account.access_token) and not refresh_works(account)


def test_the_built_in_application_cannot_be_deleted(admin):
    body = admin.post("/api/delete-application", json={"owner": "admin", "name": "app-built-in"}).json()
    assert body["status"] == "error" and "cannot be deleted" in body["msg"]


def test_a_deleted_global_admin_ends_its_impersonations(admin, org):
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "alice", "password": PASSWORD}))
    chief = unique("chief")
    ok_body(admin.post("/api/add-user", json={"owner": "built-in", "name": chief, "password": PASSWORD,
                                              "isAdmin": True}))
    impersonating = sign_in("built-in", chief, PASSWORD)
    ok_body(impersonating.post("/api/impersonate-user", data={"owner": org, "name": "alice"}))
    assert session_works(impersonating)
    ok_body(admin.post("/api/delete-user", json={"owner": "built-in", "name": chief}))
    assert not session_works(impersonating)
    assert session_works(sign_in(org, "alice", PASSWORD))  # alice's own sign-ins are hers
