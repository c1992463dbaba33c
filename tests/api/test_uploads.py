"""The .xlsx uploads: upload-users, upload-roles, upload-permissions, upload-groups."""

from __future__ import annotations

import io
import itertools
import zipfile
from datetime import UTC, datetime

import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.identity import uploads
from iam_console.identity.passwords import verify_password
from tests.api.conftest import sign_in
from tests.api.test_migrations import empty_database  # noqa: F401 (a fixture)
from tests.api.workbooks import of_records, upload, with_sheet_data, workbook
from tests.conftest import unique

PASSWORD = "Uploads-pass-1"


@pytest.fixture
def org(make_org) -> str:
    return make_org().name


@pytest.fixture
def org_admin(org, make_user) -> TestClient:
    make_user(owner=org, name="boss", password=PASSWORD, is_admin=True)
    return sign_in(org, "boss", PASSWORD)


def add(client: TestClient, kind: str, org: str, *names: str) -> None:
    """Records the uploads name (a row may name only records of its organization that exist)."""
    for name in names:
        assert client.post(f"/api/add-{kind}", json={"owner": org, "name": name}).json()["data"] == "Affected"


def stored(model, owner: str, *names: str) -> dict[str, m.Named]:
    with session_scope() as db:
        rows = db.exec(select(model).where(model.owner == owner, model.name.in_(names))).all()
    return {row.name: row for row in rows}


def count(model, owner: str) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(model).where(model.owner == owner)).one()


# --- each route adds its rows ---

def test_upload_users(org, org_admin):
    add(org_admin, "group", org, "staff", "ops")
    content = workbook(
        ["Name", "displayName", "EMAIL", "phone", "password", "isAdmin", "isForbidden", "score", "balance",
         "groups", "birthday", "properties"],
        ["alice", "Alice", "alice@example.org", 5550100, "Alice-pass-1", "TRUE", 0, 7, "2.5",
         f"{org}/staff, {org}/ops", "1990-01-02", '{"team": "blue"}'],
        ["bob", "Bob", None, "", None, True, "false", "3", 1, None, None, None],
    )
    body = upload(org_admin, "/api/upload-users", content).json()
    assert body["status"] == "ok", body
    assert body["data"] == "Affected" and body["data2"]["added"] == 2 and body["msg"] == "Added 2 users"
    users = stored(m.User, org, "alice", "bob")
    alice, bob = users["alice"], users["bob"]
    assert (alice.display_name, alice.email, alice.phone) == ("Alice", "alice@example.org", "5550100")
    assert alice.is_admin and not alice.is_forbidden and bob.is_admin and not bob.is_forbidden
    assert (alice.score, bob.score, alice.balance, bob.balance) == (7, 3, 2.5, 1.0)
    assert alice.groups == [f"{org}/staff", f"{org}/ops"] and bob.groups == []
    for group in ("staff", "ops"):  # the bulk insert's rows reach the membership table (its triggers)
        listed = org_admin.get("/api/get-users", params={"owner": org, "groupName": group, "p": "1",
                                                         "pageSize": "10"}).json()
        assert [u["name"] for u in listed["data"]] == ["alice"] and listed["data2"] == 1, listed
    assert alice.birthday == "1990-01-02" and alice.properties == {"team": "blue"}
    # hashed as add-user hashes: the organization's type, and it signs in
    assert alice.password_type == "argon2id" and alice.password.startswith("$argon2id$")
    assert verify_password("Alice-pass-1", alice.password, alice.password_type, alice.password_salt)
    sign_in(org, "alice", "Alice-pass-1")
    assert bob.password == "" and bob.password_type == ""  # an empty password cell: no password
    assert alice.uuid and bob.uuid and alice.uuid != bob.uuid


