"""The language menu on the pages before the console (docs/extending.md, "Languages"): sign-up
and forgot password offer all eleven languages and switch the page; signing out leaves the
account's language behind (the browser's pick, else Accept-Language, from then on)."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from iam_console.core.builtin import BUILT_IN_APP
from tests.e2e.axe import serious
from tests.e2e.conftest import TRACK_SOCKET
from tests.e2e.steps import server_db
from tests.e2e.test_languages import NAMES, _choose

PASSWORD = "Lang-passw0rd"
# each page's heading, in English and the two languages the test switches to
PAGES = {
    f"/signup/{BUILT_IN_APP}": {"en": "Sign Up", "es": "Registrarse", "ru": "Зарегистрироваться"},
    f"/forget/{BUILT_IN_APP}": {"en": "Retrieve password", "es": "Recuperar contraseña", "ru": "Восстановить пароль"},
}


@pytest.mark.parametrize("path", list(PAGES))
def test_the_page_offers_every_language_and_switches_to_the_chosen_one(visit, page, path):
    headings = PAGES[path]
    visit(path)
    expect(page.get_by_role("heading", name=headings["en"])).to_be_visible()
    page.click("#language-menu")
    expect(page.get_by_role("menuitem")).to_have_text(NAMES)
    page.keyboard.press("Escape")
    for code in ("es", "ru"):
        _choose(page, code)
        expect(page.get_by_role("heading", name=headings[code])).to_be_visible()
        expect(page.locator("html")).to_have_attribute("lang", code)
        assert serious(page) == []
    visit.reload()  # the choice stays with the browser
    expect(page.get_by_role("heading", name=headings["ru"])).to_be_visible()


@pytest.fixture
def russian_account(server):
    """A user whose account's Language is Russian, in an organization that offers it."""
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    name = f"ru-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            languages=["ru", "en", "fr"]))
        db.add(User(owner=name, name="ivan", uuid=str(uuid.uuid4()), is_admin=True, language="ru",
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
    return name


def test_signing_out_leaves_the_accounts_language_behind(browser, server, russian_account):
    # this browser asks for French (its Accept-Language)
    context = browser.new_context(base_url=server.base_url, viewport={"width": 1280, "height": 800}, locale="fr-FR")
    context.set_default_timeout(15_000)
    context.add_init_script(TRACK_SOCKET)
    try:
        page = context.new_page()
        response = page.request.post("/api/login", data={
            "application": "", "organization": russian_account, "username": "ivan", "password": PASSWORD,
            "autoSignin": True, "type": "login", "signinMethod": "Password"})
        assert response.json()["status"] == "ok"
        page.goto("/")
        expect(page.locator("html")).to_have_attribute("lang", "ru")  # the account's language
        page.click("#user-menu")
        page.click("#logout")
        expect(page).to_have_url(re.compile("/login"))
        expect(page.locator("html")).to_have_attribute("lang", "fr")  # Accept-Language's, not the account's
        expect(page.locator("#login-submit")).to_have_text("Se connecter")
        assert serious(page) == []
    finally:
        context.close()
