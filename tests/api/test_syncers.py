"""Syncers against real databases: a SQLite file, the local PostgreSQL and MariaDB, each with
generated tables (a plain user table with an affiliation table, and Keycloak's user schema).
A run adds, updates and deletes users here; users changed or added here go back upstream
unless the syncer is read-only; passwords keep their upstream hash and type."""

from __future__ import annotations

import base64
import io
import uuid
from datetime import timedelta

import bcrypt
import paramiko
import pytest
import sqlalchemy as sa
from sqlmodel import select

from iam_console import models as m
from iam_console.db import session_scope
from iam_console.identity import passwords
from iam_console.models.base import utcnow
from iam_console.operations import syncers
from tests.api.conftest import ok_body, sign_in
from tests.api.test_migrations import MARIADB, POSTGRES, _reachable
from tests.conftest import require_service, unique

SERVERS = {"postgres": (POSTGRES, "postgresql"), "mysql": (MARIADB, "mariadb")}
PASSWORD = "Upstream-pass-1"


@pytest.fixture(params=["sqlite3", "postgres", "mysql"])
def upstream(request, tmp_path):
    """The syncer's connection fields, and an engine on that database."""
    if request.param == "sqlite3":
        path = tmp_path / "upstream.db"
        engine = sa.create_engine(f"sqlite:///{path}")
        yield {"databaseType": "sqlite3", "database": str(path)}, engine
        engine.dispose()
        return
    server, label = SERVERS[request.param]
    require_service(_reachable(f"{server}/test"), label)
    name = f"iam_sync_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(f"{server}/test", isolation_level="AUTOCOMMIT")
    with admin.connect() as connection:
        connection.execute(sa.text(f"CREATE DATABASE {name}"))
    engine = sa.create_engine(f"{server}/{name}")
    user = "postgres" if request.param == "postgres" else "root"
    port = 5432 if request.param == "postgres" else 3306
    try:
        yield ({"databaseType": request.param, "host": "127.0.0.1", "port": port, "user": user, "database": name,
                "sslMode": "disable" if request.param == "postgres" else ""}, engine)
    finally:
        engine.dispose()
        with admin.connect() as connection:
            connection.execute(sa.text(f"DROP DATABASE {name}" + (" WITH (FORCE)" if label == "postgresql" else "")))
        admin.dispose()


def _people(engine: sa.Engine) -> sa.Table:
    meta = sa.MetaData()
    people = sa.Table("people", meta, sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
                      sa.Column("username", sa.String(100)), sa.Column("first", sa.String(100)),
                      sa.Column("last", sa.String(100)), sa.Column("email", sa.String(100)),
                      sa.Column("pwd", sa.String(200)), sa.Column("pwd_type", sa.String(100)),
                      sa.Column("score", sa.Integer), sa.Column("pic", sa.String(200)))
    sa.Table("orgs", meta, sa.Column("id", sa.Integer, primary_key=True), sa.Column("name", sa.String(100)))
    meta.create_all(engine)
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(4)).decode()
    with engine.begin() as connection:
        connection.execute(meta.tables["orgs"].insert(), [{"id": 1, "name": "Physics"}, {"id": 2, "name": "Maths"}])
        connection.execute(people.insert(), [
            {"username": "alice", "first": "Alice", "last": "Smith", "email": "alice@example.com",
             "pwd": hashed, "pwd_type": "bcrypt", "score": 1, "pic": "alice.png"},
            {"username": "bob", "first": "Bob", "last": "Jones", "email": "bob@example.com",
             "pwd": hashed, "pwd_type": "bcrypt", "score": 2, "pic": "https://cdn.example.com/bob.png"},
            {"username": "carol", "first": "Carol", "last": "King", "email": "carol@example.com",
             "pwd": "", "pwd_type": "", "score": 0, "pic": ""},
        ])
    return people


COLUMNS = [
    {"name": "id", "type": "integer", "casdoorName": "Id", "isKey": False, "isHashed": True, "values": []},
    {"name": "username", "type": "string", "casdoorName": "Name", "isKey": True, "isHashed": True, "values": []},
    {"name": "first+last", "type": "string", "casdoorName": "DisplayName", "isKey": False, "isHashed": True,
     "values": []},
    {"name": "email", "type": "string", "casdoorName": "Email", "isKey": False, "isHashed": True, "values": []},
    {"name": "pwd", "type": "string", "casdoorName": "Password", "isKey": False, "isHashed": True, "values": []},
    {"name": "pwd_type", "type": "string", "casdoorName": "PasswordType", "isKey": False, "isHashed": False,
     "values": []},
    {"name": "score", "type": "integer", "casdoorName": "Score", "isKey": False, "isHashed": True, "values": []},
    {"name": "pic", "type": "string", "casdoorName": "Avatar", "isKey": False, "isHashed": True, "values": []},
]


