"""The sign-in page follows the organization's default application: its logo, the items it shows
(back button, signup link; no forgot link, no languages), the agreement to check first, custom
text and the side panel with their HTML cleaned, the form's position and the application's CSS,
and the organization chosen first (orgChoiceMode Select or Input)."""

from __future__ import annotations

import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db

PASSWORD = "Look-passw0rd"
LOGO = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7"


@pytest.fixture
def organization(server):
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Application, Organization, User

    suffix = uuid.uuid4().hex[:6]
    name, application = f"look-{suffix}", f"app-look-{suffix}"
    items = [{"name": "Logo", "visible": True}, {"name": "Back button", "visible": True},
             {"name": "Languages", "visible": False}, {"name": "Forgot password?", "visible": False},
             {"name": "Signup link", "visible": True}, {"name": "Agreement", "visible": True, "rule": "Signin"},
             {"name": "Text 1", "visible": True,
              "label": '<b>Staff only</b><img src="x" alt="" onerror="window.__pwned=1">'}]
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            default_application=application))
        db.add(Application(owner="admin", name=application, organization=name, enable_password=True,
                           enable_sign_up=True, client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                           logo=LOGO, signin_items=items, form_offset=4, terms_of_use="https://example.com/terms",
                           form_side_html='<h2>Welcome</h2><script>window.__pwned=2</script>',
                           form_css=".login-content { outline: 3px solid rgb(255, 0, 0); }"))
        db.add(User(owner=name, name="lou", uuid=str(uuid.uuid4()), password=hash_password(PASSWORD, "argon2id"),
                    password_type="argon2id"))
    return name


def test_the_page_follows_the_application(visit, page, organization):
    page.set_viewport_size({"width": 1280, "height": 800})
    visit(f"/login/{organization}")
    expect(page.locator("#login-logo")).to_have_attribute("src", LOGO)
    expect(page.locator("#login-back")).to_be_visible()
    expect(page.locator("#login-signup")).to_be_visible()
    expect(page.locator("#login-forget")).to_have_count(0)
    expect(page.locator("#language-menu")).to_have_count(0)
    # cleaned HTML: the markup stays, the scripts do not run
    expect(page.locator(".login-custom b")).to_have_text("Staff only")
    expect(page.locator("#login-side h2")).to_have_text("Welcome")
    assert page.evaluate("window.__pwned") is None
    assert page.locator(".login-custom img").get_attribute("onerror") is None
    # position 4: the side panel beside the form; the application's CSS applies
    side, form = page.locator("#login-side").bounding_box(), page.locator("#login-submit").bounding_box()
    assert side["x"] + side["width"] <= form["x"]
    assert page.eval_on_selector("#login-content", "e => getComputedStyle(e).outlineColor") == "rgb(255, 0, 0)"
    assert serious(page) == []

    # the agreement first
    page.fill("#login-username", "lou")
    page.fill("#login-password", PASSWORD)
    page.click("#login-submit")
    expect(page.locator("#login-error")).to_have_text("Please accept the agreement!")
    page.click("#login-agreement")
    page.click("#login-submit")
    page.wait_for_url("**/apps")


def test_narrow_screens_show_the_form_alone(visit, page, organization):
    page.set_viewport_size({"width": 400, "height": 800})
    visit(f"/login/{organization}")
    expect(page.locator("#login-submit")).to_be_visible()
    expect(page.locator("#login-side")).to_be_hidden()


@pytest.mark.parametrize("mode", ["Select", "Input"])
def test_the_organization_is_chosen_first(server, visit, page, mode):
    from iam_console.models import Application, Organization

    suffix = uuid.uuid4().hex[:6]
    name, application = f"portal-{suffix}", f"app-portal-{suffix}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            default_application=application))
        db.add(Application(owner="admin", name=application, organization=name, enable_password=True,
                           client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex, org_choice_mode=mode))
    visit(f"/login/{name}")
    expect(page.locator("#login-org-choice")).to_be_visible()
    expect(page.locator("#login-username")).to_have_count(0)
    assert serious(page) == []
    if mode == "Select":
        page.click("#login-org-select")
        page.get_by_role("option", name="Acme", exact=True).click()
    else:
        page.fill("#login-org-input", "acme")
        page.click("#login-org-confirm")
    page.wait_for_url("**/login/acme?orgChoiceMode=None")
    expect(page.locator("#login-username")).to_be_visible()
    assert serious(page) == []
