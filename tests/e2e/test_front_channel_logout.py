"""OpenID Front-Channel Logout 1.0 from the console (docs/api.md, "Logout"): when the session signed in
to an application with a frontchannelLogoutUri, the console's own sign-out, and a form POST to
sso-logout, are browser navigations answered by the page that frames the application's URI (with
`iss` and `sid`), which then goes on to the organization's sign-in page. The framed URI is a local
sink; the navigation onward is answered 204 No Content, so that axe checks the front-channel page."""

from __future__ import annotations

import base64
import json
import re
import secrets
import uuid
from urllib.parse import urlencode, urlsplit

import pytest
from playwright.sync_api import expect
from sqlmodel import Session

from iam_console import models as m
from iam_console.api.callers import SESSION_COOKIE
from tests.e2e.axe import serious
from tests.e2e.conftest import Visitor
from tests.sinks import HttpSink

REDIRECT = "https://rp.example.com/callback"
NEXT = "**/login/acme"  # where the console goes after signing out an account of acme


@pytest.fixture
def sink():
    with HttpSink(body=b"signed out") as receiver:
        yield receiver


def _application(engine, sink) -> m.Application:
    """An application of acme whose front-channel logout URI is the sink."""
    app = m.Application(owner="admin", name=f"fc-{uuid.uuid4().hex[:8]}", organization="acme",
                        cert="cert-built-in", client_id=secrets.token_hex(10), client_secret=secrets.token_hex(20),
                        redirect_uris=[REDIRECT], grant_types=["authorization_code"], enable_password=True,
                        token_format="JWT", frontchannel_logout_uri=f"{sink.url}/fc?tenant=t1")
    with Session(engine) as db:
        db.add(app)
        db.commit()
        db.refresh(app)
    return app


def _signed_in_to(page, app: m.Application, password: str) -> str:
    """alice signs in to the application in the page's browser (the authorize page's call) and the
    application redeems the code: the ID token's sid."""
    answer = page.request.post("/api/login", params={
        "clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
        "state": "st", "nonce": "n1"}, data={"application": app.name, "organization": "acme", "username": "alice",
                                           "password": password, "type": "code"}).json()
    assert answer["status"] == "ok", answer
    tokens = page.request.post("/api/login/oauth/access_token", form={
        "grant_type": "authorization_code", "code": answer["data"], "client_id": app.client_id,
        "client_secret": app.client_secret, "redirect_uri": REDIRECT}).json()
    payload = tokens["id_token"].split(".")[1]
    return json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))["sid"]


def _hold_the_next_page(page) -> list:
    """The URLs the page goes on to. The navigation is answered 204 No Content, which keeps the
    browser on the front-channel page for axe; the test then follows the page's own link."""
    onward: list = []
    page.route(NEXT, lambda route: (onward.append(route.request.url), route.fulfill(status=204)))
    return onward


def call_url(sink, call) -> str:
    return f"{sink.url}{call.path}?{urlencode(call.query, doseq=True)}"


def _through_the_front_channel_page(page, sink, server, sid: str, onward: list) -> None:
    """The page frames the sink with iss and sid, and goes on by itself once the frame has loaded;
    axe finds nothing serious; its link leads to the organization's sign-in page."""
    expect(page.get_by_role("heading", name="You have signed out")).to_be_visible()
    assert urlsplit(page.url).path in ("/api/logout", "/api/sso-logout")
    call = sink.wait_at("/fc")
    assert call.method == "GET" and call.query == {"tenant": ["t1"], "iss": [server.base_url], "sid": [sid]}
    # this application's frame, once (sso-logout also frames the sessions of the user's other live tokens)
    sources = page.locator("iframe[title='Signing out']").evaluate_all("frames => frames.map(f => f.src)")
    assert [src for src in sources if src.startswith(f"{sink.url}/fc?")] == [call_url(sink, call)]
    for _ in range(150):  # Playwright's own wait lets the route handler run
        if onward:
            break
        page.wait_for_timeout(100)
    assert onward == [f"{server.base_url}/login/acme"]
    assert serious(page) == []
    page.unroute(NEXT)
    page.get_by_role("link", name="Continue").click()
    expect(page).to_have_url(re.compile(r"/login/acme$"))
    expect(page.locator("#login-username")).to_be_visible()
    assert not any(c["name"] == SESSION_COOKIE for c in page.context.cookies())


def test_the_consoles_sign_out_frames_the_applications_then_goes_to_sign_in(
        server, engine, sink, page, accounts):
    app = _application(engine, sink)
    sid = _signed_in_to(page, app, accounts.alice.password)
    Visitor(page)("/account")
    expect(page.locator("#field-name")).to_have_value("alice")
    onward = _hold_the_next_page(page)
    page.click("#user-menu")
    page.click("#logout")
    _through_the_front_channel_page(page, sink, server, sid, onward)


def test_sso_logout_by_a_form_post_frames_the_applications(server, engine, sink, page, accounts):
    app = _application(engine, sink)
    sid = _signed_in_to(page, app, accounts.alice.password)
    Visitor(page)("/account")
    onward = _hold_the_next_page(page)
    page.evaluate("""() => {
      const form = Object.assign(document.createElement("form"), {method: "POST", action: "/api/sso-logout"});
      document.body.appendChild(form);
      form.submit();
    }""")
    _through_the_front_channel_page(page, sink, server, sid, onward)


def test_without_front_channel_uris_the_sign_out_stays_a_call(server, page, api_login, accounts):
    api_login(accounts.alice)
    Visitor(page)("/account")
    page.click("#user-menu")
    page.click("#logout")
    expect(page.get_by_text("Logged out successfully")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/login(/acme)?$"))
