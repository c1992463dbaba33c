"""A pushed authorization request (RFC 9126) on the real authorize page: the browser carries only
client_id and request_uri, the page shows the pushed request's application and signs in, the
code goes to the pushed redirect URI; the same URL again shows the refusal and no form. A pushed
prompt=none is the page's too (docs/api.md "Standards")."""

from __future__ import annotations

from urllib.parse import urlencode

import requests
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.conftest import Visitor
from tests.e2e.test_oauth_flow import CALLBACK, SCOPE, _returned, _sign_in, callbacks, client_app  # noqa: F401

UNUSABLE = "The request_uri is invalid, expired or used"


def _push(server, app, **more) -> str:
    response = requests.post(server.url("/api/login/oauth/par"), timeout=10, auth=(app.client_id, app.client_secret),
                             data={"response_type": "code", "redirect_uri": CALLBACK, "scope": SCOPE,
                                   "state": "pushed-state", **more})
    assert response.status_code == 201, response.text
    return server.url("/login/oauth/authorize?" + urlencode({"client_id": app.client_id,
                                                             "request_uri": response.json()["request_uri"]}))


def test_a_pushed_request_signs_in_once(server, visit, page, callbacks, client_app):  # noqa: F811
    url = _push(server, client_app)
    visit(url)
    expect(page.get_by_text(f"Sign in to continue to {client_app.app_display_name}")).to_be_visible()
    assert serious(page) == []
    _sign_in(page, client_app)
    returned = _returned(page, callbacks)
    assert returned["state"] == "pushed-state" and returned["code"]

    # another tab, without the session (no single sign-on): the request_uri alone is judged
    page.context.clear_cookies()
    again = Visitor(page.context.new_page())(url)
    expect(again.locator("#authorize-error")).to_have_text(UNUSABLE)
    expect(again.locator("#authorize-username")).to_have_count(0)
    assert serious(again) == []


def test_a_pushed_prompt_none_answers_login_required(server, visit, page, callbacks, client_app):  # noqa: F811
    page.goto(_push(server, client_app, prompt="none", state="quiet"))
    assert _returned(page, callbacks) == {"error": "login_required", "state": "quiet"}