def _organization(admin) -> str:
    org = unique("syncorg")
    ok_body(admin.post("/api/add-organization", json={"owner": "admin", "name": org, "passwordType": "argon2id"}))
    return org


def _add_syncer(admin, org: str, fields: dict, **more) -> str:
    name = unique("syncer")
    ok_body(admin.post("/api/add-syncer", json={
        "owner": "admin", "name": name, "organization": org, "type": "Database", "table": "people",
        "tableColumns": COLUMNS, "affiliationTable": "orgs", "avatarBaseUrl": "https://files.example.com/",
        "syncInterval": 10, "isEnabled": False, **fields, **more}))
    return name


def _users(org: str) -> dict[str, m.User]:
    with session_scope() as db:
        return {u.name: m.detached_copy(u) for u in db.exec(select(m.User).where(m.User.owner == org)).all()}


def _run(admin, name: str) -> dict:
    return admin.get("/api/run-syncer", params={"id": f"admin/{name}"}).json()


def test_a_run_adds_updates_deletes_and_writes_back(admin, upstream, allow):
    fields, engine = upstream
    people = _people(engine)
    org = _organization(admin)
    name = _add_syncer(admin, org, fields)
    if fields["databaseType"] != "sqlite3":
        refused = _run(admin, name)
        assert refused["status"] == "error" and "IAM_OUTBOUND_ALLOW" in refused["msg"], refused
        allow("127.0.0.1")
    ok_body(admin.post("/api/test-syncer-db", json={"owner": "admin", "name": name, "organization": org,
                                                     "password": "***", **fields}))
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    users = _users(org)
    assert {"alice", "bob", "carol"} <= set(users)
    alice, bob = users["alice"], users["bob"]
    assert alice.display_name == "Alice Smith" and alice.email == "alice@example.com" and alice.external_id == "1"
    assert alice.avatar == "https://files.example.com/alice.png" and bob.avatar == "https://cdn.example.com/bob.png"
    assert alice.affiliation == "Physics" and bob.affiliation == "Maths" and users["carol"].affiliation == ""
    assert alice.password_type == "bcrypt" and alice.register_source == f"{org}/{name}"
    sign_in(org, "alice", PASSWORD)  # the upstream hash signs in as it is

    # upstream: bob changes, carol goes; here: alice changes, dave is new
    with engine.begin() as connection:
        connection.execute(people.update().where(people.c.username == "bob").values(email="bob@new.example.com"))
        connection.execute(people.delete().where(people.c.username == "carol"))
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/alice"},
                       json={**ok_body(admin.get("/api/get-user", params={"id": f"{org}/alice"}))["data"],
                             "email": "alice@here.example.com"}))
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "dave", "displayName": "Dave",
                                              "email": "dave@example.com", "password": "Dave-pass-12"}))
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    users = _users(org)
    assert users["bob"].email == "bob@new.example.com"
    assert "carol" not in users
    with engine.connect() as connection:
        rows = {r.username: r for r in connection.execute(sa.select(people))}
    assert rows["alice"].email == "alice@here.example.com"  # written back
    assert "dave" in rows and rows["dave"].email == "dave@example.com" and rows["dave"].id not in (1, 2)
    assert rows["bob"].email == "bob@new.example.com"

    # the next run gives dave the id the table gave him; then nothing changes: every side agrees
    assert _run(admin, name)["status"] == "ok"
    assert _users(org)["dave"].external_id == str(rows["dave"].id)
    before = _users(org)
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    after = _users(org)
    assert {n: (u.email, u.pre_hash) for n, u in after.items()} == {n: (u.email, u.pre_hash)
                                                                     for n, u in before.items()}


