"""The SCIM 2.0 server (/scim/v2, docs/api.md "SCIM 2.0"), over real HTTP.

scim2-tester (0.5.2) runs every check it has against the server with scim2-client, as the client
of an application of a fresh organization (its client_credentials token): no check may fail. Our
own tests follow: isolation between organizations, the audit records and webhooks of SCIM writes,
bad input (each refused with its SCIM error and nothing written), PATCH on members and emails,
ETags, paging and sorting."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import httpx
import pytest
from scim2_client import BaseSyncSCIMClient
from scim2_client.errors import RequestNetworkException
from scim2_tester import Status, check_server
from sqlmodel import select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.db import session_scope
from iam_console.scim import provisioning
from tests.api.sdk_server import api_server  # noqa: F401
from tests.api.test_oauth import make_app
from tests.api.test_webhook_events import deliver_all
from tests.conftest import unique
from tests.sinks import HttpSink

SCIM_JSON = "application/scim+json"
ERROR = "urn:ietf:params:scim:api:messages:2.0:Error"
USER_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:User"
GROUP_SCHEMA = "urn:ietf:params:scim:schemas:core:2.0:Group"
PATCH_SCHEMA = "urn:ietf:params:scim:api:messages:2.0:PatchOp"
ENTERPRISE = "urn:ietf:params:scim:schemas:extension:enterprise:2.0:User"
FAILED = {Status.ERROR, Status.CRITICAL}
TIMEOUT = 60  # a loaded machine's first requests are slow; no test asserts a timing
web = httpx.Client(timeout=TIMEOUT)


class HttpxClient(BaseSyncSCIMClient):
    """scim2-client over httpx (its own engine needs httpx2; the three calls are the same)."""

    def __init__(self, client: httpx.Client, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.client = client

    def _stays_under_base_url(self, endpoint: str) -> bool:
        url = self.client.build_request("GET", endpoint).url
        base = self.client.base_url
        return url.scheme == base.scheme and url.netloc == base.netloc and url.raw_path.startswith(base.raw_path)

    def _parse_json(self, response: httpx.Response) -> Any:
        return response.json()

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        try:
            return self.client.request(method, url, **kwargs)
        except httpx.RequestError as exc:
            raise RequestNetworkException() from exc


def client_token(base: str, app: m.Application) -> str:
    answer = web.post(f"{base}/api/login/oauth/access_token", data={
        "grant_type": "client_credentials", "client_id": app.client_id, "client_secret": app.client_secret})
    assert answer.status_code == 200, answer.text
    return answer.json()["access_token"]


def scim_client(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=f"{base}/scim/v2/", headers={"Authorization": f"Bearer {token}"},
                        timeout=TIMEOUT)


@pytest.fixture
def org(make_org):
    return make_org().name


@pytest.fixture
def scim(api_server, org):  # noqa: F811
    """A client of an application of `org`, with its client_credentials token."""
    app = make_app(org, grant_types=["client_credentials"])
    with scim_client(api_server, client_token(api_server, app)) as client:
        yield client


def test_scim2_tester_finds_no_failure(scim):
    results = check_server(HttpxClient(scim))
    tally = Counter(result.status.name for result in results)
    print("scim2-tester:", dict(sorted(tally.items())))
    failures = [(r.resource_type, r.title, r.reason) for r in results if r.status in FAILED]
    for failure in failures:
        print(*failure)
    assert not failures, failures
    assert tally["SUCCESS"] > 50, tally


# --- helpers of our own tests ---

def error_of(response: httpx.Response, status: int, scim_type: str | None = None) -> dict:
    """A SCIM error body with this status (and scimType)."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith(SCIM_JSON), response.headers
    body = response.json()
    assert body["schemas"] == [ERROR] and body["status"] == str(status), body
    assert body.get("scimType") == scim_type, body
    return body


