"""The authorize page and OpenID Connect's authentication request parameters, in the browser:
within a live session `max_age` shows no form and the ID token keeps the session's `auth_time`;
an expired `max_age` shows the form again; `ui_locales` chooses the page's language (docs/api.md,
"Standards"). The application's edit page chooses the client authentication method and the URL of its keys.
The tokens are fetched over HTTP with the client's secret, as its back end would."""

from __future__ import annotations

import re
import time
from urllib.parse import urlencode

import jwt
import requests
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import choose, save
from tests.e2e.test_oauth_flow import CALLBACK, SCOPE, Client, _returned, _sign_in, callbacks, client_app  # noqa: F401


def _url(server, app: Client, state: str, **extra: str) -> str:
    return server.url("/login/oauth/authorize?" + urlencode({
        "client_id": app.client_id, "response_type": "code", "redirect_uri": CALLBACK, "scope": SCOPE,
        "state": state, "nonce": f"n-{state}", **extra}))


def _auth_time(server, app: Client, code: str) -> int:
    answer = requests.post(server.url("/api/login/oauth/access_token"), timeout=10, auth=(app.client_id,
                                                                                         app.client_secret),
                           data={"grant_type": "authorization_code", "code": code, "redirect_uri": CALLBACK})
    assert answer.status_code == 200, answer.text
    claims = jwt.decode(answer.json()["id_token"], options={"verify_signature": False})
    return claims["auth_time"]


def test_max_age_within_a_session_keeps_auth_time_and_an_expired_one_asks_again(
        server, visit, page, callbacks, client_app):  # noqa: F811
    visit(_url(server, client_app, "first", max_age="600"))
    _sign_in(page, client_app)
    first = _auth_time(server, client_app, _returned(page, callbacks)["code"])

    time.sleep(1.1)  # a second later: the answer must still name the sign-in's time
    page.goto(_url(server, client_app, "second", max_age="600"))  # the session is younger: no form
    second = _returned(page, callbacks)
    assert second["state"] == "second" and _auth_time(server, client_app, second["code"]) == first
    assert len(callbacks) == 2

    visit(_url(server, client_app, "third", max_age="0"))  # older than 0 seconds: sign in again
    expect(page.locator("#authorize-username")).to_be_visible()
    assert len(callbacks) == 2


def test_ui_locales_chooses_the_sign_in_pages_language(server, visit, page, client_app):  # noqa: F811
    visit(_url(server, client_app, "zh", ui_locales="zh-CN en"))
    expect(page.get_by_text(f"登录以继续使用 {client_app.app_display_name}")).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "zh")
    assert serious(page) == []
    visit(_url(server, client_app, "en", ui_locales="en-GB"))
    expect(page.get_by_text(f"Sign in to continue to {client_app.app_display_name}")).to_be_visible()


def test_the_edit_page_chooses_the_client_authentication_method(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/applications")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/applications/admin/application_\w+\?mode=add"))
    name = page.url.split("/applications/admin/")[1].split("?")[0]
    choose(page, page.locator("#field-tokenEndpointAuthMethod"), "private_key_jwt")
    page.click("#edit-save")
    refused = page.locator("[data-sonner-toast]").filter(has_text="needs the application's public keys")
    expect(refused).to_be_visible()
    refused.wait_for(state="hidden")
    page.fill("#field-jwksUri", "https://client.example.com/jwks.json")
    assert serious(page) == []
    save(page)
    page.reload()
    expect(page.locator("#field-tokenEndpointAuthMethod")).to_have_text("private_key_jwt")
    expect(page.locator("#field-jwksUri")).to_have_value("https://client.example.com/jwks.json")
    record = page.request.get(f"/api/get-application?id=admin/{name}").json()["data"]
    assert record["tokenEndpointAuthMethod"] == "private_key_jwt" and record["jwks"] == {}
