"""What the extra routes do for callers who may use them."""

from datetime import timedelta

from sqlmodel import select

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.db import session_scope
from iam_console.home import dashboard
from iam_console.identity.passwords import verify_password
from iam_console.models.base import utcnow
from tests.api.conftest import sign_in
from tests.conftest import reload_user, unique


def test_set_password_by_an_admin_follows_the_password_options(admin, make_org, make_user):
    org = make_org(password_options=["AtLeast8", "Aa123"])
    user = make_user(owner=org.name)
    too_short = admin.post("/api/set-password", data={"userOwner": org.name, "userName": user.name,
                                                      "newPassword": "Ab1"}).json()
    assert too_short["msg"] == "The password must have at least 8 characters"
    weak = admin.post("/api/set-password", data={"userOwner": org.name, "userName": user.name,
                                                 "newPassword": "alllowercase"}).json()
    assert "uppercase" in weak["msg"]
    done = admin.post("/api/set-password", data={"userOwner": org.name, "userName": user.name,
                                                 "newPassword": "Better-Pass-1"}).json()
    assert done["status"] == "ok"
    stored = reload_user(org.name, user.name)
    assert verify_password("Better-Pass-1", stored.password, stored.password_type, stored.password_salt)


def test_a_user_changes_their_own_password_with_the_old_one(make_org, make_user):
    org = make_org(password_options=["AtLeast6"])
    user = make_user(owner=org.name, password="first-pass")
    me = sign_in(org.name, user.name, "first-pass")
    wrong = me.post("/api/set-password", data={"userOwner": org.name, "userName": user.name,
                                               "oldPassword": "nope", "newPassword": "second-pass"}).json()
    assert wrong["status"] == "error" and "incorrect" in wrong["msg"]
    right = me.post("/api/set-password", data={"userOwner": org.name, "userName": user.name,
                                               "oldPassword": "first-pass", "newPassword": "second-pass"}).json()
    assert right["status"] == "ok"
    sign_in(org.name, user.name, "second-pass")


def test_set_password_refuses_empty_input(admin):
    assert admin.post("/api/set-password", data={"userOwner": "built-in"}).json()["msg"] == "Empty input!"


def test_check_user_password(admin, make_user):
    user = make_user(password="checked-pass")
    right = admin.post("/api/check-user-password", params={"id": f"built-in/{user.name}"},
                       json={"password": "checked-pass"}).json()
    wrong = admin.post("/api/check-user-password", params={"id": f"built-in/{user.name}"},
                       json={"password": "bad"}).json()
    assert right["status"] == "ok" and wrong["status"] == "error"
    assert reload_user("built-in", user.name).signin_wrong_times == 1  # it counts like a sign-in


def test_user_count_and_sorted_users(admin, make_org, make_user):
    org = make_org()
    for score in (5, 50, 500):
        make_user(owner=org.name, score=score, is_online=score == 50)
    assert admin.get("/api/get-user-count", params={"owner": org.name, "isOnline": ""}).json()["data"] == 3
    assert admin.get("/api/get-user-count", params={"owner": org.name, "isOnline": "1"}).json()["data"] == 1
    assert admin.get("/api/get-user-count", params={"owner": org.name, "isOnline": "false"}).json()["data"] == 2
    top = admin.get("/api/get-sorted-users", params={"owner": org.name, "sorter": "score", "limit": "2"}).json()
    assert [u["score"] for u in top["data"]] == [500, 50]
    bad = admin.get("/api/get-sorted-users", params={"owner": org.name, "sorter": "score;drop table user"}).json()
    assert bad["status"] == "error" and "not a column" in bad["msg"]


def test_get_user_by_email_phone_and_user_id(admin, make_org, make_user):
    org = make_org()
    user = make_user(owner=org.name, email="found@example.org", phone="5550100")
    for param, value in (("email", "found@example.org"), ("phone", "5550100"), ("userId", user.uuid)):
        body = admin.get("/api/get-user", params={"owner": org.name, param: value}).json()
        assert body["data"]["name"] == user.name, param
    assert admin.get("/api/get-user", params={"owner": org.name, "email": "none@x"}).json()["data"] is None


def test_remove_user_from_group(admin, make_user):
    user = make_user(groups=["built-in/staff", "built-in/ops"])
    body = admin.post("/api/remove-user-from-group",
                      params={"owner": "built-in", "name": user.name, "groupName": "staff"}).json()
    assert body["data"] == "Affected"
    assert reload_user("built-in", user.name).groups == ["built-in/ops"]


def test_organization_names_and_applications(admin, make_org):
    org = make_org(display_name="Named Org")
    names = admin.get("/api/get-organization-names", params={"owner": "admin"}).json()["data"]
    assert {"owner": "admin", "name": org.name, "displayName": "Named Org"} in names
    default = admin.get("/api/get-default-application", params={"id": f"admin/{org.name}"}).json()["data"]
    assert default["name"] == "app-built-in"
    apps = admin.get("/api/get-organization-applications",
                     params={"owner": "admin", "organization": "built-in"}).json()["data"]
    assert "app-built-in" in [a["name"] for a in apps]


def test_user_application(admin):
    body = admin.get("/api/get-user-application", params={"id": "built-in/admin"}).json()
    assert body["data"]["name"] == "app-built-in"


