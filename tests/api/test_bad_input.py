"""Bad input on every write route and every list: a clear error, nothing written,
no SQL text leaked."""

import pytest
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api, route_table
from iam_console.core import kinds, rules
from iam_console.core.resources import REGISTRY, Ownership
from iam_console.db import engine, session_scope
from tests.api.test_migrations import empty_database  # noqa: F401 (a fixture)
from tests.conftest import unique
from tests.pictures import png

# sessions are addressed by owner/name/application: tests/api/test_sessions.py covers them
WRITABLE = sorted(name for name, kind in REGISTRY.items() if kind.writable and kind.named)
# not columns of any list; "pk" is the hidden key, "password" a secret (never searchable or sortable)
INJECTIONS = ["name;drop table user", "name' OR '1'='1", "createdTime) --", "../../etc/passwd", "pk", "password"]
SQL_WORDS = ("sqlite", "syntax", "sqlalchemy", "psycopg", "pymysql", "traceback", "select ")




def total_rows() -> dict[str, int]:
    with session_scope() as db:
        return {name: db.exec(select(func.count()).select_from(kind.model)).one() for name, kind in REGISTRY.items()
                if name != "record"}


def assert_clear_error(body: dict) -> None:
    assert body["status"] == "error" and body["msg"], body
    assert not any(word in body["msg"].lower() for word in SQL_WORDS), body


def owner_for(name: str) -> str:
    return "admin" if REGISTRY[name].ownership is Ownership.ADMIN else "built-in"


# NUL, a tab, a line feed, escape, DEL and a C1 control (NEL)
CONTROL_CHARACTERS = ["\x00", "\t", "\n", "\x1b", "\x7f", "\x85"]

BAD_BODIES = [
    (b"{not json", "not valid JSON"),
    (b"[1, 2, 3]", "must be a JSON object"),
    (b"", "cannot be empty"),
    (b"12", "must be a JSON object"),
]


@pytest.mark.parametrize("kind_name", WRITABLE)
@pytest.mark.parametrize(("body", "message"), BAD_BODIES)
def test_malformed_bodies_on_add_and_update(admin, kind_name, body, message):
    before = total_rows()
    for route, params in ((f"/api/add-{kind_name}", {}), (f"/api/update-{kind_name}", {"id": "built-in/x"})):
        answer = admin.post(route, params=params, content=body, headers={"Content-Type": "application/json"})
        assert answer.status_code == 200
        assert_clear_error(answer.json())
        assert message in answer.json()["msg"], (route, answer.json())
    assert total_rows() == before


@pytest.mark.parametrize("kind_name", WRITABLE)
def test_missing_owner_or_name(admin, kind_name):
    before = total_rows()
    named = kinds.of(kind_name).generate_name  # an empty name is generated (tests/api/test_wire_compat.py)
    for body in ({}, *(() if named else ({"owner": owner_for(kind_name)},)),
                 {m.wire_name(REGISTRY[kind_name].model, "name"): "x"}):
        assert_clear_error(admin.post(f"/api/add-{kind_name}", json=body).json())
    assert_clear_error(admin.post(f"/api/delete-{kind_name}", json={"owner": owner_for(kind_name)}).json())
    assert total_rows() == before


@pytest.mark.parametrize("kind_name", WRITABLE)
def test_wrong_types_and_over_long_strings(admin, kind_name):
    kind = REGISTRY[kind_name]
    name_key = m.wire_name(kind.model, "name")
    before = total_rows()
    for extra in ({name_key: 5}, {name_key: "n" * 500}, {"owner": ["built-in"]}, {"createdTime": "yesterday"},
                  {"owner": owner_for(kind_name), name_key: "a/b"},
                  *({name_key: f"bad{c}name"} for c in CONTROL_CHARACTERS),
                  {"owner": owner_for(kind_name) + "\x01"}):
        body = {"owner": owner_for(kind_name), name_key: "bad-input-record", **extra}
        assert_clear_error(admin.post(f"/api/add-{kind_name}", json=body).json())
    assert total_rows() == before


# issue 26: "..", and names holding a right-to-left override, were taken by the newer kinds
DOT_ONLY = [".", "..", "..."]
BIDI_CONTROLS = ["\u202e", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069",
                 "\u200e", "\u200f", "\u061c"]