def test_a_read_only_syncer_never_writes_back(admin, upstream, allow):
    fields, engine = upstream
    people = _people(engine)
    allow("127.0.0.1")
    org = _organization(admin)
    name = _add_syncer(admin, org, fields, isReadOnly=True)
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    ok_body(admin.post("/api/update-user", params={"id": f"{org}/bob"},
                       json={**ok_body(admin.get("/api/get-user", params={"id": f"{org}/bob"}))["data"],
                             "email": "bob@here.example.com"}))
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "erin", "password": "Erin-pass-123"}))
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    with engine.connect() as connection:
        rows = {r.username: r.email for r in connection.execute(sa.select(people))}
    assert rows == {"alice": "alice@example.com", "bob": "bob@example.com", "carol": "carol@example.com"}
    assert _users(org)["bob"].email == "bob@here.example.com"  # the change here stays here


def _keycloak(engine: sa.Engine, lower: bool, group: str) -> None:
    def n(name: str) -> str:
        return name.lower() if lower else name

    meta = sa.MetaData()
    sa.Table("user_entity", meta, sa.Column(n("ID"), sa.String(36), primary_key=True),
             sa.Column(n("USERNAME"), sa.String(255)), sa.Column(n("FIRST_NAME"), sa.String(255)),
             sa.Column(n("LAST_NAME"), sa.String(255)), sa.Column(n("EMAIL"), sa.String(255)),
             sa.Column(n("EMAIL_VERIFIED"), sa.Boolean), sa.Column(n("CREATED_TIMESTAMP"), sa.BigInteger),
             sa.Column(n("ENABLED"), sa.Boolean), sa.Column(n("REALM_ID"), sa.String(255)))
    sa.Table("credential", meta, sa.Column(n("ID"), sa.String(36), primary_key=True),
             sa.Column(n("USER_ID"), sa.String(36)), sa.Column(n("TYPE"), sa.String(255)),
             sa.Column(n("SECRET_DATA"), sa.Text), sa.Column(n("CREDENTIAL_DATA"), sa.Text))
    sa.Table("keycloak_group", meta, sa.Column(n("ID"), sa.String(36), primary_key=True),
             sa.Column(n("NAME"), sa.String(255)))
    sa.Table("user_group_membership", meta, sa.Column(n("GROUP_ID"), sa.String(36)),
             sa.Column(n("USER_ID"), sa.String(36)))
    meta.create_all(engine)
    salt = base64.b64encode(b"keycloak-salt-16").decode()
    value = passwords.hash_password(PASSWORD, "pbkdf2-salt", salt)
    t = meta.tables
    with engine.begin() as connection:
        connection.execute(t["user_entity"].insert(), [
            {n("ID"): "u-1", n("USERNAME"): "kate", n("FIRST_NAME"): "Kate", n("LAST_NAME"): "Bell",
             n("EMAIL"): "kate@example.com", n("EMAIL_VERIFIED"): True, n("CREATED_TIMESTAMP"): 1700000000000,
             n("ENABLED"): True, n("REALM_ID"): "r"},
            {n("ID"): "u-2", n("USERNAME"): "liam", n("FIRST_NAME"): "Liam", n("LAST_NAME"): "Ward",
             n("EMAIL"): "liam@example.com", n("EMAIL_VERIFIED"): False, n("CREATED_TIMESTAMP"): 1700000000000,
             n("ENABLED"): False, n("REALM_ID"): "r"},
        ])
        connection.execute(t["credential"].insert(), [{
            n("ID"): "c-1", n("USER_ID"): "u-1", n("TYPE"): "password",
            n("SECRET_DATA"): f'{{"value":"{value}","salt":"{salt}"}}',
            n("CREDENTIAL_DATA"): '{"hashIterations":27500,"algorithm":"pbkdf2-sha256"}'}])
        connection.execute(t["keycloak_group"].insert(), [{n("ID"): "g-1", n("NAME"): group}])
        connection.execute(t["user_group_membership"].insert(), [{n("GROUP_ID"): "g-1", n("USER_ID"): "u-1"}])


def test_keycloak_users_come_with_their_passwords(admin, upstream, allow):
    fields, engine = upstream
    allow("127.0.0.1")
    org = _organization(admin)
    portal = unique("portal")
    _keycloak(engine, lower=fields["databaseType"] == "postgres", group=portal)
    ok_body(admin.post("/api/add-application", json={"owner": "admin", "name": portal, "organization": org}))
    name = unique("keycloak")
    ok_body(admin.post("/api/add-syncer", json={
        "owner": "admin", "name": name, "organization": org, "type": "Keycloak", "table": "user_entity",
        "tableColumns": list(syncers.KEYCLOAK_COLUMNS), "syncInterval": 10, **fields}))
    assert _run(admin, name)["status"] == "ok", _run(admin, name)
    users = _users(org)
    kate, liam = users["kate"], users["liam"]
    assert kate.display_name == "Bell Kate" and kate.email_verified and not kate.is_forbidden
    assert liam.is_forbidden and kate.created_time.year == 2023
    assert kate.signup_application == portal and kate.password_type == "pbkdf2-salt"
    sign_in(org, "kate", PASSWORD)