def test_permissions_by_submitter(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="sub", password="submit-pass")
    me = sign_in(org.name, "sub", "submit-pass")
    name = unique("perm")
    added = me.post("/api/add-permission", json={"owner": org.name, "name": name, "users": [f"{org.name}/sub"],
                                                  "resources": ["app-built-in"], "actions": ["Read"],
                                                  "submitter": "sub", "state": "Approved"}).json()
    assert added["data"] == "Affected"
    mine = me.get("/api/get-permissions-by-submitter").json()["data"]
    assert [p["name"] for p in mine] == [name]
    assert mine[0]["state"] == "Pending"  # a normal user's request cannot approve itself


def test_dashboard_counts_per_day(database, make_org, make_user):
    org = make_org()
    now = utcnow()
    with session_scope() as db:
        for days_ago in (40, 10, 10, 0):
            db.add(m.Role(owner=org.name, name=unique("role"), created_time=now - timedelta(days=days_ago)))
    god = Actor(application=_app())
    with session_scope() as db:
        series = dashboard.counts(db, god, org.name, now=now)
    assert set(series) == {f"{kind}Counts" for kind in dashboard.series()} and len(series) == 14
    roles = series["roleCounts"]
    assert len(roles) == 31 and roles[0] == 1 and roles[20] == 3 and roles[-1] == 4


def test_dashboard_is_for_admins(make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="plain", password="plain-pass")
    body = sign_in(org.name, "plain", "plain-pass").get("/api/get-dashboard").json()
    assert body["status"] == "error" and body["msg"] == "Unauthorized operation"


def _app() -> m.Application:
    with session_scope() as db:
        return db.exec(select(m.Application).where(m.Application.name == "app-built-in")).one()


def test_records_of_an_organization(admin, make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="rec", password="record-pass")
    sign_in(org.name, "rec", "record-pass")
    body = admin.get("/api/get-records", params={"organizationName": org.name, "p": "1", "pageSize": "10"}).json()
    assert body["data2"] == 1 and body["data"][0]["action"] == "login" and body["data"][0]["user"] == "rec"
    assert isinstance(body["data"][0]["id"], int)


def test_add_record_writes_to_the_callers_organization(admin, make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="boss", password="record-pass", is_admin=True)
    make_user(owner=org.name, name="plain", password="record-pass")
    boss = sign_in(org.name, "boss", "record-pass")
    for body in ({"id": 5, "action": "app-event", "object": "{}"}, {"action": "app-event"}):
        assert boss.post("/api/add-record", json=body).json()["data"] == "Affected"
    listed = admin.get("/api/get-records", params={"organizationName": org.name, "field": "action",
                                                   "value": "app-event"}).json()["data"]
    assert len(listed) == 2 and {r["user"] for r in listed} == {f"{org.name}/boss"}
    assert all(r["id"] != 5 for r in listed)  # the id is the server's
    elsewhere = boss.post("/api/add-record", json={"owner": "built-in", "action": "forged"}).json()
    assert elsewhere["msg"] == "Unauthorized operation"
    plain = sign_in(org.name, "plain", "record-pass")
    assert plain.post("/api/add-record", json={"action": "forged"}).json()["msg"] == "Unauthorized operation"


def test_with_secret_reveals_stored_secrets_to_their_admins_only(admin, make_org, make_user):
    org = make_org()
    make_user(owner=org.name, name="boss", password="secret-pass", is_admin=True)
    provider = {"owner": org.name, "name": unique("prov"), "category": "OAuth", "type": "GitHub",
                "clientId": "id", "clientSecret": "kept-secret"}
    assert admin.post("/api/add-provider", json=provider).json()["data"] == "Affected"
    pid = {"id": f"{org.name}/{provider['name']}"}
    assert admin.get("/api/get-provider", params=pid).json()["data"]["clientSecret"] == "***"
    assert admin.get("/api/get-provider", params={**pid, "withSecret": "1"}).json()["data"]["clientSecret"] == \
        "kept-secret"
    boss = sign_in(org.name, "boss", "secret-pass")
    listed = boss.get("/api/get-providers", params={"owner": org.name, "withSecret": "1"}).json()["data"]
    assert [p["clientSecret"] for p in listed if p["name"] == provider["name"]] == ["kept-secret"]
    plain = make_user(owner=org.name, password="secret-pass")
    mine = sign_in(org.name, plain.name, "secret-pass").get(
        "/api/get-user", params={"id": f"{org.name}/{plain.name}", "withSecret": "1"}).json()["data"]
    assert mine["password"] == "***"
    # a user's password hash stays hidden even from the global admin
    user = admin.get("/api/get-user", params={"id": f"{org.name}/boss", "withSecret": "1"}).json()["data"]
    assert user["password"] == "***"


def test_add_transaction_dry_run_checks_and_writes_nothing(admin, make_org):
    org = make_org()
    transaction = {"owner": org.name, "name": unique("tx"), "amount": 3, "currency": "USD",
                   "category": "Purchase", "type": "Product", "state": "Paid"}
    assert admin.post("/api/add-transaction", params={"dryRun": "1"}, json=transaction).json()["data"] == "Affected"
    tid = {"id": f"{org.name}/{transaction['name']}"}
    assert admin.get("/api/get-transaction", params=tid).json()["data"] is None
    bad = admin.post("/api/add-transaction", params={"dryRun": "1"}, json={**transaction, "owner": ""}).json()
    assert bad["status"] == "error"
    assert admin.post("/api/add-transaction", json=transaction).json()["data"] == transaction["name"]
    assert admin.get("/api/get-transaction", params=tid).json()["data"]["amount"] == 3
