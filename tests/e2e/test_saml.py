"""SAML 2.0 single sign-on through the real server and its pages: an application's SAML provider
button (a provider button like the OAuth ones, on the sign-in and authorize pages) sends the
browser to this server's own IdP (another application), whose single sign-on asks for the
password on the login page, posts the signed Response back to /api/acs, and the console is signed
in (or the authorization request is answered)."""

from __future__ import annotations

import re
import secrets
import uuid

import pytest
from playwright.sync_api import expect

PASSWORD = "E2e-saml-pass-1"


@pytest.fixture
def saml_world(engine, server):
    """An organization with dora; its IdP application; a SAML provider trusting that IdP (from its
    metadata); and the organization's default application listing the provider for sign-in."""
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Cert, Organization, Provider, User

    suffix = uuid.uuid4().hex[:8]
    org, idp, sp, provider = f"org-{suffix}", f"idp-{suffix}", f"sp-{suffix}", f"saml-{suffix}"
    acs = f"{server.base_url}/api/acs"
    with session_scope(engine) as db:
        certificate = db.exec(select(Cert.certificate).where(Cert.owner == "admin",
                                                             Cert.name == "cert-built-in")).one()
        db.add(Organization(owner="admin", name=org, display_name="SAML Org", password_type="argon2id",
                            languages=["en", "zh"], default_application=sp))
        db.add(User(owner=org, name="dora", uuid=str(uuid.uuid4()), type="normal-user", display_name="Dora SAML",
                    email="dora@example.com", password=hash_password(PASSWORD, "argon2id"),
                    password_type="argon2id"))
        db.add(Application(owner="admin", name=idp, organization=org, cert="cert-built-in", enable_password=True,
                           redirect_uris=[acs], client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                           enable_saml_c14n10=True))
        db.add(Provider(owner="admin", name=provider, display_name=f"Company SSO {suffix}", category="SAML",
                        type="Custom", endpoint=f"{server.base_url}/api/saml/redirect/admin/{idp}",
                        issuer_url=server.base_url, id_p=certificate))
        db.add(Application(owner="admin", name=sp, organization=org, cert="cert-built-in", enable_password=True,
                           client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                           providers=[{"name": provider, "canSignIn": True, "canSignUp": False}]))
    return org, f"Company SSO {suffix}", provider, sp


def sign_in_at_the_idp(page, org: str) -> None:
    """The IdP (this server's other application) wants a signed-in user: dora signs in on its
    login page, which goes back to the single sign-on and on to /api/acs."""
    page.wait_for_url(re.compile(rf"/login/{org}\?from=/api/saml/redirect/"))
    page.locator("#login-username").fill("dora")
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login-submit").click()


def test_saml_round_trip_through_the_login_page(server, visit, page, saml_world):
    from tests.e2e.axe import serious

    org, label, provider, _ = saml_world
    visit(f"/login/{org}")
    button = page.locator(f"#login-provider-{provider}")
    expect(button).to_have_text(f"Sign in with {label}")
    assert serious(page) == []
    button.click()
    sign_in_at_the_idp(page, org)
    page.wait_for_url(f"{server.base_url}/", timeout=30_000)
    account = page.request.get("/api/get-account").json()
    assert account["status"] == "ok" and account["data"]["name"] == "dora" and account["data"]["owner"] == org


