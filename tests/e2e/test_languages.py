"""Every offered language, shown (docs/extending.md, "Languages"): the sign-in page's menu offers
all eleven in their own names and switches the page to each, <html lang> included; before a choice
the browser's Accept-Language decides; the console shows each language, and the account's (the
menu keeps the choice on the account), else its organization's."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.conftest import Account, console_context
from tests.e2e.steps import server_db

NAMES = ["English", "Español", "Français", "Deutsch", "简体中文", "Bahasa Indonesia", "日本語", "한국어", "Русский",
         "Tiếng Việt", "Português"]
# the sign-in button, the console's Home menu group and the user menu's logout, in each language
# (German last: the sign-in test goes on in the language it chose last)
SIGN_IN = {"es": "Iniciar sesión", "fr": "Se connecter", "zh": "登录", "id": "Masuk", "ja": "サインイン",
           "ko": "로그인", "ru": "Войти", "vi": "Đăng nhập", "pt": "Entrar", "de": "Anmelden"}
HOME = {"es": "Inicio", "fr": "Accueil", "zh": "首页", "id": "Beranda", "ja": "ホーム", "ko": "홈", "ru": "Главная",
        "vi": "Trang chủ", "pt": "Início", "de": "Startseite", "en": "Home"}
LOGOUT = {"es": "Cerrar sesión", "fr": "Déconnexion", "de": "Abmelden"}
PASSWORD = "Lang-passw0rd"


def _choose(page, code: str) -> None:
    # a menu still closing (Escape) takes the trigger's click as its own: wait until it has gone
    expect(page.get_by_role("menuitem")).to_have_count(0)
    page.click("#language-menu")
    expect(page.locator(f"#language-{code}")).to_be_visible()
    page.click(f"#language-{code}")
    expect(page.locator(f"#language-{code}")).to_have_count(0)  # the menu closed


def test_the_sign_in_page_offers_every_language_and_shows_the_chosen_one(visit, page):
    visit("/login")
    expect(page.locator("#login-submit")).to_have_text("Sign in")
    expect(page.locator("html")).to_have_attribute("lang", "en")
    page.click("#language-menu")
    expect(page.get_by_role("menuitem")).to_have_text(NAMES)
    expect(page.locator("#language-de")).to_have_attribute("lang", "de")  # each name marked as its language
    page.keyboard.press("Escape")

    for code, text in SIGN_IN.items():
        _choose(page, code)
        expect(page.locator("#login-submit")).to_have_text(text)
        expect(page.locator("html")).to_have_attribute("lang", code)
        expect(page.locator("html")).to_have_attribute("dir", "ltr")
    assert serious(page) == []

    # the choice stays with the browser; the API's messages follow it
    visit.reload()
    expect(page.locator("#login-submit")).to_have_text("Anmelden")
    page.fill("#login-username", "nobody-here")
    page.fill("#login-password", "wrong-password")
    page.click("#login-submit")
    # the API's refusal in German (The user: %s doesn't exist, or password or code is incorrect ...)
    expect(page.locator("#login-error")).to_have_text(re.compile("existiert nicht|Passwort oder Code ist falsch"))


@pytest.mark.parametrize(("locale", "code"), [("fr-FR", "fr"), ("es-ES", "es")])
def test_before_a_choice_the_browsers_language_decides(browser, server, locale, code):
    context = browser.new_context(base_url=server.base_url, locale=locale)  # its Accept-Language
    context.set_default_timeout(15_000)
    try:
        page = context.new_page()
        page.goto("/login")
        expect(page.locator("#login-submit")).to_have_text(SIGN_IN[code])
        expect(page.locator("html")).to_have_attribute("lang", code)
    finally:
        context.close()


def test_the_console_shows_every_offered_language(visit, page, api_login, server):
    """An administrator of an organization offering all eleven languages switches the console to
    each: its menu, <html lang> and the account's saved choice follow."""
    from iam_console.core import builtin as b
    from iam_console.core import lookup
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    name = f"lang-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            languages=list(b.LANGUAGES)))
        db.add(User(owner=name, name="polly", uuid=str(uuid.uuid4()), is_admin=True,
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
    api_login(Account(name, "polly", PASSWORD, "polly"))
    visit("/")
    home = page.locator("#menu-group-home")
    expect(home).to_have_text(HOME["en"])
    for code, text in HOME.items():
        _choose(page, code)
        expect(home).to_have_text(text)
        expect(page.locator("html")).to_have_attribute("lang", code)
    with server_db(server) as db:
        assert lookup.user(db, name, "polly").language == "en"


@pytest.fixture
def german_organization(server):
    """An organization whose first language is German, with a user who chose none."""
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    name = f"lang-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            languages=["de", "en", "fr"]))
        db.add(User(owner=name, name="greta", uuid=str(uuid.uuid4()), is_admin=True,
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id"))
    return name


def test_the_console_shows_the_organizations_language_then_the_accounts(visit, page, api_login, server,
                                                                         german_organization):
    from iam_console.core import lookup

    api_login(Account(german_organization, "greta", PASSWORD, "greta"))
    visit("/")
    home = page.locator("#menu-group-home")
    expect(home).to_have_text(HOME["de"])
    expect(page.locator("html")).to_have_attribute("lang", "de")
    assert serious(page) == []

    # the menu offers the organization's languages; the choice is the account's from now on
    page.click("#language-menu")
    expect(page.get_by_role("menuitem")).to_have_text(["English", "Français", "Deutsch"])
    expect(page.locator("#language-es")).to_have_count(0)  # not one of the organization's
    page.keyboard.press("Escape")
    _choose(page, "fr")
    expect(home).to_have_text(HOME["fr"])
    page.click("#user-menu")
    expect(page.locator("#logout")).to_have_text(LOGOUT["fr"])
    page.keyboard.press("Escape")
    with server_db(server) as db:
        assert lookup.user(db, german_organization, "greta").language == "fr"


def test_the_console_follows_the_accounts_language_on_another_browser(browser, server, german_organization):
    """The account's language comes before the organization's and the browser's: a new browser,
    asking for English, shows Spanish to an account whose language is Spanish."""
    from iam_console.core import lookup

    with server_db(server) as db:
        user = lookup.user(db, german_organization, "greta")
        user.language = "es"
        db.add(user)
    context = console_context(browser, server.base_url)
    try:
        page = context.new_page()
        response = page.request.post("/api/login", data={
            "application": "", "organization": german_organization, "username": "greta", "password": PASSWORD,
            "autoSignin": True, "type": "login", "signinMethod": "Password"})
        assert response.json()["status"] == "ok"
        page.goto("/")
        expect(page.locator("#menu-group-home")).to_have_text(HOME["es"])
        expect(page.locator("html")).to_have_attribute("lang", "es")
    finally:
        context.close()
