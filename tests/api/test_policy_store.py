"""An adapter that does not use the server's database keeps its policy lines in the table it
names on the database it names: a SQLite file, the local PostgreSQL and MariaDB. The enforcer
reads them from there, the policy routes write there, and the outbound guard decides whether
the host may be reached."""

from __future__ import annotations

import uuid

import pytest
import sqlalchemy as sa

from iam_console.authorization import enforcement
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.api.test_casbin_command import admin_actor
from tests.api.test_enforce import RBAC
from tests.api.test_migrations import MARIADB, POSTGRES, _reachable
from tests.conftest import require_service, unique

SERVERS = {"postgres": (POSTGRES, "postgresql"), "mysql": (MARIADB, "mariadb")}


@pytest.fixture(params=["sqlite3", "postgres", "mysql"])
def external(request, tmp_path):
    """The adapter's connection fields, and a URL to look into its database."""
    if request.param == "sqlite3":
        path = tmp_path / "policies.db"
        yield {"databaseType": "sqlite3", "database": str(path)}, f"sqlite:///{path}"
        return
    server, label = SERVERS[request.param]
    require_service(_reachable(f"{server}/test"), label)
    name = f"iam_pol_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{server}/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    user = "postgres" if request.param == "postgres" else "root"
    port = 5432 if request.param == "postgres" else 3306
    try:
        yield ({"databaseType": request.param, "host": "127.0.0.1", "port": port, "user": user, "database": name},
               f"{server}/{name}")
    finally:
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE {name}" + (" WITH (FORCE)" if label == "postgresql" else "")))
        admin.dispose()


def test_lines_live_in_the_adapters_own_table(admin, external, allow):
    fields, url = external
    adapter, enforcer, model, table = unique("adapter"), unique("enforcer"), unique("model"), "my_rules"
    ok_body(admin.post("/api/add-model", json={"owner": "built-in", "name": model, "modelText": RBAC}))
    ok_body(admin.post("/api/add-adapter", json={"owner": "built-in", "name": adapter, "useSameDb": False,
                                                  "type": "Database", "table": table, **fields}))
    ok_body(admin.post("/api/add-enforcer", json={"owner": "built-in", "name": enforcer,
                                                   "model": f"built-in/{model}", "adapter": f"built-in/{adapter}"}))
    eid = f"built-in/{enforcer}"
    if fields["databaseType"] != "sqlite3":
        refused = admin.get("/api/get-policies", params={"id": eid}).json()
        assert refused["status"] == "error" and "IAM_OUTBOUND_ALLOW" in refused["msg"], refused
        allow("127.0.0.1")
    assert ok_body(admin.get("/api/get-policies", params={"adapterId": f"built-in/{adapter}"}))["data"] is None
    for rule in ({"Ptype": "p", "V0": "admins", "V1": "data1", "V2": "read"}, {"Ptype": "g", "V0": "alice",
                                                                               "V1": "admins"}):
        assert ok_body(admin.post("/api/add-policy", params={"id": eid}, json=rule))["data"] == "Affected"
    engine = sa.create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(sa.text(f"SELECT ptype, v0, v1, v2 FROM {table} ORDER BY id")).all()
    finally:
        engine.dispose()
    assert [tuple(r) for r in rows] == [("p", "admins", "data1", "read"), ("g", "alice", "admins", "")]
    assert ok_body(admin.post("/api/enforce", params={"enforcerId": eid}, json=["alice", "data1", "read"]))["data"] \
        == [True]
    policies = ok_body(admin.get("/api/get-policies", params={"id": eid}))["data"]
    assert [(p["Ptype"], p["V0"], p["V1"]) for p in policies] == [("p", "admins", "data1"), ("g", "alice", "admins")]
    with session_scope() as db:  # the enforcer page reads one page of the table
        second = enforcement.policy_page(db, admin_actor(), eid, 2, 1)
    assert (second.total, [(r["Id"], r["Ptype"], r["V0"]) for r in second.rows]) == (2, [(2, "g", "alice")])


def test_a_sqlite_file_is_the_global_admins_alone(admin):
    org = unique("sqlfile")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org}))
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "boss", "password": "Store-pass-1",
                                              "isAdmin": True}))
    boss = sign_in(org, "boss", "Store-pass-1")
    refused = boss.post("/api/add-adapter", json={"owner": org, "name": unique("adapter"), "useSameDb": False,
                                                  "databaseType": "sqlite3", "database": "/tmp/x.db"}).json()
    assert refused["status"] == "error" and refused["msg"] == "Only a global admin may use a sqlite3 database"
