"""Compatibility: the official Casdoor Python SDK (casdoor 1.43.3) as a real client.

Every resource family the SDK covers goes through the SDK's own classes and
methods: add, get, list, page, update and delete. Each family
is one declaration in FAMILIES; the tests are generic. Resources are read, listed
and deleted here; uploads, sessions and the calls beyond these are in test_sdk_python_calls.py.
An autouse fixture checks every answer the SDK receives: HTTP 200, JSON, the
seven envelope keys."""

from __future__ import annotations

import datetime
import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import casdoor
import httpx
import pytest
import requests
from casdoor.adapter import Adapter
from casdoor.application import Application
from casdoor.cert import Cert
from casdoor.enforcer import Enforcer
from casdoor.group import Group
from casdoor.invitation import Invitation
from casdoor.ldap import Ldap
from casdoor.model import Model
from casdoor.order import Order
from casdoor.organization import Organization
from casdoor.payment import Payment
from casdoor.permission import Permission
from casdoor.plan import Plan
from casdoor.pricing import Pricing
from casdoor.product import Product
from casdoor.provider import Provider
from casdoor.record import Record
from casdoor.resource import Resource
from casdoor.role import Role
from casdoor.subscription import Subscription
from casdoor.syncer import Syncer
from casdoor.token import Token
from casdoor.transaction import Transaction
from casdoor.user import User
from casdoor.webhook import Webhook
from sqlmodel import select

from iam_console import models as m
from iam_console.commerce import tables as shop
from iam_console.core import kinds
from iam_console.core.kinds.common import answer_name
from iam_console.core.seed import USER_MODEL_TEXT
from iam_console.db import session_scope
from iam_console.identity.passwords import verify_password
from tests.api import sdk_server
from tests.api.conftest import ENVELOPE
from tests.api.sdk_server import api_server, sdk  # noqa: F401
from tests.conftest import ADMIN_PASSWORD

ORG = "built-in"
ADMIN = "admin"
ENVELOPE_KEYS = ENVELOPE


@dataclass(frozen=True)
class Family:
    """One SDK resource family: its class, a valid object, and a field to change."""

    name: str
    cls: type
    table: type[m.Named]
    fields: Callable[[str], dict[str, Any]]  # a valid object's fields, given its name
    change: tuple[str, Any]  # (attribute, new value) for the update test
    owner: str = ORG  # the owner the objects are created with
    sdk_owner: str = ORG  # the owner the SDK's get_Xs/get_X default to
    plural: str = ""
    key: str = "name"  # the attribute holding the name (LDAP: id)
    list_scope: str = "owner"  # which rows get_Xs returns: "owner", "shared" (owner or admin), "all"

    @property
    def plural_name(self) -> str:
        return self.plural or f"{self.name}s"

    def __str__(self) -> str:
        return self.name


def _permission(name: str) -> dict[str, Any]:
    # the SDK sends the model as a full id, and the domains must be empty
    return {"displayName": f"Permission {name}", "users": [f"{ORG}/{ADMIN}"], "roles": [], "domains": [],
            "model": f"{ORG}/user-model-built-in", "resourceType": "Application", "resources": ["app-built-in"],
            "actions": ["Read"], "effect": "Allow", "isEnabled": True}


