"""The login page follows the application's signin methods, against a real OpenLDAP slapd: the
LDAP tab signs an account synced from LDAP in by a bind; under the Password rule Non-LDAP the
password tab refuses that account with a clear message; under Hide password there is no password
tab, and only the LDAP method's fields are offered."""

from __future__ import annotations

import re
import secrets
import uuid
from urllib.parse import parse_qs, urlencode, urlsplit

from playwright.sync_api import expect

from tests import ldap_server
from tests.e2e.axe import serious
from tests.e2e.steps import server_db

PASSWORD = "E2e-methods-pass-1"
CALLBACK = "http://127.0.0.1:9/callback"  # nothing listens: Playwright answers the navigation
LDAP_ONLY = "This account's password is checked by its LDAP server: please sign in with LDAP"


def _organization(server, directory, password_rule: str) -> str:
    """An organization whose default application lists Password under `password_rule` and LDAP,
    with an LDAP server, the directory's user0042 synced, and alice with a password of her own."""
    from iam_console import models as m
    from iam_console.identity.passwords import hash_password

    org, app = f"sm-{uuid.uuid4().hex[:6]}", f"sm-app-{uuid.uuid4().hex[:6]}"
    record = directory.ldap_record()
    with server_db(server) as db:
        db.add(m.Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                              default_application=app))
        db.add(m.Application(owner="admin", name=app, organization=org, enable_password=True,
                             client_id=f"{org}-client", client_secret=uuid.uuid4().hex, cert="cert-built-in",
                             redirect_uris=[CALLBACK], grant_types=["authorization_code"], token_format="JWT",
                             signin_methods=[{"name": "Password", "displayName": "Password", "rule": password_rule},
                                             {"name": "LDAP", "displayName": "LDAP", "rule": "None"}]))
        db.add(m.Ldap(owner=org, name=f"ldap-{uuid.uuid4().hex[:6]}", server_name=record["serverName"],
                      host=record["host"], port=record["port"], username=record["username"],
                      password=record["password"], base_dn=record["baseDn"], filter=record["filter"],
                      filter_fields=["uid"], password_type="SSHA"))
        db.add(m.User(owner=org, name="user0042", uuid=str(uuid.uuid4()), type="normal-user", ldap="user0042"))
        db.add(m.User(owner=org, name="alice", uuid=str(uuid.uuid4()), type="normal-user",
                      password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
    return org


def _submit(page, name: str, password: str) -> None:
    page.fill("#login-username", name)
    page.fill("#login-password", password)
    page.click("#login-submit")


def test_the_ldap_tab_and_the_non_ldap_rule(server, visit, page, directory):
    org = _organization(server, directory, "Non-LDAP")
    visit(f"/login/{org}")
    expect(page.get_by_role("radio", name="LDAP")).to_be_visible()
    assert serious(page) == []
    secret = ldap_server.password_of("user0042")
    _submit(page, "user0042", secret)  # the Password tab
    expect(page.locator("#login-error")).to_have_text(LDAP_ONLY)
    page.get_by_role("radio", name="LDAP").click()
    _submit(page, "user0042", secret)
    expect(page.locator("#user-menu")).to_be_visible(timeout=30_000)
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"]) == (org, "user0042")


def test_hide_password_offers_the_ldap_method_alone(server, visit, page, directory):
    org = _organization(server, directory, "Hide password")
    visit(f"/login/{org}")
    expect(page.locator("#login-username")).to_be_visible()
    expect(page.locator("#login-methods")).to_have_count(0)  # one method: LDAP
    _submit(page, "alice", PASSWORD)  # her own password is no LDAP password
    expect(page.locator("#login-error")).to_have_text("password or code is incorrect, you have 4 remaining chances")
    _submit(page, "user0042", ldap_server.password_of("user0042"))
    expect(page.locator("#user-menu")).to_be_visible(timeout=30_000)


def test_the_authorize_page_follows_the_methods(server, visit, page, context, directory):
    def arrived(route) -> None:
        route.fulfill(status=200, content_type="text/html", body="<p id='callback'>the client</p>")

    context.route(re.compile(r"^http://127\.0\.0\.1:9/"), arrived)
    org = _organization(server, directory, "Hide password")
    state = secrets.token_urlsafe(8)
    visit("/login/oauth/authorize?" + urlencode({"client_id": f"{org}-client", "response_type": "code",
                                                 "redirect_uri": CALLBACK, "scope": "openid", "state": state}))
    expect(page.locator("#authorize-username")).to_be_visible()
    expect(page.locator("#authorize-methods")).to_have_count(0)  # LDAP alone
    page.fill("#authorize-username", "user0042")
    page.fill("#authorize-password", ldap_server.password_of("user0042"))
    page.click("#authorize-submit")
    expect(page.locator("#callback")).to_be_visible(timeout=15_000)
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == [state] and query["code"][0]