@pytest.mark.parametrize("kind_name", WRITABLE)
def test_dot_only_names_and_bidirectional_controls_are_refused(admin, kind_name):
    name_key = m.wire_name(REGISTRY[kind_name].model, "name")
    before = total_rows()
    for name, message in (*((n, "The name cannot be only dots") for n in DOT_ONLY),
                          *((f"evil{c}txt.exe", rules.NAME_RULE) for c in BIDI_CONTROLS)):
        answer = admin.post(f"/api/add-{kind_name}", json={"owner": owner_for(kind_name), name_key: name}).json()
        assert answer["status"] == "error" and answer["msg"] == message, (name, answer)
    assert total_rows() == before


def test_a_rename_to_such_a_name_is_refused_and_dots_within_a_name_are_fine(admin, make_org):
    org = make_org().name
    user = unique("dotted.name")
    assert admin.post("/api/add-user", json={"owner": org, "name": user}).json()["status"] == "ok"
    stored = admin.get("/api/get-user", params={"id": f"{org}/{user}"}).json()["data"]
    for name, message in (("..", "The name cannot be only dots"), ("a\u202eb", rules.NAME_RULE)):
        answer = admin.post("/api/update-user", params={"id": f"{org}/{user}"}, json={**stored, "name": name}).json()
        assert answer["msg"] == message, answer
    assert admin.get("/api/get-user", params={"id": f"{org}/{user}"}).json()["data"]["name"] == user


@pytest.mark.parametrize("kind_name", sorted(REGISTRY))
@pytest.mark.parametrize("payload", INJECTIONS)
def test_injection_in_list_parameters(admin, kind_name, payload):
    kind = REGISTRY[kind_name]
    plural = kind.plural_name
    for params in ({"field": payload, "value": "x"}, {"sortField": payload}):
        assert_clear_error(admin.get(f"/api/get-{plural}", params={"p": "1", "pageSize": "5", **params}).json())
    # a hostile value or sort order is data, not SQL: a normal (empty or full) answer
    for params in ({"field": m.wire_name(kind.model, "name"), "value": payload}, {"sortOrder": payload}):
        body = admin.get(f"/api/get-{plural}", params={"p": "1", "pageSize": "5", **params}).json()
        assert body["status"] == "ok", body


@pytest.mark.parametrize("kind_name", WRITABLE)
@pytest.mark.parametrize("bad_id", ["", "no-slash", "a/b/c", "/x", "x/", "built-in/x' OR '1'='1",
                                    *(f"built-in/a{c}b" for c in CONTROL_CHARACTERS), "built-\x00in/admin"])
def test_hostile_ids(admin, kind_name, bad_id):
    before = total_rows()
    got = admin.get(f"/api/get-{kind_name}", params={"id": bad_id}).json()
    updated = admin.post(f"/api/update-{kind_name}", params={"id": bad_id}, json={"displayName": "x"}).json()
    well_formed = bad_id.count("/") == 1 and not bad_id.startswith("/") and not bad_id.endswith("/")
    if well_formed and bad_id.isprintable():
        if kinds.of(kind_name).missing_is_error:
            assert got["status"] == "error" and got["msg"].endswith("does not exist")
        else:
            assert got["status"] == "ok" and got["data"] is None  # a well-formed id of nothing
        assert updated["data"] == "Unaffected"
    else:
        assert_clear_error(got)
        assert_clear_error(updated)
    assert total_rows() == before


@pytest.mark.parametrize(("params", "message"), [
    ({"p": "x", "pageSize": "10"}, "must be an integer"),
    ({"p": "0", "pageSize": "10"}, "at least 1"),
    ({"p": "1", "pageSize": "100000"}, "at most"),
    ({"p": "1", "pageSize": "10", "field": "name", "value": "v" * 500}, "too long"),
])
def test_bad_paging(admin, params, message):
    body = admin.get("/api/get-users", params=params).json()
    assert_clear_error(body)
    assert message in body["msg"]


def test_a_page_past_the_end_is_the_last_page(admin):
    body = admin.get("/api/get-providers", params={"p": "999", "pageSize": "2", "owner": "admin"}).json()
    assert body["status"] == "ok" and body["data2"] >= 3 and len(body["data"]) == (body["data2"] - 1) % 2 + 1



# --- JSON that Python's parser takes and the server cannot keep (core/json_input.py) ---

# every POST route; the two sign-outs read no JSON and would end the session the loop uses
JSON_ROUTES = sorted(path for method, path in route_table()
                     if method == "POST" and "{" not in path and path not in ("/api/logout", "/api/sso-logout"))
