"""Adapters' and models' rules over the API: the database types, the port range, the password
masked, the built-in ones read-only, an invalid model text refused with nothing written, and the
adapter's database test (get-policies?adapterId=, which the console's Test DB connection button
runs too) against a SQLite file, the local PostgreSQL and MariaDB, and a driver this machine
lacks."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa
from sqlmodel import select

from iam_console import models as m
from iam_console.authorization.kinds.adapter import DATABASE_TYPES, same_db_switched
from iam_console.db import session_scope
from tests.api.conftest import ok_body
from tests.api.test_enforce import RBAC
from tests.api.test_migrations import MARIADB, POSTGRES, _reachable
from tests.conftest import require_service, unique

OWNER = "built-in"


def _add(admin, **fields) -> str:
    name = unique("adapter")
    ok_body(admin.post("/api/add-adapter", json={"owner": OWNER, "name": name, "table": "rules", **fields}))
    return name


def _test(admin, name: str):
    """The adapter's database test as the console runs it."""
    return admin.get("/api/get-policies", params={"adapterId": f"{OWNER}/{name}"})


def test_the_database_types_are_casdoors_five(admin):
    assert DATABASE_TYPES == ("mysql", "postgres", "mssql", "oracle", "sqlite3")
    name = unique("adapter")
    refused = admin.post("/api/add-adapter", json={"owner": OWNER, "name": name, "useSameDb": False,
                                                   "type": "Database", "databaseType": "mongodb"}).json()
    assert refused["status"] == "error"
    assert refused["msg"] == "The database type must be mysql, postgres, mssql, oracle or sqlite3", refused
    refused = admin.post("/api/add-adapter", json={"owner": OWNER, "name": name, "type": "Files"}).json()
    assert refused["status"] == "error" and refused["msg"] == "The type must be Database", refused
    assert admin.get("/api/get-adapter", params={"id": f"{OWNER}/{name}"}).json()["data"] is None


@pytest.mark.parametrize(("port", "accepted"), [(-1, False), (0, True), (3306, True), (65535, True),
                                                (65536, False)])
def test_the_port_is_0_to_65535(admin, port, accepted):
    name = unique("adapter")
    answer = admin.post("/api/add-adapter", json={"owner": OWNER, "name": name, "useSameDb": False,
                                                  "type": "Database", "databaseType": "mysql", "port": port}).json()
    stored = admin.get("/api/get-adapter", params={"id": f"{OWNER}/{name}"}).json()["data"]
    if accepted:
        assert answer["status"] == "ok", answer
        assert stored["port"] == port
    else:
        assert answer["msg"] == "The port must be between 0 and 65535", answer
        assert stored is None


def test_the_password_is_masked_and_kept_when_sent_back(admin):
    name = _add(admin, useSameDb=False, type="Database", databaseType="mysql", host="db.example.com",
                port=3306, user="root", password="Adapter-secret-1", database="casbin")
    listed = ok_body(admin.get("/api/get-adapters", params={"owner": OWNER, "field": "name", "value": name}))["data"]
    shown = ok_body(admin.get("/api/get-adapter", params={"id": f"{OWNER}/{name}"}))["data"]
    assert [row["password"] for row in listed] == ["***"] and shown["password"] == "***"
    # the edit page sends the mask back with its other changes: the stored password stays
    ok_body(admin.post("/api/update-adapter", params={"id": f"{OWNER}/{name}"},
                       json={**shown, "host": "db2.example.com"}))
    with session_scope() as db:
        row = db.exec(select(m.Adapter).where(m.Adapter.owner == OWNER, m.Adapter.name == name)).one()
        assert (row.host, row.password) == ("db2.example.com", "Adapter-secret-1")


def test_the_use_same_db_switch_clears_or_fills_the_connection_fields():
    assert same_db_switched(True) == {"type": "", "databaseType": "", "host": "", "port": "0", "user": "",
                                      "password": "", "database": ""}
    assert same_db_switched(False) == {"type": "Database", "databaseType": "mysql", "host": "localhost",
                                       "port": "3306", "user": "root", "database": "dbName"}