FAMILIES = [
    Family("organization", Organization, m.Organization, owner=ADMIN, sdk_owner=ADMIN, list_scope="all",
           fields=lambda n: {"displayName": f"Org {n}", "websiteUrl": "https://example.com",
                             "passwordType": "argon2id", "languages": ["en"], "initScore": 10},
           change=("displayName", "Organization renamed")),
    Family("application", Application, m.Application, owner=ADMIN, sdk_owner=ADMIN, list_scope="all",
           fields=lambda n: {"displayName": f"App {n}", "organization": ORG, "cert": "cert-built-in",
                             "homepageUrl": "https://example.com", "expireInHours": 168},
           change=("description", "An application changed by the SDK")),
    Family("provider", Provider, m.Provider, list_scope="shared",
           fields=lambda n: {"displayName": f"Provider {n}", "category": "Email", "type": "Default",
                             "host": "smtp.example.com", "port": 465},
           change=("displayName", "Provider renamed")),
    Family("role", Role, m.Role,
           fields=lambda n: {"displayName": f"Role {n}", "description": "a role", "users": [f"{ORG}/{ADMIN}"],
                             "isEnabled": True},
           change=("description", "A role changed by the SDK")),
    Family("permission", Permission, m.Permission, fields=_permission,
           change=("description", "A permission changed by the SDK")),
    Family("group", Group, m.Group,
           fields=lambda n: {"displayName": f"Group {n}", "type": "Virtual", "parentId": ORG, "isEnabled": True},
           change=("displayName", "Group renamed")),
    Family("model", Model, m.CasbinModel,
           fields=lambda n: {"displayName": f"Model {n}", "modelText": USER_MODEL_TEXT},
           change=("displayName", "Model renamed")),
    Family("adapter", Adapter, m.Adapter,
           fields=lambda n: {"type": "Database", "databaseType": "mysql", "host": "db.example.com", "port": 3306,
                             "user": "casbin", "database": "casbin", "table": "casbin_rule"},
           change=("host", "db2.example.com")),
    Family("enforcer", Enforcer, m.Enforcer,
           fields=lambda n: {"displayName": f"Enforcer {n}", "model": f"{ORG}/user-model-built-in",
                             "adapter": f"{ORG}/user-adapter-built-in"},
           change=("description", "An enforcer changed by the SDK")),
    Family("token", Token, m.Token, owner=ADMIN, sdk_owner=ADMIN, list_scope="all",
           fields=lambda n: {"application": "app-built-in", "organization": ORG, "user": ADMIN,
                             "expiresIn": 3600, "scope": "read", "tokenType": "Bearer",
                             "grantType": "authorization_code"},
           change=("scope", "read write")),
    # Webhooks and syncers are added with owner admin here and read as admin/<name>; the SDK's
    # default (owner = its organization, read as built-in/<name>) is in test_sdk_python_calls.py.
    Family("webhook", Webhook, m.Webhook, owner=ADMIN, list_scope="all",
           fields=lambda n: {"organization": ORG, "url": "https://hooks.example.com/in", "method": "POST",
                             "contentType": "application/json", "events": ["signup"], "isEnabled": True},
           change=("url", "https://hooks.example.com/changed")),
    Family("syncer", Syncer, m.Syncer, owner=ADMIN, list_scope="all",
           fields=lambda n: {"organization": ORG, "type": "Database", "databaseType": "mysql",
                             "host": "db.example.com", "port": 3306, "user": "sync", "database": "hr",
                             "table": "people", "syncInterval": 10},
           change=("host", "db3.example.com")),
    Family("cert", Cert, m.Cert, list_scope="shared",
           fields=lambda n: {"displayName": f"Cert {n}", "scope": "JWT", "type": "x509",
                             "cryptoAlgorithm": "RS256", "bitSize": 2048, "expireInYears": 20},
           change=("displayName", "Cert renamed")),
    Family("subscription", Subscription, shop.Subscription,
           fields=lambda n: {"displayName": f"Subscription {n}", "user": ADMIN, "period": "Monthly",
                             "state": "Active"},
           change=("description", "A subscription changed by the SDK")),
    Family("plan", Plan, shop.Plan,
           fields=lambda n: {"displayName": f"Plan {n}", "price": 9.5, "currency": "USD", "period": "Monthly",
                             "isEnabled": True},
           change=("description", "A plan changed by the SDK")),
    Family("pricing", Pricing, shop.Pricing,
           fields=lambda n: {"displayName": f"Pricing {n}", "application": "app-built-in", "trialDuration": 7,
                             "isEnabled": True},
           change=("description", "A pricing changed by the SDK")),
    Family("product", Product, shop.Product,
           fields=lambda n: {"displayName": f"Product {n}", "currency": "USD", "price": 12.5, "quantity": 10,
                             "state": "Published"},
           change=("description", "A product changed by the SDK")),
    Family("payment", Payment, shop.Payment,
           fields=lambda n: {"displayName": f"Payment {n}", "provider": "provider_payment_dummy", "type": "Dummy",
                             "currency": "USD", "price": 3.25, "user": ADMIN, "state": "Created"},
           change=("displayName", "Payment renamed")),
    Family("transaction", Transaction, shop.Transaction,
           fields=lambda n: {"displayName": f"Transaction {n}", "application": "app-built-in", "category": "",
                             "type": "", "user": ADMIN, "amount": 5.0, "currency": "USD", "state": "Paid"},
           change=("displayName", "Transaction renamed")),
    Family("invitation", Invitation, m.Invitation,
           fields=lambda n: {"displayName": f"Invitation {n}", "code": uuid.uuid4().hex[:12], "quota": 5,
                             "application": "All", "state": "Active"},
           change=("quota", 9)),
    Family("order", Order, shop.Order,
           fields=lambda n: {"displayName": f"Order {n}", "user": ADMIN, "price": 4.0, "currency": "USD",
                             "state": "Created"},
           change=("displayName", "Order renamed")),
    Family("ldap", Ldap, m.Ldap, key="id",
           fields=lambda n: {"serverName": f"LDAP {n}", "host": "ldap.example.com", "port": 389,
                             "username": "cn=admin,dc=example,dc=com", "baseDn": "dc=example,dc=com",
                             "filter": "(objectClass=person)", "filterFields": ["uid"], "passwordType": "Plain"},
           change=("host", "ldap2.example.com")),
]


