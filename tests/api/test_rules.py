"""Built-in protections, validation messages, and the audit trail of writes."""

import json

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from tests.conftest import unique


@pytest.mark.parametrize(("kind", "owner", "name"), [
    ("organization", "admin", "built-in"), ("user", "built-in", "admin"), ("application", "admin", "app-built-in"),
    ("cert", "admin", "cert-built-in"), ("model", "built-in", "api-model-built-in"),
    ("adapter", "built-in", "user-adapter-built-in"), ("enforcer", "built-in", "api-enforcer-built-in"),
])
def test_built_in_records_cannot_be_deleted_or_renamed(admin, kind, owner, name):
    deleted = admin.post(f"/api/delete-{kind}", json={"owner": owner, "name": name}).json()
    assert deleted["status"] == "error" and "cannot be deleted" in deleted["msg"]
    renamed = admin.post(f"/api/update-{kind}", params={"id": f"{owner}/{name}"},
                         json={"owner": owner, "name": f"{name}-renamed"}).json()
    assert renamed["status"] == "error"
    assert admin.get(f"/api/get-{kind}", params={"id": f"{owner}/{name}"}).json()["data"]["name"] == name


def test_built_in_casbin_objects_are_read_only(admin):
    body = admin.post("/api/update-model", params={"id": "built-in/api-model-built-in"},
                      json={"displayName": "changed"}).json()
    assert body["status"] == "error" and "read-only" in body["msg"]


def test_a_plan_makes_its_product_keeps_it_in_step_and_takes_it_along(admin):
    plan_name = unique("plan")
    assert admin.post("/api/add-plan", json={"owner": "built-in", "name": plan_name, "displayName": "Gold",
                                             "price": 10.0, "currency": "USD", "period": "Monthly"}
                      ).json()["data"] == "Affected"
    plan = admin.get("/api/get-plan", params={"id": f"built-in/{plan_name}"}).json()["data"]
    product_id = f"built-in/{plan['product']}"
    product = admin.get("/api/get-product", params={"id": product_id}).json()["data"]
    assert (product["tag"], product["price"], product["currency"]) == ("auto_created_product_for_plan", 10.0, "USD")
    assert product["displayName"] == f"Product for Plan {plan_name}/Gold/Monthly"

    # its locked fields change only through the plan; the rest as any product's
    changed = admin.post("/api/update-product", params={"id": product_id}, json={"price": 1.0}).json()
    assert changed["status"] == "error" and "price" in changed["msg"]
    assert admin.post("/api/update-product", params={"id": product_id},
                      json={"state": "Draft"}).json()["data"] == "Affected"
    assert admin.post("/api/update-plan", params={"id": f"built-in/{plan_name}"},
                      json={**plan, "price": 12.5}).json()["data"] == "Affected"
    assert admin.get("/api/get-product", params={"id": product_id}).json()["data"]["price"] == 12.5

    # deleted with its plan, never on its own
    refused = admin.post("/api/delete-product", json={"owner": "built-in", "name": plan["product"]}).json()
    assert refused["status"] == "error" and plan_name in refused["msg"]
    assert admin.post("/api/delete-plan", json={"owner": "built-in", "name": plan_name}).json()["data"] == "Affected"
    assert admin.get("/api/get-product", params={"id": product_id}).json()["data"] is None


def test_a_product_tagged_for_a_plan_that_is_gone_can_be_deleted(admin):
    name = unique("product")
    admin.post("/api/add-product", json={"owner": "built-in", "name": name, "tag": "auto_created_product_for_plan",
                                         "price": 10.0})
    changed = admin.post("/api/update-product", params={"id": f"built-in/{name}"}, json={"price": 1.0}).json()
    assert changed["status"] == "error" and "price" in changed["msg"]
    assert admin.post("/api/delete-product", json={"owner": "built-in", "name": name}).json()["data"] == "Affected"


VALIDATION = [
    ("permission", {"users": [], "roles": [], "resources": ["x"], "actions": ["Read"]},
     "The users and roles cannot be empty at the same time"),
    ("permission", {"users": ["built-in/*"], "resources": [], "actions": ["Read"]}, "The resources cannot be empty"),
    ("permission", {"users": ["built-in/*"], "resources": ["x"], "actions": []}, "The actions cannot be empty"),
    ("ldap", {"port": 70000}, "port must be between 0 and 65535"),
    ("ldap", {"autoSync": -1}, "auto sync interval must be at least 0"),
    ("adapter", {"port": -5}, "port must be between 0 and 65535"),
    ("invitation", {"quota": 2, "usedCount": 3}, "used count must be between 0 and 2"),
    ("invitation", {"quota": -1}, "quota must be at least 0"),
    ("pricing", {"trialDuration": -1}, "trial duration must be at least 0"),
    ("user", {"type": "super-user"}, "normal-user or paid-user"),
    ("cert", {"cryptoAlgorithm": "RS256", "bitSize": 1000}, "1024, 2048 or 4096"),
    ("role", {"roles": ["built-in/{name}"]}, "cannot contain itself"),
    ("syncer", {"organization": "built-in", "tableColumns": [{"name": "a", "isKey": True},
                                                              {"name": "b", "isKey": True}]},
     "Exactly one table column must be the key"),
]