def test_upload_roles(org, org_admin):
    add(org_admin, "user", org, "alice", "bob")
    content = of_records({"name": "readers", "displayName": "Readers", "users": f"{org}/alice; {org}/bob",
                          "isEnabled": "true"},
                         {"name": "writers", "roles": f"{org}/readers", "domains": '["d1", "d2"]'})
    body = upload(org_admin, "/api/upload-roles", content).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 2, body
    roles = stored(m.Role, org, "readers", "writers")
    assert roles["readers"].users == [f"{org}/alice", f"{org}/bob"] and roles["readers"].is_enabled
    assert roles["writers"].roles == [f"{org}/readers"] and roles["writers"].domains == ["d1", "d2"]


def test_upload_permissions(org, org_admin):
    add(org_admin, "user", org, "alice", "bob")
    content = of_records({"name": "read-apps", "users": f"{org}/alice,{org}/bob", "resources": "app-built-in",
                          "actions": "Read, Write", "effect": "Allow", "resourceType": "Application",
                          "state": "Pending"})
    body = upload(org_admin, "/api/upload-permissions", content).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 1, body
    permission = stored(m.Permission, org, "read-apps")["read-apps"]
    assert permission.users == [f"{org}/alice", f"{org}/bob"] and permission.actions == ["Read", "Write"]
    assert permission.resources == ["app-built-in"]
    # the rules of add-permission: only a global admin approves, so an organization admin's start Pending
    assert permission.state == "Pending" and permission.approver == "" and permission.approve_time is None


def test_uploads_take_the_defaults_of_the_consoles_add(org, org_admin, admin):
    """A row without state, isEnabled or submitter: what the console's Add gives a new record."""
    add(org_admin, "user", org, "alice")
    row = {"users": f"{org}/alice", "resources": "app-built-in", "actions": "Read"}
    upload(admin, "/api/upload-permissions", of_records({"owner": org, "name": "by-admin", **row},
                                                        {"owner": org, "name": "off", **row, "isEnabled": "false"}))
    upload(org_admin, "/api/upload-permissions", of_records({"name": "by-boss", **row}))
    upload(org_admin, "/api/upload-roles", of_records({"name": "plain"}))
    permissions = stored(m.Permission, org, "by-admin", "off", "by-boss")
    by_admin, off, by_boss = permissions["by-admin"], permissions["off"], permissions["by-boss"]
    assert (by_admin.state, by_admin.is_enabled, by_admin.submitter, by_admin.approver) == (
        "Approved", True, "admin", "admin")
    assert by_admin.approve_time is not None and (by_admin.effect, by_admin.resource_type) == ("Allow", "Application")
    assert (off.state, off.is_enabled) == ("Approved", False)  # what a row gives stays
    assert (by_boss.state, by_boss.is_enabled, by_boss.submitter, by_boss.approver) == ("Pending", True, "boss", "")
    assert stored(m.Role, org, "plain")["plain"].is_enabled


def test_upload_groups(org, org_admin):
    add(org_admin, "user", org, "alice")
    content = of_records({"name": "staff", "displayName": "Staff", "type": "Physical", "users": f"{org}/alice"},
                         {"name": "ops", "type": "Virtual", "parentId": "staff", "gidNumber": 12})
    body = upload(org_admin, "/api/upload-groups", content).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 2, body
    groups = stored(m.Group, org, "staff", "ops")
    assert groups["staff"].is_top_group and groups["staff"].users == [f"{org}/alice"]
    assert not groups["ops"].is_top_group and groups["ops"].parent_id == "staff" and groups["ops"].gid_number == 12


def test_an_uploaded_user_is_the_user_add_user_makes(org, org_admin):
    add(org_admin, "group", org, "a")
    fields = {"displayName": "Same", "email": "same@example.org", "tag": "staff", "isAdmin": True, "score": 3,
              "groups": [f"{org}/a"], "properties": {"k": "v"}}
    added = org_admin.post("/api/add-user", json={"owner": org, "name": "by-add", **fields}).json()
    assert added["data"] == "Affected"
    sheet = {**fields, "name": "by-upload", "groups": f"{org}/a", "properties": '{"k": "v"}', "isAdmin": "TRUE"}
    assert upload(org_admin, "/api/upload-users", of_records(sheet)).json()["status"] == "ok"
    rows = stored(m.User, org, "by-add", "by-upload")
    one, other = (m.to_wire(rows[name]) for name in ("by-add", "by-upload"))
    for key in ("name", "id", "createdTime", "updatedTime"):
        one.pop(key), other.pop(key)
    assert one == other


