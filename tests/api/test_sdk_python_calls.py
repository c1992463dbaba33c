"""Compatibility: the calls of the official Casdoor Python SDK (casdoor 1.43.3) beyond plain
add / get / list / update / delete (test_sdk_python.py has those): the user look-ups and
partial updates, sessions, syncers and webhooks addressed the SDK's way, paging and column
updates of invitations, tokens, transactions and orders, the owner helpers, an access
token's SDK (with_access_token), uploads, the raw token requests, and the asynchronous
client. Every fixture is built through the API, with the SDK itself, as a new user of the
server would; docs/api.md ("The SDKs' own test suites") maps each call of the SDKs' own
suites to its test here."""

from __future__ import annotations

import asyncio
import datetime
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import casdoor
import httpx
import pytest
from casdoor.application import Application
from casdoor.invitation import Invitation
from casdoor.order import Order
from casdoor.organization import Organization
from casdoor.product import Product
from casdoor.record import Record
from casdoor.session import Session
from casdoor.syncer import Syncer
from casdoor.token import Token
from casdoor.transaction import Transaction
from casdoor.user import User
from casdoor.webhook import Webhook

from tests.api.sdk_server import api_server, sdk  # noqa: F401

ORG = "built-in"
ADMIN = "admin"
APP = "app-built-in"
PASSWORD = "Sdk-calls-pass-1"


