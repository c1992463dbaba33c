"""Casdoor's own data loads: a file in the shape of Casdoor's init_data.json as the Casdoor SDKs'
CI writes it (tests/api/data/casdoor_init_data.json: organizations, applications, users,
providers, certs, models, adapters, roles, permissions; our own values, the cert's key pair made
here), added through the API as the global admin and through the IAM_INIT_DATA import
(core/init_data.py), and the values Casdoor stores beyond what its pages offer."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlmodel import delete

from iam_console import models as m
from iam_console import startup
from iam_console.api.app import api
from iam_console.applications import certs
from iam_console.core import init_data
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.conftest import unique

DATA = Path(__file__).parent / "data" / "casdoor_init_data.json"
# the names the file holds that must be new in each load (the test database is shared)
RENAMED = ("casbin", "app-vue-python-example", "init-data-example-client", "provider_email_smtp",
           "provider_storage_local")


@pytest.fixture(autouse=True)
def _shared_providers_go():
    """The file's providers are shared (owner admin), as in Casdoor's data: once a test is over
    they go, so that the other modules' organizations without a provider of their own are not
    served by them."""
    yield
    shared = [name.replace("_", "-") + "\\_%" for name in RENAMED if name.startswith("provider_")]
    with session_scope() as db:
        for prefix in shared:
            db.exec(delete(m.Provider).where(m.Provider.owner == "admin",
                                             m.Provider.name.like(prefix, escape="\\")))


def _data() -> tuple[dict, dict[str, str]]:
    """The file with its names made unique, and its cert's key pair made now."""
    text = DATA.read_text()
    names = {name: unique(name.replace("_", "-"))[:60] for name in RENAMED}
    for old, new in names.items():
        text = text.replace(old, new)
    data = json.loads(text)
    for cert in data["certs"]:
        cert["certificate"], cert["privateKey"] = certs.generate(cert["cryptoAlgorithm"], cert["bitSize"], 1,
                                                                 cert["name"])
    return data, names


def _count(data: dict) -> int:
    return sum(len(data.get(section) or []) for section, _ in init_data.sections())


def _loaded_as_casdoor_has_it(admin: TestClient, names: dict[str, str]) -> None:
    org, example = names["casbin"], names["app-vue-python-example"]
    smtp = ok_body(admin.get("/api/get-provider", params={"id": f"admin/{names['provider_email_smtp']}"}))["data"]
    assert (smtp["category"], smtp["type"]) == ("Email", "SMTP")
    user = ok_body(admin.get("/api/get-user", params={"id": f"{org}/admin"}))["data"]
    assert user["signupApplication"] == example and user["isAdmin"] is True
    application = ok_body(admin.get("/api/get-application", params={"id": f"admin/{example}"}))["data"]
    assert application["organization"] == "built-in"
    # a provider that exists nowhere is dropped, as the application's page drops it (the Dummy
    # payment provider is one of this server's shared ones)
    assert [p["name"] for p in application["providers"]] == [names["provider_email_smtp"],
                                                              names["provider_storage_local"], "provider_payment_dummy"]
    own = ok_body(admin.get("/api/get-application", params={"id": f"admin/app-{org}"}))["data"]
    assert own["cert"] == f"cert-{org}"
    # the users sign in with the passwords the file gives them; the permission enforces
    sign_in(org, "admin", "123")
    sign_in(org, "alice", "alice-pass-1")
    ask = {"permissionId": f"{org}/permission-read"}
    assert ok_body(admin.post("/api/enforce", params=ask, json=[f"{org}/alice", f"app-{org}", "Read"]))["data"] == [
        True]
    assert ok_body(admin.post("/api/enforce", params=ask, json=[f"{org}/admin", f"app-{org}", "Read"]))["data"] == [
        False]


def test_casdoors_init_data_loads_through_the_api_as_the_global_admin(admin):
    data, names = _data()
    for section, kind in init_data.sections():
        for record in data.get(section) or []:
            answer = admin.post(f"/api/add-{kind}", json=record).json()
            assert answer["status"] == "ok", (section, record.get("name"), answer)
    _loaded_as_casdoor_has_it(admin, names)


def test_casdoors_init_data_loads_through_the_import_and_again_adds_nothing(admin):
    data, names = _data()
    loaded = init_data.load(data)
    assert loaded.refused == [] and len(loaded.added) == _count(data), loaded
    _loaded_as_casdoor_has_it(admin, names)
    again = init_data.load(data)
    assert again.added == [] and again.refused == [] and len(again.kept) == _count(data)


def test_the_import_runs_at_start_from_iam_init_data(admin, tmp_path, monkeypatch):
    data, names = _data()
    data["records"] = [{"owner": "built-in", "name": "a-record"}]  # a section this server does not load
    data["users"].append({"owner": names["casbin"], "name": "stray", "groups": [f"{names['casbin']}/no-such"]})
    path = tmp_path / "init_data.json"
    path.write_text(json.dumps(data))
    monkeypatch.setattr(startup, "settings", dataclasses.replace(startup.settings, init_data=str(path)))
    loaded = startup.load_init_data()
    assert loaded is not None and loaded.skipped == ["records"]
    assert [record for record, _ in loaded.refused] == [f"user {names['casbin']}/stray"]
    assert "does not exist" in loaded.refused[0][1]
    _loaded_as_casdoor_has_it(admin, names)


@pytest.mark.parametrize("text", ["[1, 2]", "{not json", '{"users": {"owner": "x"}}'])
def test_a_broken_init_data_file_is_a_clear_error(tmp_path, text):
    path = tmp_path / "init_data.json"
    path.write_text(text)
    if text.startswith('{"users"'):
        assert init_data.load_file(path).refused == [("users", "The section must be a list of records")]
        return
    with pytest.raises(init_data.ServiceError, match="init data file"):
        init_data.load_file(path)


def test_values_casdoor_offers_beyond_these_pages_are_stored(admin, make_org):
    """Casdoor's application page offers the JWT bearer and token exchange grants, its key page a
    Prometheus key, its syncer page PostgreSQL's allow and prefer SSL modes."""
    org = make_org().name
    grants = ["authorization_code", "urn:ietf:params:oauth:grant-type:jwt-bearer",
              "urn:ietf:params:oauth:grant-type:token-exchange"]
    name = unique("app")
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": org,
                                                     "grantTypes": grants}))
    application = ok_body(admin.get("/api/get-application", params={"id": f"admin/{name}"}))["data"]
    assert application["grantTypes"] == grants
    status = TestClient(api).post("/api/login/oauth/access_token", data={
        "grant_type": grants[1], "client_id": application["clientId"], "client_secret": application["clientSecret"],
        "assertion": "x"})
    assert status.status_code == 400 and status.json()["error"] == "unsupported_grant_type"
    ok_body(admin.post("/api/add-key", json={"owner": org, "name": unique("key"), "organization": org,
                                             "type": "Prometheus", "state": "Active"}))
    for mode in ("allow", "prefer"):
        ok_body(admin.post("/api/add-syncer", json={"owner": "admin", "name": unique("syncer"), "organization": org,
                                                    "type": "Database", "databaseType": "postgres",
                                                    "sslMode": mode}))
    refused = admin.post("/api/add-key", json={"owner": org, "name": unique("key"), "type": "Pigeon"}).json()
    assert refused["status"] == "error"