def add_user(scim: httpx.Client, **attributes) -> dict:
    body = {"schemas": [USER_SCHEMA], "userName": unique("scim"), **attributes}
    response = scim.post("Users", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def add_group(scim: httpx.Client, *members: dict, **attributes) -> dict:
    body = {"schemas": [GROUP_SCHEMA], "displayName": unique("team"),
            "members": [{"value": member["id"]} for member in members], **attributes}
    response = scim.post("Groups", json=body)
    assert response.status_code == 201, response.text
    return response.json()


def patch(scim: httpx.Client, path: str, *operations: dict, **headers: str) -> httpx.Response:
    return scim.patch(path, json={"schemas": [PATCH_SCHEMA], "Operations": list(operations)}, headers=headers)


def stored_user(org: str, name: str) -> m.User | None:
    with session_scope() as db:
        return db.exec(select(m.User).where(m.User.owner == org, m.User.name == name)).first()


def user_count(org: str) -> int:
    with session_scope() as db:
        return len(db.exec(select(m.User.pk).where(m.User.owner == org)).all())


def records_of(org: str, action: str) -> list[m.Record]:
    with session_scope() as db:
        return list(db.exec(select(m.Record).where(m.Record.organization == org, m.Record.action == action)))


# --- credentials ---

def test_without_a_client_credentials_token_nothing_is_served(api_server, scim, org, make_user):  # noqa: F811
    anonymous = web.get(f"{api_server}/scim/v2/Users")
    error_of(anonymous, 401)
    assert anonymous.headers["www-authenticate"].startswith("Bearer")
    error_of(web.get(f"{api_server}/scim/v2/Users", headers={"Authorization": "Bearer forged"}), 401)
    error_of(web.get(f"{api_server}/scim/v2/ServiceProviderConfig"), 401)
    # the client's id and secret themselves, or a token in the URL, are no SCIM credential
    app = make_app(org, grant_types=["client_credentials", "password"])
    error_of(web.get(f"{api_server}/scim/v2/Users", auth=(app.client_id, app.client_secret)), 401)
    token = client_token(api_server, app)
    error_of(web.get(f"{api_server}/scim/v2/Users", params={"access_token": token}), 401)
    # a user's token, even an administrator's, is not a provisioning client's
    boss = make_user(owner=org, password="Boss-pass-1", is_admin=True)
    tokens = web.post(f"{api_server}/api/login/oauth/access_token", data={
        "grant_type": "password", "client_id": app.client_id, "client_secret": app.client_secret,
        "username": boss.name, "password": "Boss-pass-1"}).json()
    error_of(web.get(f"{api_server}/scim/v2/Users", headers={"Authorization": f"Bearer {tokens['access_token']}"}),
             403)
    # the client's token is
    answer = web.get(f"{api_server}/scim/v2/Users", headers={"Authorization": f"Bearer {token}"})
    assert answer.status_code == 200 and answer.headers["content-type"].startswith(SCIM_JSON)


def test_casdoors_base_path_serves_the_same(api_server, scim):  # noqa: F811
    created = add_user(scim)
    at_casdoors = web.get(f"{api_server}/scim/Users/{created['id']}", headers=scim.headers)
    assert at_casdoors.status_code == 200 and at_casdoors.json()["userName"] == created["userName"]
    assert created["meta"]["location"].endswith(f"/scim/v2/Users/{created['id']}")
    error_of(scim.get(f"{api_server}/scim/v2/Nothing/here"), 404)
    error_of(scim.post("Schemas", json={}), 405)


# --- isolation ---

@pytest.fixture
def other(api_server, make_org):  # noqa: F811
    """A client of an application of another organization: (client, organization)."""
    org = make_org().name
    app = make_app(org, grant_types=["client_credentials"])
    with scim_client(api_server, client_token(api_server, app)) as client:
        yield client, org


def test_another_organizations_client_sees_and_changes_nothing(scim, org, other):
    theirs, their_org = other
    user = add_user(scim, displayName="Mine", emails=[{"value": "mine@example.com"}])
    group = add_group(scim, user)
    before = stored_user(org, user["userName"])
    # nothing listed, found by a filter, or read
    for endpoint in ("Users", "Groups"):
        assert theirs.get(endpoint).json()["totalResults"] == 0
    assert theirs.get("Users", params={"filter": f'userName eq "{user["userName"]}"'}).json()["totalResults"] == 0
    assert theirs.get("Groups", params={"filter": f'members eq "{user["id"]}"'}).json()["totalResults"] == 0
    error_of(theirs.get(f"Users/{user['id']}"), 404)
    error_of(theirs.get(f"Groups/{group['id']}"), 404)
    # nothing written: replaced, patched, deleted, or made a member of their group
    error_of(theirs.put(f"Users/{user['id']}", json={"schemas": [USER_SCHEMA], "userName": "taken"}), 404)
    error_of(patch(theirs, f"Users/{user['id']}", {"op": "replace", "path": "displayName", "value": "Theirs"}), 404)
    error_of(theirs.delete(f"Users/{user['id']}"), 404)
    error_of(patch(theirs, f"Groups/{group['id']}", {"op": "add", "path": "members", "value": [{"value": "x"}]}),
             404)
    error_of(theirs.delete(f"Groups/{group['id']}"), 404)
    their_group = add_group(theirs)
    error_of(patch(theirs, f"Groups/{their_group['id']}", {"op": "add", "path": "members",
                                                            "value": [{"value": user["id"]}]}), 400, "invalidValue")
    # the same userName there is their own user, of their organization
    same = add_user(theirs, userName=user["userName"])
    assert same["id"] != user["id"] and stored_user(their_org, user["userName"]) is not None
    after = stored_user(org, user["userName"])
    assert (after.display_name, after.email, after.groups, after.updated_time) == (
        before.display_name, before.email, before.groups, before.updated_time)
    assert scim.get(f"Groups/{group['id']}").json()["members"][0]["value"] == user["id"]


def test_a_built_in_applications_client_acts_within_the_built_in_organization(api_server, scim, org):  # noqa: F811
    mine = add_user(scim)
    app = make_app(b.BUILT_IN_ORG, grant_types=["client_credentials"])
    with scim_client(api_server, client_token(api_server, app)) as built_in:
        found = built_in.get("Users", params={"filter": f'userName eq "{mine["userName"]}"'}).json()
        assert found["totalResults"] == 0
        error_of(built_in.get(f"Users/{mine['id']}"), 404)
        admin = built_in.get("Users", params={"filter": 'userName eq "admin"'}).json()
        assert [u["userName"] for u in admin["Resources"]] == ["admin"]
        created = add_user(built_in)
        assert stored_user(b.BUILT_IN_ORG, created["userName"]) is not None
        assert built_in.delete(f"Users/{created['id']}").status_code == 204


# --- what a write leaves: records and webhooks ---

def test_scim_writes_are_recorded_and_sent_to_the_organizations_webhooks(api_server, scim, org):  # noqa: F811
    with HttpSink() as sink:
        with session_scope() as db:
            db.add(m.Webhook(owner="admin", name=unique("hook"), organization=org, url=f"{sink.url}/{org}",
                             method="POST", content_type="application/json", is_enabled=True,
                             events=["add-user", "update-user", "delete-user", "add-group", "delete-group"]))
        user = add_user(scim)
        group = add_group(scim, user)  # joining updates the user
        assert patch(scim, f"Users/{user['id']}", {"op": "replace", "path": "title", "value": "CTO"}).status_code == 200
        assert scim.delete(f"Groups/{group['id']}").status_code == 204
        assert scim.delete(f"Users/{user['id']}").status_code == 204
        deliver_all()
        actions = [json.loads(call.body)["action"] for call in sink.calls if call.path == f"/{org}"]
    assert Counter(actions) == {"add-user": 1, "add-group": 1, "update-user": 3, "delete-group": 1,
                                "delete-user": 1}, actions
    added = records_of(org, "add-user")
    assert len(added) == 1 and added[0].request_uri == "/scim/v2/Users" and added[0].user.startswith("app/")
    assert all(r.request_uri.startswith("/scim/v2/") for r in records_of(org, "update-user"))


# --- bad input: a SCIM error, and nothing written ---

def test_bad_filters_are_invalid_filters(scim):
    add_user(scim)
    for bad in ('userName eq', 'userName xx "a"', 'nickName eq "a"', 'emails[type eq "work"]', '(userName eq "a"',
                'active gt true', 'meta.created gt "yesterday"', "x" * 3000):
        error_of(scim.get("Users", params={"filter": bad}), 400, "invalidFilter")
    error_of(scim.get("Groups", params={"filter": 'userName eq "a"'}), 400, "invalidFilter")
    error_of(scim.get("Users", params={"sortBy": "password"}), 400, "invalidPath")
    error_of(scim.get("Users", params={"sortBy": "groups"}), 400, "invalidFilter")


def test_bad_bodies_write_nothing(scim, org):
    taken = add_user(scim)
    count, added = user_count(org), len(records_of(org, "add-user"))
    error_of(scim.post("Users", json={"schemas": [USER_SCHEMA], "userName": taken["userName"]}), 409, "uniqueness")
    name = unique("bad")
    for body, scim_type in (
            ({"schemas": [USER_SCHEMA], "userName": name, "nickName": "unknown attribute"}, "invalidSyntax"),
            ({"schemas": [USER_SCHEMA], "userName": name, "emails": [{"value": "not an address"}]}, "invalidValue"),
            ({"schemas": [USER_SCHEMA], "userName": name, "emails": [{"value": "a@example.com"},
                                                                     {"value": "b@example.com"}]}, "invalidValue"),
            ({"schemas": [USER_SCHEMA], "displayName": "no userName"}, "invalidValue"),
            ({"schemas": [USER_SCHEMA], "userName": "a/b"}, "invalidValue"),
            ({"schemas": [USER_SCHEMA], "userName": name, "userType": "not a type"}, "invalidValue"),
            ({"schemas": [USER_SCHEMA], "userName": name, "password": "abc"}, "invalidValue"),
            ([1, 2], "invalidSyntax")):
        error_of(scim.post("Users", json=body), 400, scim_type)
    error_of(scim.post("Users", content=b"{not json", headers={"Content-Type": SCIM_JSON}), 400, "invalidSyntax")
    error_of(scim.post("Groups", json={"schemas": [GROUP_SCHEMA], "displayName": "g",
                                       "members": [{"value": "no-such-user"}]}), 400, "invalidValue")
    assert (user_count(org), len(records_of(org, "add-user"))) == (count, added)
    assert stored_user(org, name) is None and scim.get("Groups").json()["totalResults"] == 0
    # renaming onto a taken userName, or an unknown PATCH path, changes nothing either
    other = add_user(scim)
    error_of(patch(scim, f"Users/{other['id']}", {"op": "replace", "path": "userName", "value": taken["userName"]}),
             409, "uniqueness")
    error_of(patch(scim, f"Users/{other['id']}", {"op": "replace", "path": "title", "value": "T"},
                   {"op": "replace", "path": "nickName", "value": "N"}), 400, "invalidPath")
    assert stored_user(org, other["userName"]).title == ""


# --- PATCH on members and emails ---

def test_patch_adds_replaces_and_removes_members(scim, org):
    ann, bob, cid = add_user(scim), add_user(scim), add_user(scim)
    group = add_group(scim, ann)
    path = f"Groups/{group['id']}"

    def members() -> list[str]:
        return sorted(member["value"] for member in scim.get(path).json().get("members", []))

    def stored_groups(user: dict) -> list[str]:
        return stored_user(org, user["userName"]).groups

    added = patch(scim, path, {"op": "add", "path": "members", "value": [{"value": bob["id"]}]})
    assert added.status_code == 200 and members() == sorted([ann["id"], bob["id"]])
    assert stored_groups(bob) == [f"{org}/{group['id']}"]
    assert patch(scim, path, {"op": "replace", "path": "members", "value": [{"value": cid["id"]}]}).status_code == 200
    assert members() == [cid["id"]] and stored_groups(ann) == [] and stored_groups(bob) == []
    assert scim.get(f"Users/{cid['id']}").json()["groups"][0]["value"] == group["id"]
    removed = patch(scim, path, {"op": "remove", "path": f'members[value eq "{cid["id"]}"]'})
    assert removed.status_code == 200 and members() == [] and stored_groups(cid) == []
    # Microsoft Entra's form: a remove naming its values
    patch(scim, path, {"op": "add", "path": "members", "value": [{"value": ann["id"]}, {"value": bob["id"]}]})
    assert patch(scim, path, {"op": "remove", "path": "members", "value": [{"value": ann["id"]}]}).status_code == 200
    assert members() == [bob["id"]]
    assert scim.get("Groups", params={"filter": f'members eq "{bob["id"]}"'}).json()["totalResults"] == 1
    assert scim.get("Users", params={"filter": f'groups eq "{group["id"]}"'}).json()["Resources"][0]["id"] == bob["id"]
    # members left out of an answer are not read, and the version stays the group's
    full, bare = scim.get(path), scim.get(path, params={"excludedAttributes": "members"})
    tag = full.headers["etag"]
    assert "members" not in bare.json() and bare.headers["etag"] == tag == full.json()["meta"]["version"]
    listed = scim.get("Groups", params={"excludedAttributes": "members"}).json()["Resources"]
    assert [(g["id"], g["meta"]["version"], "members" in g) for g in listed] == [(group["id"], tag, False)]
    # a member's joining or leaving is a new version
    patch(scim, path, {"op": "add", "path": "members", "value": [{"value": cid["id"]}]})
    assert scim.get(path).headers["etag"] != tag


def test_patch_adds_replaces_and_removes_the_email(scim, org):
    user = add_user(scim)
    path = f"Users/{user['id']}"
    added = patch(scim, path, {"op": "add", "path": "emails", "value": [{"value": "first@example.com"}]})
    assert added.json()["emails"] == [{"value": "first@example.com"}]
    assert stored_user(org, user["userName"]).email == "first@example.com"
    # a user keeps one email: a second one is refused, the first stays
    error_of(patch(scim, path, {"op": "add", "path": "emails", "value": [{"value": "second@example.com"}]}),
             400, "invalidValue")
    replaced = patch(scim, path, {"op": "replace", "path": "emails", "value": [{"value": "new@example.com"}]})
    assert replaced.json()["emails"] == [{"value": "new@example.com"}]
    assert scim.get("Users", params={"filter": 'emails co "new@EXAMPLE"'}).json()["totalResults"] == 1
    assert patch(scim, path, {"op": "replace", "path": 'emails[value eq "new@example.com"].value',
                              "value": "third@example.com"}).json()["emails"] == [{"value": "third@example.com"}]
    removed = patch(scim, path, {"op": "remove", "path": "emails"})
    assert "emails" not in removed.json() and stored_user(org, user["userName"]).email == ""


# --- versions, paging, sorting ---

def test_etags_guard_writes(scim, org):
    user = add_user(scim)
    path = f"Users/{user['id']}"
    read = scim.get(path)
    tag = read.headers["etag"]
    assert tag.startswith('W/"') and tag == read.json()["meta"]["version"]
    assert scim.get(path, headers={"If-None-Match": tag}).status_code == 304
    changed = patch(scim, path, {"op": "replace", "path": "title", "value": "CEO"}, **{"If-Match": tag})
    assert changed.status_code == 200 and changed.headers["etag"] != tag
    stale = patch(scim, path, {"op": "replace", "path": "title", "value": "Intern"}, **{"If-Match": tag})
    error_of(stale, 412)
    error_of(scim.put(path, json={"schemas": [USER_SCHEMA], "userName": user["userName"]},
                      headers={"If-Match": tag}), 412)
    error_of(scim.delete(path, headers={"If-Match": tag}), 412)
    assert stored_user(org, user["userName"]).title == "CEO"
    assert scim.delete(path, headers={"If-Match": changed.headers["etag"]}).status_code == 204
    assert stored_user(org, user["userName"]) is None


def test_lists_page_and_sort(scim):
    names = sorted(unique(f"page{i}") for i in range(5))
    for name in names:
        add_user(scim, userName=name)
    first = scim.get("Users", params={"startIndex": "1", "count": "2", "sortBy": "userName"}).json()
    assert (first["totalResults"], first["startIndex"], first["itemsPerPage"]) == (5, 1, 2)
    assert [u["userName"] for u in first["Resources"]] == names[:2]
    last = scim.get("Users", params={"startIndex": "4", "count": "10", "sortBy": "userName"}).json()
    assert [u["userName"] for u in last["Resources"]] == names[3:]
    down = scim.get("Users", params={"sortBy": "userName", "sortOrder": "descending"}).json()
    assert [u["userName"] for u in down["Resources"]] == names[::-1]
    counted = scim.get("Users", params={"count": "0"}).json()
    assert counted["totalResults"] == 5 and not counted.get("Resources")
    beyond = scim.get("Users", params={"startIndex": "9"}).json()
    assert beyond["totalResults"] == 5 and not beyond.get("Resources")
    assert scim.get("Users", params={"count": "100000"}).json()["itemsPerPage"] == 5
    only = scim.get("Users", params={"attributes": "userName"}).json()["Resources"][0]
    assert set(only) == {"id", "userName", "schemas"}, only
    searched = scim.post("Users/.search", json={"schemas": ["urn:ietf:params:scim:api:messages:2.0:SearchRequest"],
                                                "filter": 'userName sw "page"', "count": 1})
    assert searched.json()["totalResults"] == 5 and searched.json()["itemsPerPage"] == 1
    # user names are case-sensitive (the schema says caseExact), as our users' names are
    assert scim.get("Users", params={"filter": 'userName sw "PAGE"'}).json()["totalResults"] == 0


def test_what_is_read_only_stays_so(scim, org):
    user = add_user(scim)
    group = add_group(scim, user)
    for path in ("id", "groups", "meta"):
        error_of(patch(scim, f"Users/{user['id']}", {"op": "replace", "path": path, "value": "x"}), 400, "mutability")
    error_of(patch(scim, f"Groups/{group['id']}", {"op": "replace", "path": f'members[value eq "{user["id"]}"].value',
                                                    "value": "x"}), 400, "mutability")
    error_of(patch(scim, f"Users/{user['id']}", {"op": "replace", "path": 'emails[value eq "none@x.com"].value',
                                                  "value": "a@b.com"}), 400, "noTarget")
    error_of(scim.post("Groups", json={"schemas": [GROUP_SCHEMA], "displayName": unique("nested"),
                                       "members": [{"value": group["id"], "type": "Group"}]}), 400, "invalidValue")
    # a read-only attribute in a PUT is ignored (RFC 7643 §7): the id stays the server's
    replaced = scim.put(f"Users/{user['id']}", json={"schemas": [USER_SCHEMA], "userName": user["userName"],
                                                     "id": "other", "displayName": "Replaced"})
    assert replaced.status_code == 200 and replaced.json()["id"] == user["id"]
    assert stored_user(org, user["userName"]).display_name == "Replaced"
    assert scim.get(f"Groups/{group['id']}").json()["members"][0]["value"] == user["id"]


def test_a_password_a_client_sets_signs_in(api_server, scim, org):  # noqa: F811
    user = add_user(scim, password="First-pass-1")
    assert "password" not in user

    def signs_in(password: str) -> bool:
        return web.post(f"{api_server}/api/login", json={"organization": org, "username": user["userName"],
                                                         "password": password}).json()["status"] == "ok"

    assert signs_in("First-pass-1")
    changed = patch(scim, f"Users/{user['id']}", {"op": "replace", "path": "password", "value": "Second-pass-2"})
    assert changed.status_code == 200 and "password" not in changed.json()
    assert signs_in("Second-pass-2") and not signs_in("First-pass-1")
    assert stored_user(org, user["userName"]).password not in ("", "Second-pass-2")  # hashed
    # deactivated, the account cannot sign in; active again, it can
    assert patch(scim, f"Users/{user['id']}", {"op": "replace", "path": "active", "value": False}).json()[
        "active"] is False
    assert not signs_in("Second-pass-2")
    patch(scim, f"Users/{user['id']}", {"op": "replace", "value": {"active": True}})
    assert signs_in("Second-pass-2")


def test_an_unexpected_failure_is_a_scim_error_too(scim, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(provisioning, "search", broken)
    body = error_of(scim.get("Users"), 500)
    assert "database" not in body["detail"]  # the caller learns nothing of the internals
