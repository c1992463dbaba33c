"""Google One Tap in the browser: the sign-in page of an application whose Google provider row has
the One Tap rule loads Google Identity Services' script (here a fake served by the session's
Google stand-in, IAM_GOOGLE_GSI_SCRIPT), whose prompt hands the page a credential signed by the
stand-in; the server verifies it against the stand-in's keys (IAM_GOOGLE_JWKS) and signs in. A
credential signed by another key is refused on the page."""

from __future__ import annotations

import json
import secrets
import uuid
from urllib.parse import parse_qs, urlencode, urlsplit

from playwright.sync_api import expect

from tests.e2e.test_federation import account_of, users_linked

CLIENT_REDIRECT = "https://client.example/callback"


def make_one_tap_app(engine, **app_fields) -> tuple[str, str, str]:
    from iam_console.db import session_scope
    from iam_console.models import Application, Organization, Provider

    suffix = uuid.uuid4().hex[:8]
    organization, application, provider = f"tap-{suffix}", f"tap-app-{suffix}", f"google-{suffix}"
    client_id = secrets.token_hex(10)
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=organization, display_name="Tapped", password_type="argon2id",
                            languages=["en"], password_options=["AtLeast6"], default_application=application))
        db.add(Provider(owner="admin", name=provider, display_name="Google", category="OAuth", type="Google",
                        client_id=f"{suffix}.apps.googleusercontent.com", client_secret=secrets.token_hex(10)))
        db.add(Application(owner="admin", name=application, display_name="Tap app", organization=organization,
                           cert="cert-built-in", client_id=client_id, client_secret=secrets.token_hex(20),
                           redirect_uris=[CLIENT_REDIRECT],
                           enable_password=True, enable_sign_up=True, grant_types=["authorization_code"],
                           providers=[{"name": provider, "canSignUp": True, "canSignIn": True, "canUnlink": True,
                                       "prompted": False, "signupGroup": "", "rule": "OneTap",
                                       "countryCodes": []}], **app_fields))
    return organization, provider, client_id


def test_one_tap_signs_up_and_in_on_the_sign_in_page(visit, page, context, engine, google_stub):
    organization, _provider, _client_id = make_one_tap_app(engine)
    context.add_init_script(f"window.iamFakeGoogleUser = {json.dumps({'sub': 'tap-1', 'email': 'tap@example.com'})};")
    page.goto(f"/login/{organization}")
    page.wait_for_url(lambda url: urlsplit(url).path == "/", timeout=30_000)
    account = account_of(page)
    assert account["email"] == "tap@example.com" and account["google"] == "tap-1", account
    assert any(c.path == "/gsi/client" for c in google_stub.calls)  # the browser loaded the script
    [(_name, links)] = users_linked(engine, organization)
    assert links == {"google": "tap-1"}


def test_a_forged_credential_is_refused_on_the_page(visit, page, context, engine):
    organization, _provider, _client_id = make_one_tap_app(engine)
    context.add_init_script("window.iamFakeGoogleUser = {sub: 'tap-2', email: 'forger@example.com', forged: '1'};")
    visit(f"/login/{organization}")
    expect(page.locator("#login-error")).to_contain_text("the ID token has an invalid signature")
    assert users_linked(engine, organization) == []
    assert page.request.get("/api/get-account").json()["status"] == "error"


def test_one_tap_answers_the_authorization_request(visit, page, context, engine):
    organization, _provider, client_id = make_one_tap_app(engine)
    context.add_init_script("window.iamFakeGoogleUser = {sub: 'tap-3', email: 'client@example.com'};")
    page.route(f"{CLIENT_REDIRECT}**", lambda route: route.fulfill(status=200, content_type="text/plain", body="back"))
    query = urlencode({"client_id": client_id, "response_type": "code", "redirect_uri": CLIENT_REDIRECT,
                       "scope": "openid", "state": "client-state"})
    page.goto(f"/login/oauth/authorize?{query}")
    page.wait_for_url(lambda url: url.startswith(CLIENT_REDIRECT), timeout=30_000)
    answered = parse_qs(urlsplit(page.url).query)
    assert answered["state"] == ["client-state"] and answered["code"][0]
    assert users_linked(engine, organization) == [("client@example.com", {"google": "tap-3"})]


def test_one_tap_sign_up_spends_the_page_invitation_code(visit, page, context, engine):
    from sqlmodel import select

    from iam_console.db import session_scope
    from iam_console.models import Invitation, User

    items = [{"name": name, "visible": True, "required": True, "prompted": False, "rule": ""}
             for name in ("Username", "Password", "Invitation code")]
    organization, _provider, _client_id = make_one_tap_app(engine, signup_items=items)
    with session_scope(engine) as db:
        db.add(Invitation(owner=organization, name="tap-code", code="TAP-E2E", quota=1, application="All",
                          state="Active"))
    context.add_init_script("window.iamFakeGoogleUser = {sub: 'tap-4', email: 'invited@example.com'};")
    visit(f"/login/{organization}")  # no code: the sign-up is refused, and says why
    expect(page.locator("#login-error")).to_contain_text("Invitation code cannot be blank")
    assert users_linked(engine, organization) == []
    page.goto(f"/login/{organization}?invitationCode=TAP-E2E")
    page.wait_for_url(lambda url: urlsplit(url).path == "/", timeout=30_000)
    with session_scope(engine) as db:
        user = db.exec(select(User).where(User.owner == organization)).one()
        invitation = db.exec(select(Invitation).where(Invitation.owner == organization)).one()
        assert (user.email, user.invitation, invitation.used_count) == ("invited@example.com", "tap-code", 1)