@pytest.mark.parametrize(("kind", "fields", "message"), VALIDATION)
def test_validation_messages_and_nothing_written(admin, kind, fields, message):
    name = unique(kind)
    owner = "admin" if kind == "syncer" else "built-in"
    body = {"owner": owner, "name" if kind != "ldap" else "id": name,
            **{k: ([v.format(name=name) for v in value] if k == "roles" else value) for k, value in fields.items()}}
    answer = admin.post(f"/api/add-{kind}", json=body).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert admin.get(f"/api/get-{kind}", params={"id": f"{owner}/{name}"}).json()["data"] is None


def test_application_rules(admin):
    name = unique("application")
    answer = admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": "built-in",
                                                       "enableAutoSignin": True, "enableSigninSession": False}).json()
    assert answer["msg"] == 'Please enable "Signin session" first before enabling "Auto signin"'
    assert admin.post("/api/add-application", json={"owner": "admin", "name": name,
                                                     "organization": "built-in"}).json()["data"] == "Affected"
    saved = admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]
    assert saved["grantTypes"] == ["authorization_code"] and len(saved["clientSecret"]) == 40


def test_organization_mfa_rules(admin):
    name = unique("org")
    answer = admin.post("/api/add-organization", json={"owner": "admin", "name": name, "mfaItems": [
        {"name": "App", "rule": "Required"}, {"name": "Email", "rule": "Required"}]}).json()
    assert answer["msg"] == "Only 1 MFA methods can be required"
    repeated = admin.post("/api/add-organization", json={"owner": "admin", "name": name, "mfaItems": [
        {"name": "App", "rule": "Optional"}, {"name": "App", "rule": "Prompt"}]}).json()
    assert repeated["status"] == "error"


def test_a_user_may_be_in_one_physical_group_only(admin):
    groups = [unique("group"), unique("group")]
    for group in groups:
        admin.post("/api/add-group", json={"owner": "built-in", "name": group, "type": "Physical"})
    answer = admin.post("/api/add-user", json={"owner": "built-in", "name": unique("user"),
                                               "groups": [f"built-in/{g}" for g in groups]}).json()
    assert answer["msg"] == "You can only select one physical group"


def test_ticking_is_deleted_sets_deleted_time(admin):
    name = unique("user")
    admin.post("/api/add-user", json={"owner": "built-in", "name": name})
    admin.post("/api/update-user", params={"id": f"built-in/{name}"}, json={"isDeleted": True})
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]["deletedTime"]
    admin.post("/api/update-user", params={"id": f"built-in/{name}"}, json={"isDeleted": False})
    assert admin.get("/api/get-user", params={"id": f"built-in/{name}"}).json()["data"]["deletedTime"] == ""


def test_every_write_leaves_a_record_without_secrets(admin):
    name = unique("user")
    admin.post("/api/add-user", json={"owner": "built-in", "name": name, "password": "Visible-Secret-1"})
    admin.post("/api/update-user", params={"id": f"built-in/{name}"}, json={"displayName": "Recorded"})
    admin.post("/api/delete-user", json={"owner": "built-in", "name": name})
    with session_scope() as db:
        records = db.exec(select(m.Record).where(m.Record.object.contains(name) | m.Record.request_uri.contains(name))
                          .order_by(m.Record.pk)).all()
    assert [r.action for r in records] == ["add-user", "update-user", "delete-user"]
    assert all(r.user == "built-in/admin" and r.organization == "built-in" for r in records)
    assert "Visible-Secret-1" not in " ".join(r.object for r in records)
    assert json.loads(records[0].object)["password"] == "***"


def test_renaming_onto_an_existing_name_is_a_clear_error(admin):
    first, second = unique("user"), unique("user")
    for name in (first, second):
        admin.post("/api/add-user", json={"owner": "built-in", "name": name})
    answer = admin.post("/api/update-user", params={"id": f"built-in/{first}"},
                        json={"owner": "built-in", "name": second})
    assert answer.status_code == 200 and answer.json()["msg"] == f"The user built-in/{second} already exists"
    assert admin.get("/api/get-user", params={"id": f"built-in/{first}"}).json()["data"]["name"] == first


def test_an_unexpected_error_leaks_nothing(monkeypatch, admin):
    from iam_console.core import crud

    def broken(*args, **kwargs):
        raise RuntimeError("sqlite3.OperationalError: near SELECT: secret detail")

    monkeypatch.setattr(crud, "get_record", broken)
    client = TestClient(api, raise_server_exceptions=False, cookies=admin.cookies)
    answer = client.get("/api/get-role", params={"id": "built-in/x"})
    assert answer.status_code == 500
    assert answer.json()["msg"] == "Internal server error" and "secret" not in answer.text