def _failed_runs() -> float:
    """The Prometheus counter of failed syncer runs (operations/metrics.py)."""
    from prometheus_client.parser import text_string_to_metric_families

    from iam_console.operations import metrics

    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == "iam_sync_runs_total" and sample.labels == {"kind": "syncer", "result": "failure"}:
                return sample.value
    return 0.0


def test_bad_syncers_are_refused_with_their_reason(admin, tmp_path):
    org = _organization(admin)
    two_keys = [dict(c, isKey=True) for c in COLUMNS[:2]]
    refused = admin.post("/api/add-syncer", json={"owner": "admin", "name": unique("s"), "organization": org,
                                                  "tableColumns": two_keys}).json()
    assert refused["status"] == "error" and "key" in refused["msg"]
    bad_type = admin.post("/api/add-syncer", json={"owner": "admin", "name": unique("s"), "organization": org,
                                                   "tableColumns": [dict(COLUMNS[1], type="date")]}).json()
    assert bad_type["status"] == "error"
    failures = _failed_runs()
    missing = _run(admin, "no-such-syncer")
    assert missing["status"] == "error" and "does not exist" in missing["msg"]

    engine = sa.create_engine(f"sqlite:///{tmp_path / 'u.db'}")
    _people(engine)
    fields = {"databaseType": "sqlite3", "database": str(tmp_path / "u.db")}
    empty = _add_syncer(admin, org, fields, tableColumns=[])
    failed = _run(admin, empty)
    assert failed["status"] == "error" and "columns should not be empty" in failed["msg"]
    stored = ok_body(admin.get("/api/get-syncer", params={"id": f"admin/{empty}"}))["data"]
    assert "columns should not be empty" in stored["errorText"]
    assert _failed_runs() == failures + 1  # a run that failed is counted
    wrong_column = _add_syncer(admin, org, fields, tableColumns=[dict(COLUMNS[1], name="nope")])
    assert "no column nope" in _run(admin, wrong_column)["msg"]
    wrong_table = _add_syncer(admin, org, fields, table="missing")
    assert "does not exist" in _run(admin, wrong_table)["msg"]
    bad_table = _add_syncer(admin, org, fields, table="people; drop")
    assert "not valid" in _run(admin, bad_table)["msg"]

    for kind, driver in (("mssql", "pyodbc"), ("oracle", "oracledb")):
        try:
            __import__(driver)
        except ImportError:
            answer = admin.post("/api/test-syncer-db", json={"owner": "admin", "name": "x", "organization": org,
                                                             "databaseType": kind, "host": "db.example.com",
                                                             "port": 1433}).json()
            assert answer["status"] == "error" and "not installed" in answer["msg"], answer
    internal = admin.post("/api/test-syncer-db", json={"owner": "admin", "name": "x", "organization": org,
                                                       "databaseType": "mysql", "host": "169.254.169.254",
                                                       "port": 3306}).json()
    assert internal["status"] == "error" and "IAM_OUTBOUND_ALLOW" in internal["msg"]
    assert admin.post("/api/test-syncer-db", json=[1, 2]).json()["status"] == "error"


def test_an_organization_admin_may_not_use_a_sqlite_file(admin):
    org = _organization(admin)
    ok_body(admin.post("/api/add-user", json={"owner": org, "name": "boss", "password": "Boss-pass-123",
                                              "isAdmin": True}))
    boss = sign_in(org, "boss", "Boss-pass-123")
    refused = boss.post("/api/add-syncer", json={"owner": "admin", "name": unique("s"), "organization": org,
                                                 "databaseType": "sqlite3", "database": "/etc/passwd"}).json()
    assert refused["status"] == "error" and "sqlite3" in refused["msg"]
    tested = boss.post("/api/test-syncer-db", json={"owner": "admin", "name": "x", "organization": org,
                                                    "databaseType": "sqlite3", "database": "/tmp/x.db"}).json()
    assert tested["status"] == "error" and "sqlite3" in tested["msg"]
    anonymous = admin.__class__(admin.app).get("/api/run-syncer", params={"id": "admin/x"}).json()
    assert anonymous["status"] == "error"