def test_upload_users_skips_the_existing(org, org_admin, make_user):
    make_user(owner=org, name="old", display_name="Kept as it was")
    content = of_records({"name": "old", "displayName": "Changed?"}, {"name": "new", "displayName": "New"})
    body = upload(org_admin, "/api/upload-users", content).json()
    assert body["status"] == "ok" and body["data"] == "Affected", body
    assert (body["data2"]["added"], body["data2"]["skipped"]) == (1, 1)
    assert body["msg"] == "Added 1 user; skipped 1 that already existed"
    users = stored(m.User, org, "old", "new")
    assert users["old"].display_name == "Kept as it was" and users["new"].display_name == "New"
    again = upload(org_admin, "/api/upload-users", content).json()
    assert again["status"] == "ok" and again["data"] == "Unaffected" and again["data2"]["skipped"] == 2


def test_unknown_columns_are_named_and_blank_lines_skipped(org, org_admin):
    content = workbook(["name", "favouriteColour", "", "displayName"], ["carol", "red", "x", "Carol"], [],
                       [None, None, None, None], ["dave", None, None, "Dave"])
    body = upload(org_admin, "/api/upload-users", content).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 2, body
    assert body["data2"]["ignoredColumns"] == ["favouriteColour"] and "favouriteColour" in body["msg"]
    assert set(stored(m.User, org, "carol", "dave")) == {"carol", "dave"}


def test_an_upload_leaves_one_audit_record(org, org_admin):
    upload(org_admin, "/api/upload-roles", of_records({"name": "audited"}))
    with session_scope() as db:
        records = db.exec(select(m.Record).where(m.Record.organization == org,
                                                 m.Record.action == "upload-roles")).all()
    assert len(records) == 1 and records[0].user == f"{org}/boss" and '"added": 1' in records[0].object


# --- one bad row refuses the file and writes nothing ---

@pytest.mark.parametrize(("bad", "reason"), [
    ({"name": "wrong-type", "isAdmin": "maybe"}, "The field isAdmin must be true or false"),
    ({"name": "not-a-number", "score": "many"}, "The field score must be an integer"),
    ({"name": "x" * 101}, "The field name is too long (at most 100 characters)"),
    ({"displayName": "No name"}, "The owner and name cannot be empty"),
    ({"name": "bad/name"}, "The name cannot contain '/' or control characters, or start with a space"),
    ({"name": "good"}, "The user {org}/good is also on row 2"),
    ({"name": "typed", "type": "robot"}, "The user type must be normal-user or paid-user"),
])
def test_a_bad_row_refuses_the_whole_file(org, org_admin, bad, reason):
    content = of_records({"name": "good", "displayName": "Good"}, {"name": "good2"}, bad)
    body = upload(org_admin, "/api/upload-users", content).json()
    assert body["status"] == "error" and body["msg"] == f"Row 4: {reason.format(org=org)}", body
    assert count(m.User, org) == 1  # only the organization's admin: nothing of the file


def test_a_bad_row_after_many_batches_writes_nothing(org, org_admin, monkeypatch):
    monkeypatch.setattr(uploads, "BATCH", 7)
    rows = [{"name": f"member{i:03d}"} for i in range(60)] + [{"name": "late", "score": 1.5}]
    body = upload(org_admin, "/api/upload-users", of_records(*rows)).json()
    assert body["status"] == "error" and body["msg"] == "Row 62: The field score must be an integer", body
    assert count(m.User, org) == 1
    repeated = [*rows[:-1], {"name": "member003"}]  # a name of an earlier batch
    body = upload(org_admin, "/api/upload-users", of_records(*repeated)).json()
    assert body["msg"] == f"Row 62: The user {org}/member003 is also on row 5", body
    rows[-1] = {"name": "late", "score": 2}
    body = upload(org_admin, "/api/upload-users", of_records(*rows)).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 61 and count(m.User, org) == 62


