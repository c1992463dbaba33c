"""Sessions: listed per user and application; deleting one signs those sign-ins out."""

from fastapi.testclient import TestClient

from iam_console.api.app import api
from tests.api.conftest import sign_in
from tests.conftest import ADMIN_PASSWORD


def test_a_sign_in_is_listed_and_deleting_its_session_signs_it_out(database, make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name, password="session-pass", is_admin=False)
    victim = sign_in(org.name, user.name, "session-pass")
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    listed = admin.get("/api/get-sessions", params={"owner": org.name, "p": "1", "pageSize": "10"}).json()
    assert listed["data2"] == 1 and listed["data"][0]["name"] == user.name
    one = admin.get("/api/get-session", params={"sessionPkId": f"{org.name}/{user.name}/app-built-in"}).json()
    assert len(one["data"]["sessionId"]) == 1
    gone = admin.post("/api/delete-session", json={"owner": org.name, "name": user.name,
                                                   "application": "app-built-in"}).json()
    assert gone["data"] == "Affected"
    assert victim.get("/api/get-account").json()["msg"] == "Please login first"


def test_users_see_only_their_own_sessions(database, make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="first", password="session-pass")
    make_user(owner=org.name, name="second", password="session-pass")
    first = sign_in(org.name, "first", "session-pass")
    sign_in(org.name, "second", "session-pass")
    rows = first.get("/api/get-sessions", params={"owner": org.name}).json()["data"]
    assert [r["name"] for r in rows] == ["first"]
    # another's session is answered as a missing one
    other = first.get("/api/get-session", params={"sessionPkId": f"{org.name}/second/app-built-in"}).json()
    assert other["status"] == "ok" and other["data"] is None
    refused = first.post("/api/delete-session", json={"owner": org.name, "name": "first",
                                                      "application": "app-built-in"}).json()
    assert refused["status"] == "error"


def test_admin_adds_and_updates_a_session(database, make_org):
    org = make_org()
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    body = {"owner": org.name, "name": "someone", "application": "app-built-in", "sessionId": ["a", "b"]}
    assert admin.post("/api/add-session", json=body).json()["data"] == "Affected"
    body["sessionId"] = ["c"]
    assert admin.post("/api/update-session", json=body).json()["data"] == "Affected"
    got = admin.get("/api/get-session", params={"id": f"{org.name}/someone"}).json()["data"]
    assert got["sessionId"] == ["c"]
    bad = admin.get("/api/get-session", params={"sessionPkId": "only/two"}).json()
    assert bad["status"] == "error" and "owner/name/application" in bad["msg"]


def test_delete_session_takes_the_application_from_the_body(database, make_org):
    org = make_org()
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    for app in ("app-built-in", "other-app"):
        admin.post("/api/add-session", json={"owner": org.name, "name": "u", "application": app, "sessionId": ["x"]})
    gone = admin.post("/api/delete-session", params={"id": f"{org.name}/u"},
                      json={"owner": org.name, "name": "u", "application": "other-app"}).json()
    assert gone["data"] == "Affected"
    kept = admin.get("/api/get-session", params={"sessionPkId": f"{org.name}/u/app-built-in"}).json()["data"]
    assert kept["sessionId"] == ["x"]
    assert admin.get("/api/get-session", params={"sessionPkId": f"{org.name}/u/other-app"}).json()["data"] is None


def test_add_session_adds_ids_and_update_replaces_them(database, make_org):
    org = make_org()
    admin = sign_in("built-in", "admin", ADMIN_PASSWORD)
    body = {"owner": org.name, "name": "u", "application": "app-built-in"}
    admin.post("/api/add-session", json={**body, "sessionId": ["m1"]})
    admin.post("/api/add-session", json={**body, "sessionId": ["m2", "m1"]})
    pk = {"sessionPkId": f"{org.name}/u/app-built-in"}
    assert admin.get("/api/get-session", params=pk).json()["data"]["sessionId"] == ["m2", "m1"]
    admin.post("/api/update-session", json={**body, "sessionId": ["m3"]})
    assert admin.get("/api/get-session", params=pk).json()["data"]["sessionId"] == ["m3"]


def test_unknown_api_paths_answer_in_the_envelope(database):
    response = TestClient(api).post("/api/no-such-thing", json={})
    body = response.json()
    assert response.status_code == 200 and body["status"] == "error"
    assert set(body) == {"status", "msg", "sub", "name", "data", "data2", "data3"}