def test_the_scheduler_runs_a_due_syncer_once(admin, tmp_path):
    engine = sa.create_engine(f"sqlite:///{tmp_path / 'due.db'}")
    _people(engine)
    org = _organization(admin)
    name = _add_syncer(admin, org, {"databaseType": "sqlite3", "database": str(tmp_path / "due.db")},
                       syncInterval=5, isEnabled=True)
    now = utcnow()
    with session_scope() as db:
        pk = db.exec(select(m.Syncer.pk).where(m.Syncer.name == name)).one()
        last = db.get(m.Syncer, pk).last_sync
        assert syncers.claim(db, pk, last, now) and not syncers.claim(db, pk, last, now)  # one winner
        db.exec(sa.update(m.Syncer).where(m.Syncer.pk == pk).values(last_sync=None))
        db.commit()
        ran = [ident for ident, _ in syncers.auto_sync(db, now) if ident == f"admin/{name}"]
        again = [ident for ident, _ in syncers.auto_sync(db, now + timedelta(minutes=1))
                 if ident == f"admin/{name}"]
        later = [ident for ident, _ in syncers.auto_sync(db, utcnow() + timedelta(minutes=6))
                 if ident == f"admin/{name}"]
    assert ran == [f"admin/{name}"] and again == [] and later == [f"admin/{name}"]
    assert {"alice", "bob", "carol"} <= set(_users(org))


@pytest.fixture
def ssh_postgres(upstream, allow):
    fields, engine = upstream
    if fields["databaseType"] != "postgres":
        pytest.skip("the tunnel is tried once, on PostgreSQL")
    from tests.ssh_server import SshServer

    key = paramiko.RSAKey.generate(2048)
    server = SshServer("tunnel", "Tunnel-pass-1", key)
    allow("127.0.0.1")
    try:
        yield fields, engine, server, key
    finally:
        server.close()


def test_a_syncer_reaches_its_database_through_ssh(admin, ssh_postgres, allow):
    """With no sshd on the machine, paramiko's server side stands in (tests/ssh_server.py)."""
    fields, engine, server, key = ssh_postgres
    _people(engine)
    org = _organization(admin)
    through = {**fields, "host": "127.0.0.1", "sshType": "password", "sshHost": "127.0.0.1", "sshPort": server.port,
               "sshUser": "tunnel"}
    allow("")  # the SSH host is a destination like any other: refused while internal and not listed
    guarded = _run(admin, _add_syncer(admin, org, through, sshPassword="Tunnel-pass-1"))
    assert guarded["status"] == "error" and "IAM_OUTBOUND_ALLOW" in guarded["msg"], guarded
    assert server.forwarded == 0
    allow("127.0.0.1")
    wrong = _add_syncer(admin, org, through, sshPassword="wrong")
    refused = _run(admin, wrong)
    assert refused["status"] == "error" and "SSH connection to 127.0.0.1 failed" in refused["msg"], refused
    name = _add_syncer(admin, org, through, sshPassword="Tunnel-pass-1")
    ok_body(admin.post("/api/test-syncer-db", json={"owner": "admin", "name": name, "organization": org,
                                                     "sshPassword": "***", **through}))
    assert _run(admin, name)["status"] == "ok"
    assert {"alice", "bob", "carol"} <= set(_users(org)) and server.forwarded >= 2

    # a cert's private key instead of the password
    pem = io.StringIO()
    key.write_private_key(pem)
    cert = unique("sshkey")
    with session_scope() as db:
        db.add(m.Cert(owner=org, name=cert, private_key=pem.getvalue()))
    other = _organization(admin)
    by_key = _add_syncer(admin, other, {**through, "sshType": "cert", "cert": cert}, organization=other)
    assert "does not exist" in _run(admin, by_key)["msg"]  # another organization's cert is not its
    by_key = _add_syncer(admin, org, {**through, "sshType": "cert", "cert": cert})
    ok_body(admin.post("/api/delete-user", json={"owner": org, "name": "bob"}))
    assert _run(admin, by_key)["status"] == "ok"
    assert "bob" in _users(org)


