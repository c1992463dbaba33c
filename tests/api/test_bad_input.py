"""Bad input on every write route and every list: a clear error, nothing written,
no SQL text leaked."""

import pytest
from sqlmodel import func, select

from iam_console import models as m
from iam_console.db import session_scope
from iam_console.services.resources import REGISTRY, Ownership

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
    for body in ({}, {"owner": owner_for(kind_name)}, {m.wire_name(REGISTRY[kind_name].model, "name"): "x"}):
        assert_clear_error(admin.post(f"/api/add-{kind_name}", json=body).json())
    assert_clear_error(admin.post(f"/api/delete-{kind_name}", json={"owner": owner_for(kind_name)}).json())
    assert total_rows() == before


@pytest.mark.parametrize("kind_name", WRITABLE)
def test_wrong_types_and_over_long_strings(admin, kind_name):
    kind = REGISTRY[kind_name]
    name_key = m.wire_name(kind.model, "name")
    before = total_rows()
    for extra in ({name_key: 5}, {name_key: "n" * 500}, {"owner": ["built-in"]}, {"createdTime": "yesterday"},
                  {"owner": owner_for(kind_name), name_key: "a/b"}):
        body = {"owner": owner_for(kind_name), name_key: "bad-input-record", **extra}
        assert_clear_error(admin.post(f"/api/add-{kind_name}", json=body).json())
    assert total_rows() == before


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
@pytest.mark.parametrize("bad_id", ["", "no-slash", "a/b/c", "/x", "x/", "built-in/x' OR '1'='1"])
def test_hostile_ids(admin, kind_name, bad_id):
    before = total_rows()
    got = admin.get(f"/api/get-{kind_name}", params={"id": bad_id}).json()
    updated = admin.post(f"/api/update-{kind_name}", params={"id": bad_id}, json={"displayName": "x"}).json()
    if bad_id.count("/") == 1 and not bad_id.startswith("/") and not bad_id.endswith("/"):
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