@pytest.mark.parametrize("kind", ["model", "adapter"])
def test_built_in_ones_are_read_only_and_stay(admin, kind):
    name = f"user-{kind}-built-in"
    before = ok_body(admin.get(f"/api/get-{kind}", params={"id": f"{OWNER}/{name}"}))["data"]
    field = "modelText" if kind == "model" else "table"
    changed = admin.post(f"/api/update-{kind}", params={"id": f"{OWNER}/{name}"},
                         json={**before, field: "changed"}).json()
    assert changed["status"] == "error" and changed["msg"] == f"The built-in {kind} {name} is read-only", changed
    deleted = admin.post(f"/api/delete-{kind}", json={"owner": OWNER, "name": name}).json()
    assert deleted["status"] == "error" and deleted["msg"] == f"The built-in {kind} {name} cannot be deleted"
    assert ok_body(admin.get(f"/api/get-{kind}", params={"id": f"{OWNER}/{name}"}))["data"] == before


def test_an_invalid_model_text_is_refused_with_casbins_error_and_nothing_written(admin):
    name = unique("model")
    ok_body(admin.post("/api/add-model", json={"owner": OWNER, "name": name, "modelText": RBAC}))
    broken = RBAC.replace("[matchers]", "[matcher]")
    refused = admin.post("/api/update-model", params={"id": f"{OWNER}/{name}"},
                         json={"owner": OWNER, "name": name, "modelText": broken}).json()
    assert refused["status"] == "error" and "missing required sections" in refused["msg"], refused
    assert ok_body(admin.get("/api/get-model", params={"id": f"{OWNER}/{name}"}))["data"]["modelText"] == RBAC


# --- the database test ---

def test_an_adapter_on_the_servers_own_database_connects(admin):
    assert ok_body(_test(admin, _add(admin, useSameDb=True)))["data"] is None


def test_a_sqlite_file_connects_and_a_file_that_cannot_be_opened_fails(admin, tmp_path):
    good = _add(admin, useSameDb=False, type="Database", databaseType="sqlite3", database=str(tmp_path / "p.db"))
    assert ok_body(_test(admin, good))["data"] is None
    assert (tmp_path / "p.db").exists()
    bad = _add(admin, useSameDb=False, type="Database", databaseType="sqlite3",
               database=str(tmp_path / "missing" / "p.db"))
    failed = _test(admin, bad).json()
    assert failed["status"] == "error" and failed["msg"] == "Failed to connect: unable to open database file", failed


@pytest.mark.parametrize(("database_type", "server", "label", "user", "port"), [
    ("postgres", POSTGRES, "postgresql", "postgres", 5432), ("mysql", MARIADB, "mariadb", "root", 3306)])
def test_a_database_server_connects_and_a_wrong_database_fails(admin, allow, database_type, server, label, user,
                                                                port):
    require_service(_reachable(f"{server}/test"), label)
    allow("127.0.0.1")
    table = f"iam_test_{uuid.uuid4().hex[:8]}"
    fields = {"useSameDb": False, "type": "Database", "databaseType": database_type, "host": "127.0.0.1",
              "port": port, "user": user}
    good = _add(admin, **fields, database="test", table=table)
    try:
        assert ok_body(_test(admin, good))["data"] is None
    finally:
        engine = sa.create_engine(f"{server}/test")
        with engine.begin() as connection:
            connection.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
        engine.dispose()
    missing = _add(admin, **fields, database=f"nothing_{uuid.uuid4().hex[:8]}")
    failed = _test(admin, missing).json()
    assert failed["status"] == "error" and failed["msg"].startswith("Failed to connect: "), failed
    assert "nothing_" in failed["msg"], failed


def test_a_server_that_does_not_answer_fails(admin, allow):
    allow("127.0.0.1")
    name = _add(admin, useSameDb=False, type="Database", databaseType="postgres", host="127.0.0.1", port=1,
                user="postgres", database="test")
    failed = _test(admin, name).json()
    assert failed["status"] == "error" and failed["msg"].startswith("Failed to connect: "), failed


@pytest.mark.parametrize(("database_type", "driver"), [("mssql", "pyodbc"), ("oracle", "oracledb")])
def test_a_driver_this_machine_lacks_is_named(admin, allow, database_type, driver):
    try:
        __import__(driver)
    except ImportError:
        pass
    else:
        pytest.skip(f"{driver} is installed here")
    allow("127.0.0.1")
    name = _add(admin, useSameDb=False, type="Database", databaseType=database_type, host="127.0.0.1", port=1433,
                user="sa", database="test")
    failed = _test(admin, name).json()
    assert failed["status"] == "error", failed
    assert failed["msg"].startswith("The driver of ") and failed["msg"].endswith(
        f"is not installed on this server: {driver}"), failed
