"""Deleting an organization takes along everything it holds, and renaming one that
holds records is refused: nothing is left that no one can reach, and no new
organization of the same name inherits another's users."""

from __future__ import annotations

import contextlib
from pathlib import Path

from sqlmodel import func, select

from iam_console import models as m
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope
from iam_console.settings import settings
from tests.api.conftest import sign_in
from tests.conftest import unique
from tests.pictures import png

PASSWORD = "Doomed-pass-1"


def _ok(answer) -> dict:
    body = answer.json()
    assert body["status"] == "ok" and body["data"] != "Unaffected", body
    return body


def _populate(admin, org: str) -> None:
    """An organization holding one record of most kinds, a signed-in user and an avatar file."""
    _ok(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
    _ok(admin.post("/api/add-group", json={"owner": org, "name": "staff"}))
    _ok(admin.post("/api/add-user", json={"owner": org, "name": "alice", "password": PASSWORD,
                                          "groups": [f"{org}/staff"]}))
    _ok(admin.post("/api/add-application", json={"owner": "admin", "name": f"{org}-app", "organization": org}))
    _ok(admin.post("/api/add-token", json={"owner": "admin", "name": f"{org}-token", "organization": org,
                                           "application": f"{org}-app", "user": "alice"}))
    _ok(admin.post("/api/add-provider", json={"owner": org, "name": f"{org}-mail", "category": "Email",
                                              "type": "Default"}))
    _ok(admin.post("/api/add-cert", json={"owner": org, "name": f"{org}-cert", "scope": "JWT", "type": "x509",
                                          "cryptoAlgorithm": "RS256", "bitSize": 2048, "expireInYears": 1}))
    _ok(admin.post("/api/add-role", json={"owner": org, "name": "readers", "users": [f"{org}/alice"]}))
    _ok(admin.post("/api/add-plan", json={"owner": org, "name": "gold", "price": 5.0, "currency": "USD"}))
    _ok(admin.post("/api/add-ldap", json={"owner": org, "id": "dir", "serverName": "Dir", "host": "ldap.example"}))
    _ok(admin.post("/api/add-webhook", json={"owner": "admin", "name": f"{org}-hook", "organization": org,
                                             "url": "https://example.com/hook"}))
    _ok(admin.post("/api/upload-resource", params={"owner": org, "user": "alice", "tag": "avatar"},
                   files={"file": ("a.png", png(), "image/png")}))
    sign_in(org, "alice", PASSWORD)


def _held(org: str) -> dict[str, int]:
    """How many rows of each table name the organization (as owner or organization)."""
    with session_scope() as db:
        counts = {name: db.exec(select(func.count()).select_from(kind.model).where(
            getattr(kind.model, kind.organization_attr) == org)).one()
            for name, kind in REGISTRY.items() if name != "organization"}
        counts["sign-ins"] = db.exec(select(func.count()).select_from(m.AuthSession)
                                     .where(m.AuthSession.owner == org)).one()
        counts["memberships"] = db.exec(select(func.count()).select_from(m.UserGroup)
                                        .where(m.UserGroup.group_id.startswith(f"{org}/"))).one()
    return {name: count for name, count in counts.items() if count}


def _avatars(org: str) -> Path:
    return settings.files_dir / "avatar" / org


def test_deleting_an_organization_takes_along_what_it_holds(admin):
    org, neighbour = unique("doomed"), unique("neighbour")
    _populate(admin, org)
    _populate(admin, neighbour)
    before = _held(org)
    assert {"user", "group", "application", "token", "provider", "cert", "role", "plan", "product", "ldap",
            "webhook", "resource", "sign-ins", "memberships", "record"} <= set(before), before
    assert _avatars(org).is_dir()

    _ok(admin.post("/api/delete-organization", json={"owner": "admin", "name": org}))

    assert _held(org) == {"record": before["record"] + 1}  # the audit trail stays, with the deletion in it
    assert not _avatars(org).exists()
    assert _held(neighbour).keys() == before.keys() and _avatars(neighbour).is_dir()
    assert admin.get("/api/get-user", params={"id": f"{org}/alice"}).json()["data"] is None

    # a new organization of the same name starts empty: no one signs in as the old alice
    _ok(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
    refused = admin.post("/api/login", json={"organization": org, "username": "alice",
                                             "password": PASSWORD}).json()
    assert refused["status"] == "error"
    assert _ok(admin.get("/api/get-users", params={"owner": org}))["data"] == []


def test_an_organization_holding_records_is_not_renamed(admin):
    org = unique("named")
    _ok(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
    _ok(admin.post("/api/add-user", json={"owner": org, "name": "bob", "password": PASSWORD}))
    record = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    body = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                      json={**record, "name": f"{org}-renamed"}).json()
    assert body["status"] == "error" and "only an empty organization can be renamed" in body["msg"]
    assert admin.get("/api/get-user", params={"id": f"{org}/bob"}).json()["data"]["owner"] == org

    _ok(admin.post("/api/delete-user", json={"owner": org, "name": "bob"}))
    _ok(admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                   json={**record, "name": f"{org}-renamed"}))
    assert admin.get("/api/get-organization", params={"id": f"admin/{org}-renamed"}).json()["data"]


def test_a_refused_deletion_keeps_the_files(admin, monkeypatch):
    """The files go only with a committed deletion."""
    from iam_console.core import crud

    org = unique("kept")
    _populate(admin, org)

    def fail(*args, **kwargs):
        raise RuntimeError("the audit write fails")

    monkeypatch.setattr(crud, "audit", fail)
    with contextlib.suppress(RuntimeError):  # the test client raises what the server raised
        admin.post("/api/delete-organization", json={"owner": "admin", "name": org})
    assert _avatars(org).is_dir()
    assert admin.get("/api/get-user", params={"id": f"{org}/alice"}).json()["data"]["name"] == "alice"