DEEP = {"array": b"[" * 1000 + b"]" * 1000, "object": b'{"a":' * 100_000 + b"1" + b"}" * 100_000}
NON_FINITE = ["NaN", "Infinity", "-Infinity", "1e400", "-1e400"]


def every_caller(admin) -> dict[str, TestClient]:
    """The global admin's session and nobody; a 500 is an answer here, not an exception."""
    return {"anonymous": TestClient(api, raise_server_exceptions=False),
            "admin": TestClient(api, raise_server_exceptions=False, cookies=admin.cookies)}


def post_everywhere(admin, body: bytes) -> dict[tuple[str, str], dict]:
    answers = {}
    for caller, client in every_caller(admin).items():
        for path in JSON_ROUTES:
            response = client.post(path, params={"id": "built-in/bad-number"}, content=body,
                                   headers={"Content-Type": "application/json"})
            assert response.status_code < 500, (caller, path, response.text)
            # the SAML ACS answers a browser with a page (its refusals: tests/api/test_saml_sp.py)
            answers[caller, path] = response.json() if path != "/api/acs" else {"page": response.text}
    return answers


@pytest.mark.parametrize("shape", sorted(DEEP))
def test_json_nested_a_thousand_levels_deep_is_refused_on_every_route(admin, shape):
    before = total_rows()
    answers = post_everywhere(admin, DEEP[shape])
    assert total_rows() == before
    too_deep = "The request body nests deeper than 64 levels"
    for path in ("/api/login", "/api/add-user", "/api/update-user", "/api/set-password"):
        assert answers["anonymous", path]["msg"] == too_deep, path
        assert answers["admin", path]["msg"] == too_deep, path
    assert answers["anonymous", "/api/login/oauth/access_token"] == {
        "error": "invalid_request", "error_description": too_deep}


@pytest.mark.parametrize("number", NON_FINITE)
def test_non_finite_numbers_are_refused_on_every_route(admin, number):
    before = total_rows()
    answers = post_everywhere(admin, b'{"owner": "built-in", "name": "bad-number", "balance": %s}' % number.encode())
    assert total_rows() == before
    for path in ("/api/add-user", "/api/update-user", "/api/add-transaction"):
        assert "not finite" in answers["admin", path]["msg"], (path, answers["admin", path])
    assert admin.get("/api/get-users", params={"owner": "built-in"}).json()["status"] == "ok"


def test_a_user_with_minus_infinity_is_never_stored(admin):
    """The issue's scenario: the user was stored, then every list including it answered 500."""
    name = unique("balance")
    body = b'{"owner": "built-in", "name": "%s", "balance": -Infinity}' % name.encode()
    answer = admin.post("/api/add-user", content=body, headers={"Content-Type": "application/json"}).json()
    assert answer["status"] == "error" and answer["msg"] == (
        "The request body holds a number that is not finite (NaN, Infinity or beyond ±1.8e308)")
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"] is None
    assert admin.post("/api/add-user", json={"owner": "built-in", "name": name, "balance": 12.5}).json()["data"] == (
        "Affected")
    for number in NON_FINITE:
        body = b'{"owner": "built-in", "name": "%s", "balance": %s}' % (name.encode(), number.encode())
        answer = admin.post("/api/update-user", params={"id": f"built-in/{name}"}, content=body).json()
        assert answer["status"] == "error" and "not finite" in answer["msg"], answer
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]["balance"] == 12.5
    listed = admin.get("/api/get-users", params={"owner": "built-in", "p": "1", "pageSize": "1000"})
    assert listed.status_code == 200 and listed.json()["status"] == "ok"


@pytest.mark.parametrize(("field", "value", "message"), [
    # money is exact (docs/architecture.md, "Money"): below 10^9, at most 6 decimals
    ("balance", 10 ** 400, "The field balance must be an amount below 1000000000 with at most 6 decimal places"),
    ("balance", 1e9, "The field balance must be an amount below 1000000000 with at most 6 decimal places"),
    ("balance", 0.1234567, "The field balance must be an amount below 1000000000 with at most 6 decimal places"),
    ("score", 1 << 40, "The field score must be between -2147483648 and 2147483647"),  # INTEGER on PostgreSQL
    ("score", 1e300, "The field score must be between -2147483648 and 2147483647"),
])
def test_numbers_a_column_cannot_hold_are_refused(admin, field, value, message):
    name = unique("number")
    answer = TestClient(api, raise_server_exceptions=False, cookies=admin.cookies).post(
        "/api/add-user", json={"owner": "built-in", "name": name, field: value})
    assert answer.status_code == 200 and answer.json()["msg"] == message
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"] is None