def test_a_bad_role_or_permission_or_group_refuses_the_file(org, org_admin):
    too_long = {"name": "g", "displayName": "d" * 101}
    for path, rows, reason in (
        ("/api/upload-roles", [{"name": "r1"}, {"name": "loop", "roles": f"{org}/loop"}],
         "Row 3: A role cannot contain itself"),
        ("/api/upload-permissions", [{"name": "p1", "users": "a", "resources": "r"}],
         "Row 2: The actions cannot be empty"),
        ("/api/upload-groups", [{"name": "g1"}, too_long],
         "Row 3: The field displayName is too long (at most 100 characters)"),
    ):
        body = upload(org_admin, path, of_records(*rows)).json()
        assert body["status"] == "error" and body["msg"] == reason, (path, body)
    assert count(m.Role, org) == count(m.Permission, org) == count(m.Group, org) == 0


def test_the_organizations_account_item_patterns_hold(admin, make_org):
    items = [{"name": "Display name", "visible": True, "viewRule": "Public", "modifyRule": "Self",
              "regex": "[A-Z][a-z]+"}]
    org = make_org(account_items=items).name
    rows = [{"owner": org, "name": f"p{i}", "displayName": "Upper"} for i in range(30)]
    bad = {"owner": org, "name": "x", "displayName": "low"}
    body = upload(admin, "/api/upload-users", of_records(*rows, bad)).json()
    assert body["msg"] == "Row 32: This field value doesn't match the pattern rule" and count(m.User, org) == 0
    assert upload(admin, "/api/upload-users", of_records(*rows)).json()["data2"]["added"] == 30


def test_the_header_must_name_the_columns(org, org_admin):
    no_name = upload(org_admin, "/api/upload-users", workbook(["displayName"], ["Nameless"])).json()
    assert no_name["status"] == "error" and "must be name" in no_name["msg"]
    twice = upload(org_admin, "/api/upload-users", workbook(["name", "Name"], ["a", "b"])).json()
    assert twice["status"] == "error" and twice["msg"] == "The column name appears twice in the first row"
    empty = upload(org_admin, "/api/upload-users", workbook([])).json()
    assert empty["status"] == "error"


# --- files that are not .xlsx workbooks ---

