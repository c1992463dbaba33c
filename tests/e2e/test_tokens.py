"""The tokens list and edit page: Revoke from the list, the parse box (header, claims and the
signature against the application's cert: valid, invalid or expired; what is wrong with a text
that is no JWT), the organization only a global admin changes, and no page or API answer that
holds a usable token."""

from __future__ import annotations

import base64
import json
import re
import secrets
import time
import uuid
from dataclasses import dataclass

import jwt
import pytest
import requests
from playwright.sync_api import expect

PASSWORD = "E2e-token-pass-1"


@dataclass(frozen=True)
class Issued:
    organization: str
    user: str
    application: str
    access_token: str
    refresh_token: str
    id_token: str


@pytest.fixture
def issued(engine, server) -> Issued:
    """An organization, a user and an application, and tokens issued to it by the password grant."""
    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    suffix = uuid.uuid4().hex[:8]
    organization, user, application = f"tok-{suffix}", f"tina-{suffix}", f"tapp-{suffix}"
    client_id, client_secret = secrets.token_hex(10), secrets.token_hex(20)
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=organization, display_name="Token Org", password_type="argon2id"))
        db.add(User(owner=organization, name=user, uuid=str(uuid.uuid4()), type="normal-user",
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
        db.add(Application(owner="admin", name=application, organization=organization, cert="cert-built-in",
                           client_id=client_id, client_secret=client_secret, enable_password=True,
                           grant_types=["password", "refresh_token"], token_format="JWT", expire_in_hours=1,
                           refresh_expire_in_hours=2))
    answer = requests.post(server.url("/api/login/oauth/access_token"), timeout=10, data={
        "grant_type": "password", "client_id": client_id, "client_secret": client_secret, "username": user,
        "password": PASSWORD, "scope": "openid profile"}).json()
    assert "access_token" in answer, answer
    return Issued(organization, user, application, answer["access_token"], answer["refresh_token"],
                  answer.get("id_token", ""))


def _token_name(page, issued: Issued) -> str:
    answer = page.request.get("/api/get-tokens", params={"owner": "admin", "organization": issued.organization})
    rows = answer.json()["data"]
    assert len(rows) == 1, rows
    return rows[0]["name"]


def _works(server, token: str) -> bool:
    answer = requests.get(server.url("/api/userinfo"), headers={"Authorization": f"Bearer {token}"}, timeout=10)
    return answer.status_code == 200 and "sub" in answer.json()


def test_revoke_from_the_list(visit, page, api_login, accounts, issued, server):
    assert _works(server, issued.access_token)
    api_login(accounts.admin)
    visit("/tokens")
    page.click("#search-field")
    page.get_by_role("option", name="User", exact=True).click()
    page.fill("#search-value", issued.user)
    row = page.locator("#list-table tbody tr").filter(has_text=issued.user)
    expect(row).to_have_count(1)
    expect(row.get_by_role("link", name=issued.application)).to_have_attribute(
        "href", f"/applications/{issued.organization}/{issued.application}")
    row.get_by_role("button", name="Revoke").click()
    expect(page.get_by_text("Successfully revoked")).to_be_visible()
    expect(row.get_by_role("button", name="Revoke")).to_be_disabled()
    assert not _works(server, issued.access_token)


def _parse(page, text: str) -> None:
    page.fill("#token-parse-text", text)
    page.click("#token-parse")


def test_the_parse_box(visit, page, api_login, accounts, issued, engine):
    api_login(accounts.admin)
    name = _token_name(page, issued)
    visit(f"/tokens/{name}")
    expect(page.locator("#field-name")).to_have_value(name)

    _parse(page, issued.access_token)
    expect(page.locator("#token-verdict")).to_have_text("Signature valid")
    expect(page.locator("#token-parse-header")).to_contain_text('"alg": "RS256"')
    expect(page.locator("#token-parse-claims")).to_contain_text(f'"name": "{issued.user}"')

    # a claim changed after signing
    head, body, signature = issued.access_token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["name"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    _parse(page, f"{head}.{forged}.{signature}")
    expect(page.locator("#token-verdict")).to_have_text("Signature invalid")
    expect(page.locator("#token-parse-claims")).to_contain_text('"name": "mallory"')

    # signed with the application's key, but past its expiry
    from sqlmodel import Session, select

    from iam_console.models import Cert
    with Session(engine) as db:
        key = db.exec(select(Cert).where(Cert.owner == "admin", Cert.name == "cert-built-in")).one().private_key
    expired = jwt.encode({**claims, "name": issued.user, "exp": int(time.time()) - 60}, key, algorithm="RS256",
                         headers={"kid": jwt.get_unverified_header(issued.access_token).get("kid")})
    _parse(page, expired)
    expect(page.locator("#token-verdict")).to_have_text("Token expired")

    # no JWT at all: what is wrong in the reader's words, and no verdict
    _parse(page, "not a token")
    expect(page.locator("#token-parse-reason")).to_have_text(
        "This is not a JWT: a JWT has three parts separated by dots, this text has 1")
    expect(page.locator("#token-verdict")).to_have_count(0)
    expect(page.locator("#token-parse-header")).to_have_count(0)
    not_utf8 = base64.urlsafe_b64encode(b"\xff\xfe{").rstrip(b"=").decode()  # the codec's error before
    _parse(page, f"{not_utf8}.{body}.{signature}")
    expect(page.locator("#token-parse-reason")).to_have_text(
        "This is not a JWT: its first part, the header, is not base64url-encoded JSON")
    _parse(page, f"{head}.not-json.{signature}")
    expect(page.locator("#token-parse-reason")).to_have_text(
        "This is not a JWT: its second part, the claims, is not base64url-encoded JSON")


def test_only_a_global_admin_changes_a_tokens_organization(visit, page, api_login, accounts, engine):
    from iam_console.db import session_scope
    from iam_console.models import Token

    name = f"token_acme_{uuid.uuid4().hex[:6]}"
    with session_scope(engine) as db:
        db.add(Token(owner="admin", name=name, organization="acme", application="app-built-in", user="alice",
                     expires_in=7200, scope="read", token_type="Bearer"))
    api_login(accounts.boss)
    visit(f"/tokens/{name}")
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-organization")).to_be_disabled()
    expect(page.locator("#field-accessToken")).to_be_disabled()
    page.context.clear_cookies()
    api_login(accounts.admin)
    visit(f"/tokens/{name}")
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-organization")).to_be_enabled()


def _secrets_of(issued: Issued) -> list[str]:
    """Each token, and each one's signature alone (the part that makes it usable)."""
    tokens = [t for t in (issued.access_token, issued.refresh_token, issued.id_token) if t]
    return tokens + [t.rsplit(".", 1)[-1] for t in tokens]


def test_no_page_or_api_answer_holds_a_usable_token(visit, page, api_login, accounts, issued):
    api_login(accounts.admin)
    hidden = _secrets_of(issued)
    name = _token_name(page, issued)
    spec = page.request.get("/api/openapi.json").json()
    reads = sorted(path for path, methods in spec["paths"].items()
                   if "get" in methods and path.startswith("/api/get-"))
    assert "/api/get-tokens" in reads and "/api/get-token" in reads
    for path in reads:
        for params in ({"owner": "", "organization": issued.organization, "id": f"admin/{name}"},
                       {"owner": "admin", "id": f"{issued.organization}/{issued.user}"}):
            text = page.request.get(path, params=params).text()
            assert not any(secret in text for secret in hidden), path

    pages = [("/tokens", "#list-table tbody tr"), (f"/tokens/{name}", "#field-accessToken"),
             ("/sessions", "#list-table tbody tr"), ("/resources", "#list-table"),
             (f"/users/{issued.organization}/{issued.user}", "#field-name"), ("/users", "#list-table tbody tr")]
    for path, ready in pages:
        visit(path)
        expect(page.locator(ready).first).to_be_visible()
        if path == f"/tokens/{name}":
            expect(page.locator("#field-accessToken")).not_to_have_value("")  # the fingerprint is there
        content = page.content()
        assert not any(secret in content for secret in hidden), path


def test_cancel_a_new_token_and_a_missing_one(visit, page, api_login, accounts, engine):
    """Cancel deletes the token Add made; a token that does not exist is the 404 page; a token
    deleted while its page is open is not 'saved'."""
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Token

    api_login(accounts.admin)
    visit("/tokens")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/tokens/token_\w+\?mode=add"))
    name = page.url.split("/tokens/")[1].split("?")[0]
    expect(page.locator("#field-name")).to_have_value(name)
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/tokens$"))
    assert page.request.get(f"/api/get-token?id=admin/{name}").json()["data"] is None

    visit(f"/tokens/none-such-{uuid.uuid4().hex[:6]}")
    page.wait_for_url(re.compile(r"/404$"))

    gone = f"token_gone_{uuid.uuid4().hex[:6]}"
    with session_scope(engine) as db:
        db.add(Token(owner="admin", name=gone, organization="acme", application="app-built-in", user="alice",
                     expires_in=7200, scope="read", token_type="Bearer"))
    visit(f"/tokens/{gone}")
    expect(page.locator("#field-name")).to_have_value(gone)
    with session_scope(engine) as db:
        db.delete(db.exec(select(Token).where(Token.name == gone)).one())
    page.fill("#field-scope", "write")
    page.click("#edit-save")
    expect(page.locator("[data-sonner-toast]").filter(
        has_text=f"Failed to save: The token: admin/{gone} does not exist")).to_be_visible()
    expect(page.get_by_text("Successfully saved")).to_have_count(0)