def test_saml_sign_in_still_owes_the_second_factor(server, visit, page, engine):
    """The IdP's account (organization A) has no second factor; the account it names in
    organization B has TOTP: after /api/acs the login page asks for B's code."""
    import pyotp
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Cert, Organization, Provider, User
    from tests.e2e.axe import serious

    suffix = uuid.uuid4().hex[:8]
    org_a, org_b, idp, sp, provider = (f"ida-{suffix}", f"spb-{suffix}", f"idp-{suffix}", f"sp-{suffix}",
                                       f"saml-{suffix}")
    secret = pyotp.random_base32()
    with session_scope(engine) as db:
        certificate = db.exec(select(Cert.certificate).where(Cert.owner == "admin",
                                                             Cert.name == "cert-built-in")).one()
        for org, default in ((org_a, idp), (org_b, sp)):
            db.add(Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                                languages=["en", "zh"], default_application=default))
        db.add(User(owner=org_a, name="erin", uuid=str(uuid.uuid4()), type="normal-user", display_name="Erin A",
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
        db.add(User(owner=org_b, name="erin", uuid=str(uuid.uuid4()), type="normal-user", display_name="Erin B",
                    password=hash_password(secrets.token_hex(16), "argon2id"), password_type="argon2id",
                    totp_secret=secret, preferred_mfa_type="app"))
        db.add(Application(owner="admin", name=idp, organization=org_a, cert="cert-built-in", enable_password=True,
                           redirect_uris=[f"{server.base_url}/api/acs"], client_id=secrets.token_hex(10),
                           client_secret=secrets.token_hex(20)))
        db.add(Provider(owner="admin", name=provider, display_name=f"Partner SSO {suffix}", category="SAML",
                        type="Custom", endpoint=f"{server.base_url}/api/saml/redirect/admin/{idp}",
                        issuer_url=server.base_url, id_p=certificate))
        db.add(Application(owner="admin", name=sp, organization=org_b, cert="cert-built-in", enable_password=True,
                           client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                           providers=[{"name": provider, "canSignIn": True}]))
    visit(f"/login/{org_b}")
    page.locator(f"#login-provider-{provider}").click()
    page.wait_for_url(re.compile(rf"/login/{org_a}\?from=/api/saml/redirect/"))
    page.locator("#login-username").fill("erin")
    page.locator("#login-password").fill(PASSWORD)
    page.locator("#login-submit").click()
    page.wait_for_url(re.compile(rf"/login/{org_b}\?from=%2F&nextMfa=1"), timeout=30_000)
    expect(page.locator("#login-passcode")).to_be_visible()
    assert serious(page) == []
    page.fill("#login-passcode", pyotp.TOTP(secret).now())
    page.click("#login-mfa-submit")
    page.wait_for_url(f"{server.base_url}/", timeout=30_000)
    account = page.request.get("/api/get-account").json()
    assert (account["data"]["owner"], account["data"]["displayName"]) == (org_b, "Erin B")


@pytest.fixture
def client_callback():
    """The OAuth client's redirect URI: a local server answering "client" (the browser reaches it
    by the ACS's redirect, which Playwright's routes do not see)."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Answer(BaseHTTPRequestHandler):
        def do_GET(self):  # the standard library calls it by this name
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.end_headers()
            self.wfile.write(b"client")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/cb"
    finally:
        server.shutdown()
        server.server_close()


def test_saml_button_on_the_authorize_page_answers_the_client(server, visit, page, engine, saml_world,
                                                              client_callback):
    """The authorization request travels through the IdP and /api/acs, then gets its code."""
    from urllib.parse import parse_qs, urlsplit

    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Application
    from tests.e2e.axe import serious

    org, label, provider, sp = saml_world
    callback = client_callback
    with session_scope(engine) as db:
        app = db.exec(select(Application).where(Application.name == sp)).one()
        app.redirect_uris = [callback]
        client_id = app.client_id
        db.add(app)
    visit(f"/login/oauth/authorize?client_id={client_id}&response_type=code&redirect_uri={callback}"
          "&scope=openid&state=client-state")
    button = page.locator(f"#authorize-provider-{provider}")
    expect(button).to_have_text(f"Sign in with {label}")
    assert serious(page) == []
    button.click()
    sign_in_at_the_idp(page, org)
    page.wait_for_url(lambda url: url.startswith(callback), timeout=30_000)
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == ["client-state"] and query["code"][0]


def test_saml_refused_response_shows_why(server, page):
    from tests.e2e.axe import serious

    page.goto("/api/acs?probe=1")  # any page of the server's origin, for the form's post
    page.set_content('<form method="post" action="/api/acs"><input name="SAMLResponse" '
                     'value="PHNhbWxwOlJlc3BvbnNlLz4="><button id="go">Go</button></form>')
    page.click("#go")
    expect(page.locator("#saml-error")).to_contain_text("SAML")
    assert serious(page) == []