def _damaged(content: bytes) -> bytes:
    """The same archive with its worksheet cut in the middle of an element."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = data[: len(data) // 2]
            target.writestr(item, data)
    return out.getvalue()


@pytest.mark.parametrize(("filename", "content", "message"), [
    ("users.xlsx", b"name,displayName\nmallory,Mallory\n", "The file is not a valid .xlsx workbook"),
    ("users.csv", b"name,displayName\nmallory,Mallory\n", "Only .xlsx files can be uploaded"),
    ("users.csv", of_records({"name": "mallory"}), "Only .xlsx files can be uploaded"),
    ("users.xlsx", b"PK\x03\x04 not really a zip", "The file is not a valid .xlsx workbook"),
    ("users.xlsx", _damaged(of_records(*[{"name": f"m{i}", "displayName": "x" * 50} for i in range(200)])),
     "The file is not a valid .xlsx workbook"),
    ("users.xlsx", b"", "The file is not a valid .xlsx workbook"),
])
def test_what_is_not_an_xlsx_workbook_is_refused(org, org_admin, filename, content, message):
    body = upload(org_admin, "/api/upload-users", content, filename=filename).json()
    assert body["status"] == "error" and body["msg"] == message, body
    assert count(m.User, org) == 1


def test_a_missing_file_field_is_refused(org_admin):
    body = org_admin.post("/api/upload-users", files={"other": ("u.xlsx", of_records({"name": "x"}))}).json()
    assert body["status"] == "error" and "field file" in body["msg"]
    body = org_admin.post("/api/upload-users", json={"name": "x"}).json()
    assert body["status"] == "error" and "multipart/form-data" in body["msg"]
    two = [("file", ("a.xlsx", of_records({"name": "a"}))), ("file", ("b.xlsx", of_records({"name": "b"})))]
    body = org_admin.post("/api/upload-users", files=two).json()
    assert body["status"] == "error" and body["msg"].startswith("The upload is not a valid multipart form"), body


def test_too_large_uploads_are_refused(org, org_admin, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_UPLOAD_BYTES", 1024)
    big = of_records(*[{"name": f"big{i}", "bio": "lorem ipsum " * 40} for i in range(300)])
    body = upload(org_admin, "/api/upload-users", big).json()
    assert body["status"] == "error" and body["msg"] == "The file is too large (at most 0 MB)", body

    def chunks():  # no Content-Length: the bytes are counted as they come
        yield b"--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"u.xlsx\"\r\n\r\n"
        for _ in range(200):
            yield b"x" * 1024
        yield b"\r\n--b--\r\n"

    body = org_admin.post("/api/upload-users", content=chunks(),
                          headers={"content-type": "multipart/form-data; boundary=b"}).json()
    assert body["status"] == "error" and "too large" in body["msg"], body
    assert count(m.User, org) == 1


def test_a_zip_bomb_is_refused_before_it_is_read(org, org_admin, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_UNCOMPRESSED_BYTES", 4 << 20)
    bomb = of_records(*[{"name": f"bomb{i}", "bio": "a" * 5000} for i in range(1000)])
    assert len(bomb) < 1 << 20
    body = upload(org_admin, "/api/upload-users", bomb).json()
    assert body["status"] == "error" and body["msg"] == "The workbook is too large (over 4 MB uncompressed)", body


HEADER_ROW = b'<row><c t="inlineStr"><is><t>name</t></is></c></row>'


def test_eight_million_empty_rows_are_refused_at_the_row_limit(org, org_admin):
    """The issue's 75 KB workbook: its 8 million empty rows took 23 s to read, and were accepted."""
    rows = itertools.repeat(b"<row/>" * 1000, 8000)
    empty = with_sheet_data(workbook(["name"]), itertools.chain([HEADER_ROW], rows))
    assert len(empty) < 100_000
    body = upload(org_admin, "/api/upload-users", empty).json()
    assert body["status"] == "error" and body["msg"] == "The workbook has more than 200,000 rows after the first", body
    assert count(m.User, org) == 1