# --- control characters ---

@pytest.mark.parametrize("field", ["name", "displayName", "email", ""])
def test_a_nul_in_a_search_value_is_a_clear_error(admin, field):
    """name is on the full-text index (FTS5 refused the NUL with an OperationalError: HTTP 500)."""
    for value in ("a\x00b", "admin\x00", "\x00\x00\x00"):
        answer = TestClient(api, raise_server_exceptions=False, cookies=admin.cookies).get(
            "/api/get-users", params={"owner": "built-in", "field": field, "value": value, "p": "1", "pageSize": "5"})
        assert answer.status_code == 200, answer.text
        assert answer.json()["msg"] == "The search value cannot contain control characters"


def test_a_user_name_holding_nul_is_refused_and_its_avatar_cannot_break(admin, make_user):
    """The issue's scenario: the name was accepted, then its avatar upload failed with HTTP 500."""
    client = TestClient(api, raise_server_exceptions=False, cookies=admin.cookies)
    bad = "nul\x00user"
    answer = client.post("/api/add-user", json={"owner": "built-in", "name": bad})
    assert answer.status_code == 200 and answer.json()["msg"] == "The field name cannot contain a NUL character"
    name = unique("renamed")
    assert client.post("/api/add-user", json={"owner": "built-in", "name": name}).json()["data"] == "Affected"
    renamed = client.post("/api/update-user", params={"id": f"built-in/{name}"}, json={"name": bad}).json()
    assert renamed["msg"] == "The field name cannot contain a NUL character"
    legacy = make_user(owner="built-in").name
    connection = engine.raw_connection()  # a row written before names refused NUL, past today's guards
    try:
        connection.cursor().execute("UPDATE user SET name = ? WHERE owner = 'built-in' AND name = ?",
                                    (legacy + "\x00", legacy))
        connection.commit()
    finally:
        connection.close()
    for user in (bad, name + "\x00", legacy + "\x00"):
        answer = client.post("/api/upload-resource", params={"owner": "built-in", "user": user, "tag": "avatar"},
                             files={"file": ("a.png", png(), "image/png")})
        assert answer.status_code == 200 and answer.json()["status"] == "error", answer.text
    assert client.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]["name"] == name


NUL_INPUTS = [  # (method, path, keyword arguments of the request): NUL by every door
    ("get", "/api/get-users", {"params": {"owner": "built-\x00in"}}),
    ("get", "/api/get-account", {"params": {"accessKey": "key\x00", "accessSecret": "x"}}),
    ("get", "/api/get-account", {"params": {"clientId": "id\x00", "clientSecret": "x"}}),
    ("post", "/api/login", {"json": {"organization": "built-in", "username": "ad\x00min", "password": "x"}}),
    ("post", "/api/login/oauth/access_token", {"data": {"grant_type": "client_credentials", "client_id": "a\x00b",
                                                         "client_secret": "x"}}),
    ("post", "/api/set-password", {"data": {"userOwner": "built-in", "userName": "nobody\x00", "newPassword": "x"}}),
    ("post", "/api/add-user", {"json": {"owner": "built-in", "name": "nul-text", "displayName": "a\x00b"}}),
]


def test_nul_in_any_input_is_a_clear_error_on_every_database(empty_database, monkeypatch):  # noqa: F811
    """PostgreSQL refuses text holding NUL: any parameter that reached a query answered 500."""
    from iam_console import db as database_module
    from iam_console.core import lookup
    from iam_console.core.seed import ensure_first_start_data
    from iam_console.db import make_engine, migrate

    migrate(empty_database)
    engine = make_engine(empty_database)
    monkeypatch.setattr(database_module, "engine", engine)  # the API's sessions now open here
    lookup.forget()
    try:
        with session_scope(engine) as db:
            ensure_first_start_data(db, "nul-admin-pass-1")
        client = TestClient(api, raise_server_exceptions=False)
        signed_in = client.post("/api/login", json={"organization": "built-in", "username": "admin",
                                                    "password": "nul-admin-pass-1"}).json()
        assert signed_in["status"] == "ok", signed_in
        for method, path, request in NUL_INPUTS:
            answer = getattr(client, method)(path, **request)
            assert answer.status_code < 500, (path, request, answer.text)
            assert answer.json()["status"] == "error", (path, request, answer.text)
        assert client.get("/api/get-user", params={"id": "built-in/nul-text"}).json()["data"] is None
    finally:
        lookup.forget()
        engine.dispose()