def families(test: str) -> list:
    return [pytest.param(family, id=family.name) for family in FAMILIES]


def new_name(family: Family) -> str:
    return f"sdk-{family.name}-{uuid.uuid4().hex[:8]}"


def build(family: Family, name: str) -> Any:
    """A new object as the SDK's own suites build one: its fields, and a sub-second, zoned createdTime."""
    obj = family.cls()
    obj.owner = family.owner
    obj.createdTime = datetime.datetime.now(datetime.timezone.utc).isoformat()
    setattr(obj, family.key, name)
    for attribute, value in family.fields(name).items():
        assert hasattr(obj, attribute), f"{family.cls.__name__} has no field {attribute}"
        setattr(obj, attribute, value)
    return obj


def _instant(created_time: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(created_time.replace("Z", "+00:00"))


def affected(result: Any, expected: str = "Affected") -> None:
    """Writes return str(data) for some families, the whole response for the others
    (model, enforcer and payment without checking its status)."""
    if isinstance(result, dict):
        assert result.get("status") == "ok", result
        assert result.get("data") == expected, result
    else:
        assert result == expected, result


def added(family: Family, result: Any, name: str) -> None:
    """add-X answers Affected, or the record's name where Casdoor answers it (add-transaction)."""
    affected(result, name if kinds.of(family.name).answer is answer_name else "Affected")


def missing(client: casdoor.CasdoorSDK, family: Family, name: str) -> bool:
    """Whether get_X finds nothing: None, or the error Casdoor answers for this kind (get-token)."""
    if not kinds.of(family.name).missing_is_error:
        return get(client, family, name) is None
    try:
        get(client, family, name)
    except Exception as error:  # the SDK raises the server's message
        return "does not exist" in str(error)
    return False


def sdk_id(family: Family, name: str) -> str:
    """What get_X is called with: the bare name where the SDK's default owner is right."""
    return name if family.owner == family.sdk_owner else f"{family.owner}/{name}"


def sdk_call(client: casdoor.CasdoorSDK, verb: str, family: Family, *args: Any) -> Any:
    return getattr(client, f"{verb}_{family.name}")(*args)


def get(client: casdoor.CasdoorSDK, family: Family, name: str) -> Any:
    return sdk_call(client, "get", family, sdk_id(family, name))


def list_all(client: casdoor.CasdoorSDK, family: Family) -> list[Any]:
    return getattr(client, f"get_{family.plural_name}")()


def list_page(client: casdoor.CasdoorSDK, family: Family, page: int, size: int) -> tuple[list[Any], int]:
    method = getattr(client, f"get_pagination_{family.plural_name}", None)
    if method is not None:
        return method(page, size)
    # organization, application, cert and ldap have no get_pagination_X: the SDK's generic paging
    rows, total = client.get_pagination(f"get-{family.plural_name}", page, size, owner=family.sdk_owner)
    return [family.cls.from_dict(row) for row in rows or []], total


def ident(family: Family, obj: Any) -> tuple[str, str]:
    return obj.owner, getattr(obj, family.key)


def stored_ids(family: Family) -> set[tuple[str, str]]:
    return sdk_server.stored_ids(family.table, family.sdk_owner, family.list_scope)


def check_fields(family: Family, read: Any, sent: Any) -> None:
    """The fields the family's declaration sets came back as sent."""
    for attribute in family.fields("x"):
        assert getattr(read, attribute) == getattr(sent, attribute), f"{family.name}.{attribute}"


@pytest.fixture(autouse=True)
def every_sdk_answer_is_an_envelope(monkeypatch):
    """Every answer the SDK gets in these tests: HTTP 200, JSON, all seven keys."""
    answers: list[requests.Response] = []

    def recording(send: Callable) -> Callable:
        def call(*args: Any, **kwargs: Any) -> requests.Response:
            response = send(*args, **kwargs)
            answers.append(response)
            return response
        return call

    monkeypatch.setattr(requests, "get", recording(requests.get))
    monkeypatch.setattr(requests, "post", recording(requests.post))
    yield
    for response in answers:
        where = f"{response.request.method} {response.url.split('?')[0]}"
        assert response.status_code == 200, where
        assert response.headers["content-type"].startswith("application/json"), where
        assert set(response.json()) == ENVELOPE_KEYS, where


@pytest.fixture
def created(sdk):  # noqa: F811
    """add(family, n) adds n objects through the SDK; whatever is left is deleted afterwards."""
    made: list[tuple[Family, Any]] = []

    def add(family: Family, count: int = 1) -> list[Any]:
        objects = []
        for _ in range(count):
            obj = build(family, new_name(family))
            added(family, sdk_call(sdk, "add", family, obj), getattr(obj, family.key))
            made.append((family, obj))
            objects.append(obj)
        return objects

    yield add
    for family, obj in made:
        if not missing(sdk, family, getattr(obj, family.key)):
            sdk_call(sdk, "delete", family, obj)


# --- every family ---

@pytest.mark.parametrize("family", families("crud"))
def test_add_get_update_delete(sdk, created, family: Family):  # noqa: F811
    (obj,) = created(family)
    name = getattr(obj, family.key)

    read = get(sdk, family, name)
    assert isinstance(read, family.cls)
    assert ident(family, read) == (family.owner, name)
    assert _instant(read.createdTime) == _instant(obj.createdTime), "createdTime keeps its precision"
    check_fields(family, read, obj)

    listed = {ident(family, row) for row in list_all(sdk, family)}
    assert (family.owner, name) in listed

    # the object as read goes back whole, with one field changed (the console's and the SDK's way)
    attribute, value = family.change
    assert getattr(read, attribute) != value
    setattr(read, attribute, value)
    affected(sdk_call(sdk, "update", family, read))
    reread = get(sdk, family, name)
    assert getattr(reread, attribute) == value
    assert reread.createdTime == read.createdTime

    affected(sdk_call(sdk, "delete", family, reread))
    assert missing(sdk, family, name)
    assert (family.owner, name) not in {ident(family, row) for row in list_all(sdk, family)}


@pytest.mark.parametrize("family", families("page"))
def test_pagination_covers_every_row_once(sdk, created, family: Family):  # noqa: F811
    created(family, 3)
    expected = stored_ids(family)
    size = 2
    assert len(expected) > size

    seen: list[tuple[str, str]] = []
    pages = math.ceil(len(expected) / size)
    for page in range(1, pages + 1):
        rows, total = list_page(sdk, family, page, size)
        assert total == len(expected)
        assert len(rows) == (size if page < pages else len(expected) - size * (pages - 1))
        assert all(isinstance(row, family.cls) for row in rows)
        seen.extend(ident(family, row) for row in rows)
    assert len(seen) == len(set(seen)), "a row came back on two pages"
    assert set(seen) == expected
    assert {ident(family, row) for row in list_all(sdk, family)} == expected


@pytest.mark.parametrize("family", FAMILIES, ids=str)
def test_reading_a_missing_object_is_none(sdk, family: Family):  # noqa: F811
    assert missing(sdk, family, new_name(family))


# --- resources: the SDK reads, lists and deletes them (uploads: test_sdk_python_calls.py) ---

@pytest.fixture
def stored_resources(database):
    names = [f"sdk-resource-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    with session_scope() as db:
        for index, name in enumerate(names):
            db.add(m.Resource(owner=ORG, name=name, user=ADMIN, application="app-built-in", tag="custom",
                              file_name=f"{name}.txt", file_type="text", file_format=".txt",
                              file_size=100 + index, url=f"https://files.example.com/{name}.txt"))
    yield names
    with session_scope() as db:
        for row in db.exec(select(m.Resource).where(m.Resource.owner == ORG, m.Resource.name.in_(names))):
            db.delete(row)


def test_resource_read_list_page_delete(sdk, stored_resources):  # noqa: F811
    first = stored_resources[0]
    read = sdk.get_resource(first)
    assert isinstance(read, Resource)
    assert (read.owner, read.name, read.fileName, read.fileSize) == (ORG, first, f"{first}.txt", 100)
    assert sdk.get_resource_ex(ORG, first).name == first

    listed = sdk.get_resources(ORG, ADMIN, "", "", "", "")
    assert set(stored_resources) <= {row.name for row in listed}
    found = sdk.get_resources(ORG, ADMIN, "name", first, "", "")
    assert [row.name for row in found] == [first]

    with session_scope() as db:
        expected = {name for name in db.exec(select(m.Resource.name).where(m.Resource.owner == ORG))}
    seen: list[str] = []
    pages = math.ceil(len(expected) / 2)
    for page in range(1, pages + 1):
        rows = sdk.get_pagination_resources(ORG, "", "", "", 2, page, "name", "ascend")
        seen.extend(row.name for row in rows)
    assert seen == sorted(expected)
    _, total = sdk.get_pagination("get-resources", 1, 2, owner=ORG)
    assert total == len(expected)

    affected(sdk.delete_resource(first))
    assert sdk.get_resource(first) is None
    assert sdk.get_resource(stored_resources[1]) is not None
    affected(sdk.delete_resource_with_tag(sdk.get_resource(stored_resources[1])))
    assert sdk.get_resource(stored_resources[1]) is None


# --- users ---

def _stored_user(name: str) -> m.User:
    with session_scope() as db:
        return db.exec(select(m.User).where(m.User.owner == ORG, m.User.name == name)).one()


def _sign_in(api_server: str, username: str, password: str) -> dict:  # noqa: F811
    response = httpx.post(f"{api_server}/api/login", json={
        "application": "app-built-in", "organization": ORG, "username": username, "password": password,
        "type": "login"})
    assert response.status_code == 200
    return response.json()


def test_user_password_survives_an_update_with_the_masked_value(sdk, api_server):  # noqa: F811
    name = f"sdk-user-{uuid.uuid4().hex[:8]}"
    password = "Sdk-pass-1234"
    user = User.new(ORG, name, "", f"User {name}", email=f"{name}@example.com", phone="")
    user.password = password
    affected(sdk.add_user(user))
    try:
        stored = _stored_user(name)
        assert stored.password != password, "the password is stored hashed"
        assert verify_password(password, stored.password, stored.password_type, stored.password_salt)

        read = sdk.get_user(name)
        assert isinstance(read, User)
        assert (read.owner, read.name, read.email, read.displayName) == (ORG, name, f"{name}@example.com",
                                                                       f"User {name}")
        assert read.password == "***"

        read.displayName = "Renamed by the SDK"
        affected(sdk.update_user(read))
        assert sdk.get_user(name).displayName == "Renamed by the SDK"
        after = _stored_user(name)
        assert after.password == stored.password
        assert verify_password(password, after.password, after.password_type, after.password_salt)
        signed_in = _sign_in(api_server, name, password)
        assert signed_in["status"] == "ok", signed_in
        assert signed_in["data"] == f"{ORG}/{name}"

        assert name in {row.name for row in sdk.get_users()}
        assert all(row.password in ("", "***") for row in sdk.get_users())
    finally:
        affected(sdk.delete_user(User.new(ORG, name, "", "")))
    assert sdk.get_user(name) is None
    assert _sign_in(api_server, name, password)["status"] == "error"


def test_user_pagination_totals(sdk):  # noqa: F811
    names = [f"sdk-page-user-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    for name in names:
        user = User.new(ORG, name, "", name)
        user.password = "Sdk-pass-1234"
        affected(sdk.add_user(user))
    try:
        with session_scope() as db:
            expected = {name for name in db.exec(select(m.User.name).where(m.User.owner == ORG))}
        seen: list[str] = []
        pages = math.ceil(len(expected) / 2)
        for page in range(1, pages + 1):
            rows, total = sdk.get_pagination_users(page, 2)
            assert total == len(expected)
            seen.extend(row.name for row in rows)
        assert len(seen) == len(set(seen))
        assert set(seen) == expected
        assert {row.name for row in sdk.get_users()} == expected
        rows, total = sdk.get_pagination_users(1, 10, {"field": "name", "value": names[0]})
        assert (total, [row.name for row in rows]) == (1, [names[0]])
    finally:
        for name in names:
            affected(sdk.delete_user(User.new(ORG, name, "", "")))
    assert not {name for name in names} & {row.name for row in sdk.get_users()}


def test_the_built_in_admin_is_readable_and_signs_in(sdk, api_server):  # noqa: F811
    admin = sdk.get_user(ADMIN)
    assert (admin.owner, admin.name, admin.isAdmin, admin.password) == (ORG, ADMIN, True, "***")
    assert _sign_in(api_server, ADMIN, ADMIN_PASSWORD)["status"] == "ok"


def test_the_built_in_cert_matches_the_sdk_certificate(sdk):  # noqa: F811
    # the default cert belongs to admin
    cert = sdk.get_cert("admin/cert-built-in")
    assert cert.owner == ADMIN
    assert cert.certificate == sdk.certificate
    assert cert.privateKey and cert.privateKey != "***", "an application client is a global admin"


# --- the envelope ---

def _query(sdk: casdoor.CasdoorSDK, **params: str) -> dict[str, str]:  # noqa: F811
    return {"clientId": sdk.client_id, "clientSecret": sdk.client_secret, **params}


def test_every_answer_has_the_seven_envelope_keys(sdk, api_server):  # noqa: F811
    answers = [
        httpx.get(f"{api_server}/api/get-organizations", params=_query(sdk, owner=ADMIN)),
        httpx.get(f"{api_server}/api/get-users", params=_query(sdk, owner=ORG, p="1", pageSize="1")),
        httpx.get(f"{api_server}/api/get-user", params=_query(sdk, id=f"{ORG}/no-such-user")),
        # a body without Content-Type, as the SDK sends it
        httpx.post(f"{api_server}/api/delete-role", params=_query(sdk, id=f"{ORG}/no-such-role"),
                   content=b'{"owner": "built-in", "name": "no-such-role"}'),
        httpx.get(f"{api_server}/api/get-roles", params={"clientId": sdk.client_id, "clientSecret": "wrong"}),
        httpx.get(f"{api_server}/api/get-roles", params={"owner": ORG}),
    ]
    for response in answers:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("application/json")
        assert set(response.json()) == ENVELOPE_KEYS, response.json()
    ok, page, missing, unaffected, wrong_secret, anonymous = (response.json() for response in answers)
    assert ok["status"] == "ok" and isinstance(ok["data"], list) and ok["data2"] is None
    assert page["status"] == "ok" and len(page["data"]) == 1 and isinstance(page["data2"], int)
    assert (missing["status"], missing["data"]) == ("ok", None)
    assert (unaffected["status"], unaffected["data"]) == ("ok", "Unaffected")
    assert wrong_secret["status"] == "error"
    assert wrong_secret["msg"] == "Incorrect client secret for application: app-built-in"
    assert (anonymous["status"], anonymous["data"]) == ("error", "Please login first")


def test_sdk_raises_the_servers_message(sdk):  # noqa: F811
    bad = casdoor.CasdoorSDK(sdk.endpoint, sdk.client_id, "wrong-secret", sdk.certificate, ORG, "app-built-in",
                             front_endpoint=sdk.endpoint)
    with pytest.raises(Exception, match="Incorrect client secret for application: app-built-in"):
        bad.get_roles()
    with pytest.raises(ValueError, match="Incorrect client secret"):
        bad.get_organizations()


def test_dry_run_transaction_and_records(sdk):  # noqa: F811
    name = f"sdk-dry-{uuid.uuid4().hex[:8]}"
    transaction = Transaction.from_dict({"owner": ORG, "name": name, "user": ADMIN, "amount": 2.0,
                                         "currency": "USD", "state": "Paid"})
    affected(sdk.add_transaction_with_dry_run(transaction, True))
    assert sdk.get_transaction(name) is None
    affected(sdk.add_transaction_with_dry_run(transaction, False), name)
    assert sdk.get_transaction(name).amount == 2.0

    record = Record.from_dict({"name": f"sdk-record-{uuid.uuid4().hex[:8]}", "action": "sdk-event"})
    affected(sdk.add_record(record))
    found = sdk.get_record(record.name)
    assert (found.action, found.organization) == ("sdk-event", ORG)