def test_rows_past_the_limit_are_refused_however_they_are_written(org, org_admin, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_ROWS", 5)
    rows = [{"name": f"limit{i}"} for i in range(6)]
    far = b'<row r="1048576"><c t="inlineStr"><is><t>far</t></is></c></row>'  # every row number between is a row
    jump = with_sheet_data(workbook(["name"]), HEADER_ROW + far)
    declared = with_sheet_data(workbook(["name"]), HEADER_ROW, dimension="A1:A300000")  # refused before reading
    for content in (of_records(*rows), jump, declared):
        body = upload(org_admin, "/api/upload-users", content).json()
        assert body["status"] == "error" and body["msg"] == "The workbook has more than 5 rows after the first", body
    assert count(m.User, org) == 1
    assert upload(org_admin, "/api/upload-users", of_records(*rows[:5])).json()["data2"]["added"] == 5


def test_a_workbook_that_takes_too_long_to_read_is_refused(org, org_admin, monkeypatch):
    """A few thousand rows of a hundred cells fit every size limit and take seconds of
    reading; the reader's processor time is bounded (RLIMIT_CPU in its process)."""
    monkeypatch.setattr(uploads, "READER_CPU_SECONDS", 1, raising=False)
    cells = b'<c t="inlineStr"><is><t></t></is></c>' + b'<c t="inlineStr"><is><t>x</t></is></c>' * 100
    rows = itertools.repeat(b"<row>" + cells + b"</row>", 10_000)  # blank names: nothing for the server to check
    wide = with_sheet_data(workbook(["name"]), itertools.chain([HEADER_ROW], rows))
    body = upload(org_admin, "/api/upload-users", wide).json()
    assert body["status"] == "error", body
    assert body["msg"] == "The workbook takes more than 1 second of processor time to read", body
    assert count(m.User, org) == 1


def _with_shared_strings(content: bytes, table: bytes) -> bytes:
    """The workbook with a shared-string table (the part Excel writes and openpyxl reads whole)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename == "[Content_Types].xml":
                data = data.replace(b"</Types>", b'<Override PartName="/xl/sharedStrings.xml" ContentType="application/'
                                    b'vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>')
            if item.filename == "xl/_rels/workbook.xml.rels":
                data = data.replace(b"</Relationships>", b'<Relationship Id="rIdS" Target="sharedStrings.xml" Type="'
                                    b'http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings'
                                    b'"/></Relationships>')
            target.writestr(item, data)
        target.writestr("xl/sharedStrings.xml", table)
    return out.getvalue()


def test_the_reader_runs_out_of_memory_alone(org, org_admin, monkeypatch):
    """What fits the archive limit but not the reader's memory is refused, and the server lives on."""
    monkeypatch.setattr(uploads, "READER_MEMORY_BYTES", 96 << 20)
    table = (b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>'
             + b"a" * (120 << 20) + b"</t></si></sst>")
    bomb = _with_shared_strings(of_records({"name": "a"}), table)
    assert len(bomb) < 1 << 20
    body = upload(org_admin, "/api/upload-users", bomb).json()
    assert body["status"] == "error" and body["msg"] == "The workbook is too large to read", body
    monkeypatch.setattr(uploads, "READER_MEMORY_BYTES", 1 << 30)
    assert upload(org_admin, "/api/upload-users", bomb).json()["data2"]["added"] == 1


# --- who may upload what ---

def test_anonymous_callers_must_sign_in(org):
    body = upload(TestClient(api), "/api/upload-users", of_records({"owner": org, "name": "x"})).json()
    assert body["status"] == "error" and body["msg"] == "Please login first" and body["data"] == "Please login first"


@pytest.mark.parametrize("path", ["/api/upload-users", "/api/upload-roles", "/api/upload-permissions",
                                  "/api/upload-groups"])
def test_an_ordinary_user_cannot_upload(org, make_user, path):
    make_user(owner=org, name="plain", password=PASSWORD)
    record = {"name": unique("mine"), "users": f"{org}/plain", "resources": "app-built-in", "actions": "Read"}
    body = upload(sign_in(org, "plain", PASSWORD), path, of_records(record)).json()
    assert body["status"] == "error" and body["msg"] == "Unauthorized operation", body
    assert count(m.Permission, org) == count(m.Role, org) == count(m.Group, org) == 0 and count(m.User, org) == 1


def test_an_organization_admin_cannot_import_into_another_organization(org, org_admin, make_org):
    other = make_org().name
    content = of_records({"name": "mine"}, {"owner": other, "name": "theirs", "isAdmin": "TRUE"})
    body = upload(org_admin, "/api/upload-users", content).json()
    assert body["status"] == "error" and body["msg"] == "Row 3: Unauthorized operation", body
    assert count(m.User, other) == 0 and count(m.User, org) == 1
    roles = upload(org_admin, "/api/upload-roles", of_records({"owner": other, "name": "r"})).json()
    assert roles["status"] == "error" and count(m.Role, other) == 0


def test_a_global_admin_imports_into_the_organizations_the_rows_name(admin, make_org):
    first, second = make_org().name, make_org().name
    content = of_records({"owner": first, "name": "ann"}, {"owner": second, "name": "ben"}, {"name": "cy"})
    body = upload(admin, "/api/upload-users", content).json()
    assert body["status"] == "ok" and body["data2"]["added"] == 3, body
    assert set(stored(m.User, first, "ann")) == {"ann"} and set(stored(m.User, second, "ben")) == {"ben"}
    assert set(stored(m.User, "built-in", "cy")) == {"cy"}  # no owner: the caller's organization
    missing = upload(admin, "/api/upload-roles", of_records({"owner": "no-such-org", "name": "r"})).json()
    assert missing["msg"] == "Row 2: The organization: no-such-org does not exist"


# --- the same on PostgreSQL and MariaDB ---

def test_uploads_on_every_database(empty_database):  # noqa: F811 (the fixture of test_migrations)
    """The driver-level INSERT, its parameter styles and the type conversions, the
    maintained counts and search, skip-existing and all-or-nothing, on each backend."""
    from iam_console.core import counts, crud, query
    from iam_console.core.access import Actor
    from iam_console.core.resources import REGISTRY
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate

    migrate(empty_database)
    engine = make_engine(empty_database)
    try:
        with session_scope(engine) as db:
            ensure_first_start_data(db, "pw-for-upload-test")
            god = Actor(application=db.exec(select(m.Application)).first())
            crud.add_record(db, god, REGISTRY["organization"], {"owner": "admin", "name": "acme"})
            crud.add_record(db, god, REGISTRY["user"], {"owner": "acme", "name": "u00", "displayName": "Kept"})
            for group in ("g1", "g2"):
                crud.add_record(db, god, REGISTRY["group"], {"owner": "acme", "name": group})
        rows = [{"name": f"u{i:02d}", "displayName": f"Person {i}", "isAdmin": i % 2 == 0, "score": i,
                 "balance": i / 4, "groups": ["acme/g1", "acme/g2"], "properties": {"i": str(i)},
                 "lastSigninTime": datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC)} for i in range(25)]
        with session_scope(engine) as db:
            result = uploads.import_rows(db, Actor(application=god.application), REGISTRY["user"],
                                         ({**row, "owner": "acme"} for row in rows))
        assert (result.added, result.skipped) == (24, 1)
        with session_scope(engine) as db:
            users = {u.name: u for u in db.exec(select(m.User).where(m.User.owner == "acme")).all()}
            assert users["u00"].display_name == "Kept" and len(users) == 25
            u7 = users["u07"]
            assert (u7.display_name, u7.is_admin, u7.score, u7.balance) == ("Person 7", False, 7, 1.75)
            assert u7.groups == ["acme/g1", "acme/g2"] and u7.properties == {"i": "7"}
            assert u7.last_signin_time == datetime(2024, 1, 2, 3, 4, 5, tzinfo=UTC) and u7.uuid
            assert counts.total(db, "user", "acme") == 25
            found = query.run(db, m.User, [m.User.owner == "acme"],
                              query.ListQuery(page=1, page_size=10, field="displayName", value="person 13"))
            assert [u.name for u in found.rows] == ["u13"]
        with pytest.raises(uploads.RowError), session_scope(engine) as db:
            uploads.import_rows(db, god, REGISTRY["role"], [{"owner": "acme", "name": "r1"},
                                                           {"owner": "acme", "name": "r2", "isEnabled": "x"}])
        taken = users["u07"].uuid
        with pytest.raises(ServiceError, match="conflict with existing users"), session_scope(engine) as db:
            uploads.import_rows(db, god, REGISTRY["user"], [{"owner": "acme", "name": "new", "id": taken}])
        with session_scope(engine) as db:
            assert db.exec(select(func.count()).select_from(m.Role)).one() == 0
            assert db.exec(select(func.count()).select_from(m.User).where(m.User.name == "new")).one() == 0
    finally:
        engine.dispose()