def test_account_item_patterns(admin, make_org):
    items = [{"name": "Display name", "visible": True, "viewRule": "Public", "modifyRule": "Self",
              "regex": "[A-Z][a-z]+"},
             {"name": "Password", "visible": True, "viewRule": "Self", "modifyRule": "Self", "regex": "[a-z]{8,}"}]
    org = make_org(account_items=items)
    name = unique("user")
    bad = admin.post("/api/add-user", json={"owner": org.name, "name": name, "displayName": "lower"}).json()
    assert bad["msg"] == "This field value doesn't match the pattern rule"
    assert admin.post("/api/add-user", json={"owner": org.name, "name": name,
                                             "displayName": "Upper"}).json()["data"] == "Affected"
    weak = admin.post("/api/set-password", data={"userOwner": org.name, "userName": name,
                                                 "newPassword": "Has-Digits-1"}).json()
    assert weak["msg"] == "This field value doesn't match the pattern rule"
    assert admin.post("/api/set-password", data={"userOwner": org.name, "userName": name,
                                                 "newPassword": "onlyletters"}).json()["status"] == "ok"


def test_products_take_payment_providers_only(admin):
    name = unique("product")
    refused = admin.post("/api/add-product", json={"owner": "built-in", "name": name,
                                                    "providers": ["provider_captcha_default"]}).json()
    assert refused["msg"] == "The provider provider_captcha_default is not a payment provider"
    assert admin.post("/api/add-product", json={"owner": "built-in", "name": name,
                                                "providers": ["provider_balance"]}).json()["data"] == "Affected"


INVOICE = {"state": "Paid", "personName": "Ada Lovelace", "personIdCard": "AB123456", "personEmail": "ada@example.com",
           "personPhone": "+44 20 7946 0000", "invoiceType": "Individual", "invoiceTitle": "Ada Lovelace",
           "invoiceTaxId": ""}


@pytest.mark.parametrize(("change", "message"), [
    ({"state": "Created"}, "Please pay the order first!"),
    ({"personName": " "}, "Please input your real name!"),
    ({"personIdCard": "x"}, "Please input the correct ID card number!"),
    ({"personEmail": "nope"}, "The input is not valid Email!"),
    ({"personPhone": "12"}, "The input is not valid Phone!"),
    ({"invoiceTitle": "Someone Else"}, "The input is not invoice title!"),
    ({"invoiceTaxId": "123456789"}, "The input is not invoice Tax ID!"),
    ({"invoiceType": "Organization", "invoiceTitle": "Acme", "invoiceTaxId": "x"}, "The input is not invoice Tax ID!"),
])
def test_invoice_checks_in_order(admin, change, message):
    answer = admin.post("/api/add-payment", json={"owner": "built-in", "name": unique("payment"),
                                                  **INVOICE, **change}).json()
    assert answer["msg"] == message


def test_a_valid_invoice_and_a_payment_without_one(admin):
    assert admin.post("/api/add-payment", json={"owner": "built-in", "name": unique("payment"),
                                                **INVOICE}).json()["data"] == "Affected"
    assert admin.post("/api/add-payment", json={"owner": "built-in", "name": unique("payment"),
                                                "state": "Created"}).json()["data"] == "Affected"


def test_groups_through_the_api(admin):
    """get-users?groupName= lists a group's users; get-groups says which groups have
    children; delete-group refuses a group with children."""
    parent, child = unique("group"), unique("group")
    for name, parent_id in ((parent, "built-in"), (child, parent)):
        added = admin.post("/api/add-group", json={"owner": "built-in", "name": name, "type": "Virtual",
                                                   "parentId": parent_id}).json()
        assert added["status"] == "ok", added
    member = unique("user")
    admin.post("/api/add-user", json={"owner": "built-in", "name": member, "groups": [f"built-in/{child}"]})
    users = admin.get("/api/get-users", params={"owner": "built-in", "groupName": child, "p": "1",
                                                "pageSize": "10"}).json()
    assert [u["name"] for u in users["data"]] == [member] and users["data2"] == 1
    assert admin.get("/api/get-users", params={"owner": "built-in", "groupName": parent}).json()["data"] == []
    shown = admin.get("/api/get-group", params={"id": f"built-in/{parent}"}).json()["data"]
    assert shown["haveChildren"] is True and shown["isTopGroup"] is True
    refused = admin.post("/api/delete-group", json={"owner": "built-in", "name": parent}).json()
    assert refused["status"] == "error" and refused["msg"] == (
        f"The group {parent} has child groups: delete or move them first")
    assert admin.post("/api/delete-group", json={"owner": "built-in", "name": child}).json()["data"] == "Affected"
    assert admin.post("/api/delete-group", json={"owner": "built-in", "name": parent}).json()["data"] == "Affected"