def test_two_syncers_of_one_organization_delete_only_their_own_users(admin, tmp_path):
    org = _organization(admin)
    first, second = tmp_path / "first.db", tmp_path / "second.db"
    _people(sa.create_engine(f"sqlite:///{first}"))
    other = sa.create_engine(f"sqlite:///{second}")
    people = _people(other)
    with other.begin() as connection:
        connection.execute(people.delete().where(people.c.username != "carol"))
        connection.execute(people.update().values(username="dora"))
    a = _add_syncer(admin, org, {"databaseType": "sqlite3", "database": str(first)}, isReadOnly=True)
    b = _add_syncer(admin, org, {"databaseType": "sqlite3", "database": str(second)}, isReadOnly=True)
    assert _run(admin, a)["status"] == "ok" and _run(admin, b)["status"] == "ok"
    assert _run(admin, a)["status"] == "ok"
    assert {"alice", "bob", "carol", "dora"} <= set(_users(org))
    with other.begin() as connection:
        connection.execute(people.delete())
    assert _run(admin, b)["status"] == "ok"
    assert {"alice", "bob", "carol"} <= set(_users(org)) and "dora" not in _users(org)


KEYED_BY_ID = [
    {"name": "id", "type": "string", "casdoorName": "Id", "isKey": True, "isHashed": True, "values": []},
    {"name": "username", "type": "string", "casdoorName": "Name", "isKey": False, "isHashed": True, "values": []},
    {"name": "email", "type": "string", "casdoorName": "Email", "isKey": False, "isHashed": True, "values": []},
]


def _ext_users(engine: sa.Engine) -> sa.Table:
    """A table keyed by a text id the table does not number, with one row."""
    meta = sa.MetaData()
    table = sa.Table("ext_users", meta, sa.Column("id", sa.String(64), primary_key=True),
                     sa.Column("username", sa.String(100)), sa.Column("email", sa.String(100)))
    meta.create_all(engine)
    with engine.begin() as connection:
        connection.execute(table.insert(), [{"id": "u-1", "username": "erin", "email": "erin@example.com"}])
    return table


def test_users_without_a_key_value_are_not_written_upstream(admin, upstream, allow):
    """The organization's users that have no external id (the key) stay here: a first run of a
    syncer that writes back adds the upstream users, and writes no row with an empty key."""
    fields, engine = upstream
    table = _ext_users(engine)
    allow("127.0.0.1")
    org = _organization(admin)
    for name in ("frank", "gina"):
        ok_body(admin.post("/api/add-user", json={"owner": org, "name": name, "password": "Frank-pass-12"}))
    name = _add_syncer(admin, org, fields, table="ext_users", tableColumns=KEYED_BY_ID, affiliationTable="",
                       isReadOnly=False)
    for _ in range(2):  # and again: nothing new
        answer = _run(admin, name)
        assert answer["status"] == "ok", answer
        with engine.connect() as connection:
            assert [tuple(r) for r in connection.execute(sa.select(table.c.id, table.c.username))] == [
                ("u-1", "erin")]
        users = _users(org)
        assert {"erin", "frank", "gina"} <= set(users) and users["erin"].external_id == "u-1"
    with session_scope() as db:
        runs = [r.object for r in db.exec(select(m.Record).where(m.Record.action == "run-syncer",
                                                                  m.Record.organization == org)).all()]
    # each run says so (they are tried again once they have a key)
    assert len(runs) == 2 and all('"skipped": 2' in r and '"written": 0' in r for r in runs), runs


def test_a_run_failing_part_way_says_what_it_had_done(admin, tmp_path, monkeypatch):
    path = tmp_path / "upstream.db"
    engine = sa.create_engine(f"sqlite:///{path}")
    _ext_users(engine)
    engine.dispose()
    org = _organization(admin)
    name = _add_syncer(admin, org, {"databaseType": "sqlite3", "database": str(path)}, table="ext_users",
                       tableColumns=KEYED_BY_ID, affiliationTable="")

    def lost(self) -> None:
        raise sa.exc.OperationalError("SELECT", {}, Exception("the connection was lost"))

    monkeypatch.setattr(syncers._Run, "_sweep", lost)
    answer = _run(admin, name)
    assert answer["status"] == "error", answer
    assert "the connection was lost" in answer["msg"]
    assert ("done before the failure: 1 added, 0 updated, 0 deleted, 0 written upstream, 0 not written for want "
            "of a key, 0 failed") in answer["msg"], answer
    assert "erin" in _users(org)  # the batch before the failure stays
