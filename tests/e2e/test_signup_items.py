"""/signup/{application}'s Text items and custom items in the browser: a Text item's label is shown
as HTML, cleaned (no script, no event handler); a custom Input item's regex refuses a value that
does not match, told in place with nothing written, and its value lands in the account's properties."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db

PASSWORD = "Signup-passw0rd"
TEXT_HTML = ('<p>Read our <b>house rules</b> and <a href="https://example.com/rules">the terms</a>'
             '<script>window.pwned = 1</script><img src="x" alt="" onerror="window.pwned = 2"></p>')


def _items() -> list[dict]:
    rows = [("ID", False, False, "Random", {}), ("Username", True, True, "None", {}),
            ("Password", True, True, "None", {}), ("Text 1", True, False, "None", {"label": TEXT_HTML}),
            ("Employee ID", True, True, "None", {"type": "Input", "label": "Employee ID", "regex": r"E\d{4}"}),
            ("Signup button", True, False, "None", {})]
    return [{"name": name, "visible": visible, "required": required, "prompted": False, "rule": rule, **extra}
            for name, visible, required, rule, extra in rows]


def test_text_items_show_cleaned_html_and_custom_items_obey_their_regex(server, visit, page):
    from sqlmodel import select

    from iam_console.models import Application, Organization, User

    suffix = uuid.uuid4().hex[:6]
    organization, application = f"sui-{suffix}", f"app-sui-{suffix}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=organization, display_name=organization, password_type="argon2id",
                            default_application=application))
        db.add(Application(owner="admin", name=application, organization=organization, enable_password=True,
                           enable_sign_up=True, client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                           signup_items=_items()))
    visit(f"/signup/{application}")
    rules = page.locator(".signup-text p")
    expect(rules.locator("b")).to_have_text("house rules")
    expect(rules.locator("a")).to_have_attribute("href", "https://example.com/rules")
    expect(rules.locator("script")).to_have_count(0)
    assert rules.locator("img").get_attribute("onerror") is None
    assert page.evaluate("window.pwned") is None
    assert serious(page) == []

    page.fill("#signup-username", "eve")
    page.fill("#signup-password", PASSWORD)
    page.fill("#signup-employee-id", "X-12")
    page.click("#signup-submit")
    expect(page.locator("#signup-error")).to_contain_text("doesn't match the signup item regex")
    with server_db(server) as db:
        assert db.exec(select(User.name).where(User.owner == organization)).all() == []
    page.fill("#signup-employee-id", "E1234")
    page.click("#signup-submit")
    page.wait_for_url(re.compile(r"/apps/?$"))
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"], account["properties"]) == (organization, "eve",
                                                                           {"Employee ID": "E1234"})