def now() -> str:
    """A sub-second, zoned createdTime, as the SDKs' suites send it."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat()


def stamp(created_time: str) -> datetime.datetime:
    return datetime.datetime.fromisoformat(created_time.replace("Z", "+00:00"))


def unique(prefix: str) -> str:
    return f"sdk-{prefix}-{uuid.uuid4().hex[:8]}"


def affected(answer: dict | str, expected: str = "Affected") -> None:
    """The SDK returns the whole answer for most writes, str(data) for some (organization, application)."""
    if isinstance(answer, str):
        assert answer == expected
    else:
        assert (answer["status"], answer["data"]) == ("ok", expected), answer


@pytest.fixture
def user(sdk) -> Iterator[User]:  # noqa: F811
    """A user of built-in with an email, a phone and a password, added with the SDK."""
    name = unique("user")
    made = User.new(ORG, name, now(), f"User {name}", f"{name}@example.com",
                    f"202555{uuid.uuid4().int % 10_000:04d}")
    made.countryCode = "US"
    made.password = PASSWORD
    affected(sdk.add_user(made))
    yield sdk.get_user(name)
    if sdk.get_user(name) is not None:
        sdk.delete_user(User.new(ORG, name, "", ""))


# --- users ---

def test_user_look_ups_by_email_phone_and_user_id(sdk, user):  # noqa: F811
    assert user.id, "the server gives every user an id"
    assert sdk.get_user_by_email(user.email).name == user.name
    assert sdk.get_user_by_phone(user.phone).name == user.name
    assert sdk.get_user_by_user_id(user.id).name == user.name
    assert sdk.get_user_by_email(f"nobody-{uuid.uuid4().hex[:6]}@example.com") is None


def test_global_sorted_and_counted_users(sdk, user):  # noqa: F811
    assert user.name in {row.name for row in sdk.get_global_users()}
    assert all(row.password in ("", "***") for row in sdk.get_global_users())
    newest = sdk.get_sorted_users("created_time", 1)
    assert len(newest) == 1 and isinstance(newest[0], User)
    everyone = sdk.get_users()
    assert stamp(newest[0].createdTime) == max(stamp(row.createdTime) for row in everyone)
    assert len(sdk.get_sorted_users("created_time", 25)) == min(25, len(everyone))
    online, offline = sdk.get_user_count(True), sdk.get_user_count(False)
    assert online + offline == sdk.get_user_count() == len(everyone)


def test_update_user_for_columns_changes_only_those(sdk, user):  # noqa: F811
    user.displayName = "Changed by columns"
    user.bio = "left out of the columns"
    affected(sdk.update_user_for_columns(user, ["displayName"]))
    read = sdk.get_user(user.name)
    assert (read.displayName, read.bio) == ("Changed by columns", "")
    # Casdoor's column names, snake_case, work too
    read.bio = "in the columns"
    read.displayName = "left out"
    affected(sdk.update_user_for_columns(read, ["bio"]))
    again = sdk.get_user(user.name)
    assert (again.displayName, again.bio) == ("Changed by columns", "in the columns")


def test_update_user_by_id_and_by_user_id(sdk, user):  # noqa: F811
    user.displayName = "Changed by id"
    affected(sdk.update_user_by_id(f"{ORG}/{user.name}", user))
    assert sdk.get_user(user.name).displayName == "Changed by id"
    user.displayName = "Changed by user id"
    affected(sdk.update_user_by_user_id(ORG, user.id, user))
    assert sdk.get_user(user.name).displayName == "Changed by user id"


def test_check_user_password_then_set_password(sdk, user):  # noqa: F811
    user.password = PASSWORD
    assert sdk.check_user_password(user) is True
    user.password = "not-the-password"
    assert sdk.check_user_password(user) is False
    assert sdk.set_password(ORG, user.name, PASSWORD, "Sdk-calls-new-2")
    user.password = "Sdk-calls-new-2"
    assert sdk.check_user_password(user) is True


def test_a_sub_second_created_time_survives_read_and_update(sdk):  # noqa: F811
    name = unique("stamp")
    sent = now()
    made = User.new(ORG, name, sent, name)
    made.password = PASSWORD
    affected(sdk.add_user(made))
    try:
        read = sdk.get_user(name)
        assert datetime.datetime.fromisoformat(read.createdTime) == datetime.datetime.fromisoformat(sent)
        read.displayName = "renamed"
        affected(sdk.update_user(read))
        # a bare User() carries createdTime "": ignored on update, not refused
        bare = User.new(ORG, name, "", "renamed again")
        bare.password = ""
        affected(sdk.update_user_for_columns(bare, ["displayName"]))
        assert sdk.get_user(name).createdTime == read.createdTime
    finally:
        sdk.delete_user(User.new(ORG, name, "", ""))


# --- sessions ---

def test_session_add_get_list_update_delete(sdk, user):  # noqa: F811
    # a naive, sub-second createdTime, as the suites' session test sends it
    session = Session.new(ORG, user.name, APP, datetime.datetime.now().isoformat(), ["sdk-s1"])
    affected(sdk.add_session(session))
    try:
        assert (ORG, user.name) in {(row.owner, row.name) for row in sdk.get_sessions()}
        rows, total = sdk.get_pagination_sessions(1, 100)
        assert total >= len(rows) >= 1
        read = sdk.get_session(user.name, APP)
        assert (read.owner, read.name, read.application, read.sessionId) == (ORG, user.name, APP, ["sdk-s1"])
        read.sessionId = ["sdk-s1", "sdk-s2"]
        affected(sdk.update_session(read))
        assert sdk.get_session(user.name, APP).sessionId == ["sdk-s1", "sdk-s2"]
        read.sessionId = ["sdk-s3"]
        affected(sdk.update_session_for_columns(read, ["session_id"]))
        again = sdk.get_session(user.name, APP)
        assert (again.sessionId, again.createdTime) == (["sdk-s3"], read.createdTime)
    finally:
        affected(sdk.delete_session(Session.new(ORG, user.name, APP, "", [])))
    assert sdk.get_session(user.name, APP) is None


# --- the owner helpers ---

def test_owner_helpers(sdk):  # noqa: F811
    assert sdk.get_id("role") == f"{ORG}/role" and sdk.get_id("other/role") == "other/role"
    names = sdk.get_organization_names()
    assert ORG in {org.name for org in names}
    assert all(isinstance(org, Organization) for org in names)
    applications = sdk.get_organization_applications()
    assert APP in {app.name for app in applications}
    assert {app.organization for app in applications} == {ORG}
    certs = sdk.get_global_certs()
    assert ("admin", "cert-built-in") in {(cert.owner, cert.name) for cert in certs}
    # an "owner/name" id reaches an object of another owner
    assert sdk.get_application(f"admin/{APP}").organization == ORG


def test_sign_in_and_profile_urls_point_at_served_pages(sdk):  # noqa: F811
    # built by the SDK without a request: they carry the application's client id, redirect and name
    signin = urlsplit(sdk.get_signin_url("http://localhost:9000/callback"))
    assert signin.path == "/login/oauth/authorize"
    query = parse_qs(signin.query)
    assert (query["client_id"], query["redirect_uri"], query["state"]) == (
        [sdk.client_id], ["http://localhost:9000/callback"], [APP])
    assert sdk.get_signup_url(True) == f"{sdk.endpoint}/signup/{APP}"
    assert "/signup/oauth/authorize?" in sdk.get_signup_url(False, "http://localhost:9000/callback")
    assert sdk.get_user_profile_url("alice") == f"{sdk.endpoint}/users/{ORG}/alice"
    assert sdk.get_my_profile_url("tok") == f"{sdk.endpoint}/account?access_token=tok"


# --- invitations, tokens, transactions, orders: paging and column updates ---

def test_invitation_pages_and_column_updates(sdk):  # noqa: F811
    name, code = unique("invitation"), f"TEST{uuid.uuid4().hex[:6]}"
    invitation = Invitation.from_dict({"owner": ORG, "name": name, "createdTime": now(), "displayName": "Invite",
                                       "code": code, "defaultCode": code, "quota": 10, "application": APP,
                                       "email": "invitee@example.com", "state": "Active"})
    affected(sdk.add_invitation(invitation))
    try:
        assert name in {row.name for row in sdk.get_invitations()}
        rows, total = sdk.get_pagination_invitations(1, 100)
        assert total >= 1 and name in {row.name for row in rows}
        read = sdk.get_invitation(name)
        assert read.code == code
        read.state = "Suspended"
        affected(sdk.update_invitation(read))
        assert sdk.get_invitation(name).state == "Suspended"
        read.state, read.displayName, read.quota = "Active", "Invite renamed", 99
        affected(sdk.update_invitation_for_columns(read, ["state", "display_name"]))
        again = sdk.get_invitation(name)
        assert (again.state, again.displayName, again.quota) == ("Active", "Invite renamed", 10)
        # what a sign-up page learns from the code: the invitation without its codes or quota
        info = sdk.get_invitation_info(code, APP)
        assert (info.name, info.email, info.code, info.quota) == (name, "invitee@example.com", "***", -1)
    finally:
        affected(sdk.delete_invitation(Invitation.from_dict({"owner": ORG, "name": name})))
    assert sdk.get_invitation(name) is None


def test_token_pages_and_column_updates(sdk):  # noqa: F811
    name = unique("token")
    token = Token.from_dict({"owner": ADMIN, "name": name, "createdTime": now(), "application": APP,
                             "organization": ORG, "user": ADMIN, "code": "abc", "accessToken": "123456",
                             "expiresIn": 3600, "scope": "read", "tokenType": "Bearer"})
    affected(sdk.add_token(token))
    try:
        assert name in {row.name for row in sdk.get_tokens()}
        rows, total = sdk.get_pagination_tokens(1, 10)
        assert total >= 1 and len(rows) == min(10, total)
        read = sdk.get_token(name)
        # a token added by hand stays inert: the code and token given are not stored, and an
        # update may change the record but never give it a code (docs/api.md, Tokens)
        assert (read.code, read.accessToken) == ("", "")
        read.code = "Updated Code"
        affected(sdk.update_token(read), "Unaffected")
        assert sdk.get_token(name).code == ""
        read.scope = "profile"
        affected(sdk.update_token_for_columns(read, ["scope"]))
        assert sdk.get_token(name).scope == "profile"
    finally:
        affected(sdk.delete_token(Token.from_dict({"owner": ADMIN, "name": name})))
    with pytest.raises(Exception, match="does not exist"):
        sdk.get_token(name)


def test_a_transaction_without_a_name_gets_one(sdk):  # noqa: F811
    transaction = Transaction.from_dict({"owner": ORG, "createdTime": now(), "application": APP,
                                         "domain": "https://example.com", "category": "Recharge",
                                         "type": "Recharge", "tag": "Organization", "amount": 100,
                                         "currency": "USD", "state": "Paid"})
    assert sdk.add_transaction_with_dry_run(transaction, True)["status"] == "ok"
    answer = sdk.add_transaction(transaction)
    name = answer["data"]
    assert answer["status"] == "ok" and name and name != "Affected"
    try:
        assert name in {row.name for row in sdk.get_transactions()}
        _, total = sdk.get_pagination_transactions(1, 10)
        assert total >= 1
        read = sdk.get_transaction(name)
        assert (read.amount, read.category) == (100, "Recharge")
        read.displayName = "Renamed transaction"
        affected(sdk.update_transaction(read))
        assert sdk.get_transaction(name).displayName == "Renamed transaction"
    finally:
        affected(sdk.delete_transaction(Transaction.from_dict({"owner": ORG, "name": name})))
    assert sdk.get_transaction(name) is None


def test_an_order_of_a_product_pages_and_updates(sdk):  # noqa: F811
    product_name, name = unique("product"), unique("order")
    affected(sdk.add_product(Product.from_dict({
        "owner": ORG, "name": product_name, "createdTime": now(), "displayName": product_name,
        "description": "An SDK product", "quantity": 999, "state": "Published", "price": 1, "currency": "USD"})))
    order = Order.from_dict({"owner": ORG, "name": name, "createdTime": now(), "displayName": name,
                             "products": [product_name],
                             "productInfos": [{"owner": ORG, "name": product_name, "displayName": product_name,
                                               "price": 1, "currency": "USD", "quantity": 1}],
                             "user": ADMIN, "price": 1, "currency": "USD", "state": "Created"})
    affected(sdk.add_order(order))
    try:
        assert sdk.get_order(name).products == [product_name]
        rows, total = sdk.get_pagination_orders(1, 10)
        assert total >= len(rows) >= 1 and name in {row.name for row in sdk.get_orders()}
        read = sdk.get_order(name)
        read.message = "Updated order message"
        affected(sdk.update_order(read))
        assert sdk.get_order(name).message == "Updated order message"
    finally:
        affected(sdk.delete_order(Order.from_dict({"owner": ORG, "name": name})))
        affected(sdk.delete_product(Product.from_dict({"owner": ORG, "name": product_name})))
    assert sdk.get_order(name) is None and sdk.get_product(product_name) is None


# --- syncers and webhooks, addressed the SDK's way ---

SYNCER = {"organization": ORG, "host": "localhost", "port": 3306, "user": "root", "password": "123",
          "databaseType": "mysql", "database": "syncer_db", "table": "user_table", "syncInterval": 1}
WEBHOOK = {"organization": ORG, "url": "https://hooks.example.com/in", "method": "POST",
           "contentType": "application/json", "events": ["signup"]}


@pytest.mark.parametrize("cls, fields, change", [(Syncer, SYNCER, ("host", "db.example.com")),
                                                 (Webhook, WEBHOOK, ("url", "https://hooks.example.com/2"))],
                         ids=["syncer", "webhook"])
@pytest.mark.parametrize("owner", [ADMIN, ORG])
def test_syncer_and_webhook_by_the_sdks_organization(sdk, cls, fields, change, owner):  # noqa: F811
    """Added with owner admin or the SDK's organization, read back by bare name (the SDK
    makes it built-in/<name>): the one admin-owned record of that organization."""
    kind = cls.__name__.lower()
    name = unique(kind)
    affected(getattr(sdk, f"add_{kind}")(cls.from_dict({"owner": owner, "name": name, "createdTime": now(),
                                                        **fields})))
    read = getattr(sdk, f"get_{kind}")(name)
    assert (read.owner, read.name, read.organization) == (ADMIN, name, ORG)
    listed = getattr(sdk, f"get_{kind}s")()
    assert name in {row.name for row in listed}
    attribute, value = change
    setattr(read, attribute, value)
    affected(getattr(sdk, f"update_{kind}")(read))
    assert getattr(getattr(sdk, f"get_{kind}")(name), attribute) == value
    affected(getattr(sdk, f"delete_{kind}")(cls.from_dict({"owner": owner, "name": name})))
    assert getattr(sdk, f"get_{kind}")(name) is None


# --- uploads ---

def test_upload_resource_then_delete_it(sdk, api_server):  # noqa: F811
    path = f"sdk/{unique('upload')}.svg"
    content = b'<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>'
    answer = sdk.upload_resource(ADMIN, "custom", "", path, content)
    url, name = answer["data"], answer["data2"]
    assert answer["status"] == "ok" and name == path.replace("/", "_")
    read = sdk.get_resource(name)
    assert (read.owner, read.user, read.application, read.tag, read.fileSize) == (ORG, ADMIN, APP, "custom",
                                                                                   len(content))
    served = httpx.get(f"{api_server}{urlsplit(url).path}")
    assert served.status_code == 200 and served.content == content
    affected(sdk.delete_resource(name))
    assert sdk.get_resource(name) is None
    assert httpx.get(f"{api_server}{urlsplit(url).path}").status_code == 404


# --- an access token's SDK ---

@dataclass(frozen=True)
class PasswordApp:
    """An organization with an admin user, and an application of it allowed the password grant."""

    sdk: casdoor.CasdoorSDK
    org: str
    user: str


@pytest.fixture
def password_app(sdk, api_server) -> Iterator[PasswordApp]:  # noqa: F811
    org, app, user = unique("org"), unique("app"), "boss"
    affected(sdk.add_organization(Organization.from_dict({"owner": ADMIN, "name": org, "displayName": org,
                                                          "passwordType": "argon2id"})))
    account = User.new(org, user, now(), "Boss", f"boss@{org}.example.com")
    account.password, account.isAdmin = PASSWORD, True
    affected(sdk.add_user(account))
    affected(sdk.add_application(Application.from_dict({
        "owner": ADMIN, "name": app, "displayName": app, "organization": org, "cert": "cert-built-in",
        "grantTypes": ["password", "client_credentials", "refresh_token"], "redirectUris": ["http://localhost:9000/callback"],
        "enablePassword": True, "expireInHours": 1})))
    stored = sdk.get_application(f"admin/{app}")
    client = casdoor.CasdoorSDK(api_server, stored.clientId, stored.clientSecret, sdk.certificate, org, app,
                                front_endpoint=api_server)
    yield PasswordApp(client, org, user)
    sdk.delete_application(Application.from_dict({"owner": ADMIN, "name": app}))
    sdk.delete_organization(Organization.from_dict({"owner": ADMIN, "name": org}))


def test_with_access_token_calls_as_the_user(password_app):
    client = password_app.sdk
    tokens = client.get_oauth_token_by_password(password_app.user, PASSWORD)
    user_sdk = client.with_access_token(tokens["access_token"])
    assert user_sdk.get_account().name == password_app.user
    # the original SDK still calls as the application, which has no account
    assert client.access_token == ""
    with pytest.raises(Exception, match="Please login first"):
        client.get_account()

    # records: added by the application, read with an admin user's token
    record = Record.from_dict({"owner": password_app.org, "name": unique("record"), "createdTime": now(),
                               "organization": password_app.org, "user": password_app.user,
                               "action": "sdk-record"})
    assert client.add_record(record)["status"] == "ok"
    assert record.name in {row.name for row in user_sdk.get_records()}
    assert user_sdk.get_record(record.name).action == "sdk-record"
    assert user_sdk.get_record(f"{record.name}_missing") is None

    assert client.logout_current_session(tokens["access_token"])["status"] == "ok"
    with pytest.raises(Exception, match="Access token is invalid or expired"):
        user_sdk.get_account()


def test_raw_token_requests(password_app):
    client = password_app.sdk
    response = client.oauth_token_request(username=password_app.user, password=PASSWORD)
    assert response.status_code == 200
    tokens = response.json()
    assert tokens["token_type"] == "Bearer" and tokens["access_token"]
    refreshed = client.refresh_token_request(tokens["refresh_token"])
    assert refreshed.status_code == 200 and refreshed.json()["access_token"] != tokens["access_token"]
    assert client.parse_jwt_token(refreshed.json()["access_token"])["name"] == password_app.user
    # a spent refresh token: RFC 6749's error, as it is
    replay = client.refresh_token_request(tokens["refresh_token"]).json()
    assert replay["error"] == "invalid_grant"
    # the SDK's own request helper, given a payload of its making: the client credentials grant
    payload = client._get_payload_for_access_token_request()
    assert payload["grant_type"] == "client_credentials"
    answer = client._oauth_token_request(payload=payload).json()
    assert client.parse_jwt_token(answer["access_token"])["azp"] == client.client_id


# --- the asynchronous client ---

def test_the_async_client(password_app, api_server):  # noqa: F811
    client = password_app.sdk
    async_sdk = casdoor.AsyncCasdoorSDK(api_server, client.client_id, client.client_secret, client.certificate,
                                        password_app.org, client.application_name, front_endpoint=api_server)

    async def run() -> None:
        tokens = await async_sdk.get_oauth_token(username=password_app.user, password=PASSWORD)
        assert async_sdk.parse_jwt_token(tokens["access_token"])["name"] == password_app.user
        raw = await async_sdk.oauth_token_request(username=password_app.user, password=PASSWORD)
        refreshed = await async_sdk.refresh_token_request(raw["refresh_token"])
        assert refreshed["access_token"]
        assert await async_sdk.refresh_oauth_token(refreshed["refresh_token"])

        name = unique("async")
        made = User.new(password_app.org, name, now(), name)
        made.password = PASSWORD
        assert (await async_sdk.add_user(made))["data"] == "Affected"
        # the asynchronous client hands back users as dicts
        assert name in {row["name"] for row in await async_sdk.get_users()}
        read = User.from_dict(await async_sdk.get_user(name))
        assert read.name == name
        read.displayName = "async renamed"
        assert (await async_sdk.update_user(read))["data"] == "Affected"
        assert (await async_sdk.get_user(name))["displayName"] == "async renamed"
        count = await async_sdk.get_user_count()
        assert count == len(await async_sdk.get_users())
        assert (await async_sdk.delete_user(read))["data"] == "Affected"
        assert await async_sdk.get_user(name) is None
        link = await async_sdk.get_auth_link(redirect_uri="http://localhost:9000/callback")
        assert urlsplit(link).path == "/login/oauth/authorize"

    asyncio.run(run())
