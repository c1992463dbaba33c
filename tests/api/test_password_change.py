"""A changed password signs out whoever may have learnt the old one: through every route that
sets a password (set-password and update-user, by the user or by an admin), the account's other
console sessions end and its access and refresh tokens stop working; the session the user
changed their own password from stays."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from fastapi.testclient import TestClient

from iam_console import models as m
from iam_console.api.app import api
from tests.api.conftest import sign_in
from tests.api.test_oauth import make_app, token_call

PASSWORD = "old-pass-1"
NEW_PASSWORD = "new-pass-2"
ADMIN_PASSWORD = "chief-pass-1"


@dataclass
class Account:
    org: str
    name: str
    app: m.Application
    own: TestClient  # the session the change may come from
    other: TestClient  # another session of the same account, elsewhere
    access_token: str
    refresh_token: str


@pytest.fixture
def account(make_org, make_user) -> Account:
    org = make_org()
    make_user(owner=org.name, name="bob", password=PASSWORD)
    make_user(owner=org.name, name="chief", password=ADMIN_PASSWORD, is_admin=True)
    app = make_app(org.name)
    status, tokens = token_call(grant_type="password", client_id=app.client_id, client_secret=app.client_secret,
                                username="bob", password=PASSWORD)
    assert status == 200, tokens
    return Account(org.name, "bob", app, sign_in(org.name, "bob", PASSWORD), sign_in(org.name, "bob", PASSWORD),
                   tokens["access_token"], tokens["refresh_token"])


def session_works(client: TestClient) -> bool:
    return client.get("/api/get-account").json()["status"] == "ok"


def bearer_works(token: str) -> bool:
    answer = TestClient(api).get("/api/get-account", headers={"Authorization": f"Bearer {token}"}).json()
    return answer["status"] == "ok"


def refresh_works(account: Account) -> bool:
    status, _ = token_call(grant_type="refresh_token", refresh_token=account.refresh_token,
                           client_id=account.app.client_id, client_secret=account.app.client_secret)
    return status == 200


def set_password(caller: TestClient, account: Account, old: str = "", **kw) -> dict:
    return caller.post("/api/set-password", data={"userOwner": account.org, "userName": account.name,
                                                  "oldPassword": old, "newPassword": NEW_PASSWORD}, **kw).json()


def update_password(caller: TestClient, account: Account) -> dict:
    return caller.post("/api/update-user", params={"id": f"{account.org}/{account.name}", "columns": "password"},
                       json={"owner": account.org, "name": account.name, "password": NEW_PASSWORD}).json()


def org_admin(account: Account) -> TestClient:
    return sign_in(account.org, "chief", ADMIN_PASSWORD)


# (who changes it, how) -> (the answer, the changer's console session if it has one). A user changes
# their own password through set-password only: update-user refuses them the field (it needs the old one).
CHANGES: dict[str, Callable[[Account, TestClient], tuple[dict, TestClient | None]]] = {
    "set-password by the user": lambda a, admin: (set_password(a.own, a, PASSWORD), a.own),
    "set-password by an organization admin": lambda a, admin: ((c := org_admin(a)) and set_password(c, a), c),
    "update-user by an organization admin": lambda a, admin: ((c := org_admin(a)) and update_password(c, a), c),
    "set-password by the global admin": lambda a, admin: (set_password(admin, a), admin),
    "update-user by the global admin": lambda a, admin: (update_password(admin, a), admin),
    "set-password by the user with a bearer token": lambda a, admin: (
        set_password(TestClient(api), a, PASSWORD, headers={"Authorization": f"Bearer {a.access_token}"}), None),
}


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_changed_password_ends_the_other_sessions_and_the_tokens(account, admin, change):
    assert session_works(account.own) and session_works(account.other) and bearer_works(account.access_token)
    answer, changer = CHANGES[change](account, admin)
    assert answer["status"] == "ok", answer

    assert not session_works(account.other), "another session of the account still works"
    assert not bearer_works(account.access_token), "an access token issued before still works"
    assert not refresh_works(account), "a refresh token issued before still works"
    if changer is not None:
        assert session_works(changer), "the changer's own session ended"
    by_the_user = changer is account.own
    assert session_works(account.own) is by_the_user
    # the new password signs in; the old one does not
    assert sign_in(account.org, account.name, NEW_PASSWORD)
    assert TestClient(api).post("/api/login", json={"organization": account.org, "username": account.name,
                                                    "password": PASSWORD}).json()["status"] == "error"


def test_a_refused_change_ends_nothing(account):
    answer = set_password(account.own, account, "not-the-old-one")
    assert answer["status"] == "error"
    assert session_works(account.other) and bearer_works(account.access_token) and refresh_works(account)


def test_another_account_keeps_its_sessions(account, make_user):
    make_user(owner=account.org, name="carol", password=PASSWORD)
    carol = sign_in(account.org, "carol", PASSWORD)
    assert set_password(account.own, account, PASSWORD)["status"] == "ok"
    assert session_works(carol)
