"""The organization page's own sections: account items
(and their effect on an ordinary user's /account), the MFA items' limits, the
theme, the navigation items (the global admin's alone), the LDAP servers table,
the password obfuscator and the dark logo; a typed master password kept no longer than its save."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from iam_console.core import builtin as b
from tests.e2e.state_probe import gone, held
from tests.e2e.steps import choose, pick, save


def _seed_org(server) -> str:
    """A fresh organization, so that what a test saves reaches no other test."""
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.models import Organization

    name = f"org-e2e-{uuid.uuid4().hex[:6]}"
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                                password_obfuscator_type="Plain", nav_items=["all"],
                                account_items=b.default_account_items(), mfa_items=b.default_mfa_items(),
                                theme_data={"isEnabled": False}))
            db.commit()
    finally:
        engine.dispose()
    return name


def _delete_ldap(server, owner: str, ldap_id: str) -> None:
    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import Ldap

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.delete(db.exec(select(Ldap).where(Ldap.owner == owner, Ldap.name == ldap_id)).one())
            db.commit()
    finally:
        engine.dispose()


def _stored(page, name: str) -> dict:
    answer = page.request.get(f"/api/get-organization?id=admin/{name}").json()
    assert answer["status"] == "ok", answer
    return answer["data"]


def _account_row(page, item: str):
    return page.locator("#account-items-table tbody tr").filter(
        has=page.locator(".account-items-name", has_text=re.compile(f"^{re.escape(item)}$")))


def test_account_items_decide_an_ordinary_users_locks(visit, page, api_login, accounts):
    api_login(accounts.alice)
    visit("/account")
    expect(page.locator("#field-location")).to_be_enabled()  # modify rule Self by default

    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/organizations/acme")
    location = _account_row(page, "Location")
    expect(location.locator(".account-items-modify-rule")).to_have_text("Self")
    choose(page, location.locator(".account-items-modify-rule"), "Admin")
    expect(location.locator(".account-items-modify-rule")).to_have_text("Admin")

    # an item only admins see, and Is admin, cannot be left to the user
    for item in ("Is forbidden", "Is admin"):
        _account_row(page, item).locator(".account-items-modify-rule").click()
        expect(page.get_by_role("option", name="Immutable", exact=True)).to_be_visible()
        expect(page.get_by_role("option", name="Self", exact=True)).to_have_count(0)
        page.keyboard.press("Escape")
    # turning an item's view rule to Admin moves its modify rule off Self
    bio = _account_row(page, "Bio")
    choose(page, bio.locator(".account-items-view-rule"), "Admin")
    expect(bio.locator(".account-items-modify-rule")).to_have_text("Admin")
    choose(page, bio.locator(".account-items-view-rule"), "Public")
    choose(page, bio.locator(".account-items-modify-rule"), "Self")  # as it was: other tests edit Bio

    # the regex applies to the listed items only; a bad one is refused by the service
    expect(_account_row(page, "Tag").locator(".account-items-regex input")).to_be_disabled()
    bio.locator(".account-items-regex input").fill("[a-")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile(r"Failed to save: The regex of the account item Bio is not valid"))) \
        .to_be_visible()
    bio.locator(".account-items-regex input").fill("")

    # a new row starts as the placeholder and is named from the free item names
    rows = page.locator("#account-items-table tbody tr")
    count = rows.count()
    _account_row(page, "Karma").get_by_role("button", name="Delete").click()
    expect(rows).to_have_count(count - 1)
    page.click("#account-items-add")
    expect(rows).to_have_count(count)
    last = rows.last
    expect(last.locator(".account-items-name")).to_have_text(b.ACCOUNT_ITEM_PLACEHOLDER)
    choose(page, last.locator(".account-items-name"), "Karma")
    expect(last.locator(".account-items-name")).to_have_text("Karma")
    save(page)

    page.context.clear_cookies()
    api_login(accounts.alice)
    visit("/account")
    expect(page.locator("#field-location")).to_be_disabled()  # now Admin
    expect(page.locator("#field-displayName")).to_be_enabled()

    # put it back
    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/organizations/acme")
    choose(page, _account_row(page, "Location").locator(".account-items-modify-rule"), "Self")
    save(page)
    page.context.clear_cookies()
    api_login(accounts.alice)
    visit("/account")
    expect(page.locator("#field-location")).to_be_enabled()


def test_the_mfa_items_limits(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    rows = page.locator("#mfa-items-table tbody tr")
    expect(rows).to_have_count(3)
    expect(page.locator("#mfa-items-add")).to_be_disabled()  # every method has its row

    rows.nth(2).get_by_role("button", name="Delete").click()  # App
    expect(rows).to_have_count(2)
    expect(page.locator("#mfa-items-add")).to_be_enabled()
    # a method cannot repeat: the Phone row offers Phone and the free App, not Email
    rows.nth(0).locator(".mfa-items-name").click()
    expect(page.get_by_role("option", name="App", exact=True)).to_be_visible()
    expect(page.get_by_role("option", name="Email", exact=True)).to_have_count(0)
    page.keyboard.press("Escape")
    page.click("#mfa-items-add")
    expect(rows).to_have_count(3)
    expect(rows.nth(2).locator(".mfa-items-name")).to_have_text("App")
    expect(page.locator("#mfa-items-add")).to_be_disabled()

    choose(page, rows.nth(0).locator(".mfa-items-rule"), "Required")
    choose(page, rows.nth(1).locator(".mfa-items-rule"), "Required")
    expect(page.get_by_text("Only 1 MFA methods can be required")).to_be_visible()
    expect(rows.nth(1).locator(".mfa-items-rule")).to_have_text("Optional")
    choose(page, rows.nth(1).locator(".mfa-items-rule"), "Prompt")
    save(page)
    assert _stored(page, name)["mfaItems"] == [
        {"name": "Phone", "rule": "Required"}, {"name": "Email", "rule": "Prompt"}, {"name": "App", "rule": "Optional"}]


def test_a_customized_theme_is_saved(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    expect(page.locator("#theme-type")).to_have_count(0)  # following the global theme
    page.locator("#theme-mode").get_by_role("radio", name="Customize").click()
    choose(page, page.locator(".theme-type"), "Comic")  # the type's preset: pink, radius 16
    expect(page.locator("#theme-color-ed4192")).to_have_attribute("data-selected", "true")
    expect(page.locator("#theme-radius")).to_have_value("16")
    page.click("#theme-color-00b96b")
    expect(page.locator("#theme-color-00b96b")).to_have_attribute("data-selected", "true")
    page.fill("#theme-radius", "25")  # clamped to 20
    expect(page.locator("#theme-radius")).to_have_value("20")
    slider = page.locator("#theme-radius-slider [role=slider]")
    expect(slider).to_have_attribute("aria-valuenow", "20")
    page.fill("#theme-radius", "9")
    expect(slider).to_have_attribute("aria-valuenow", "9")  # the state has it
    slider.press("ArrowRight")  # the slider sets it too
    expect(page.locator("#theme-radius")).to_have_value("10")
    page.click("#theme-compact")
    save(page)
    assert _stored(page, name)["themeData"] == {"isEnabled": True, "themeType": "comic", "colorPrimary": "#00B96B",
                                                "borderRadius": 10, "isCompact": True}

    visit(f"/organizations/{name}")  # read back into the form
    expect(page.locator(".theme-type")).to_have_text("Comic")
    expect(page.locator("#theme-radius")).to_have_value("10")
    page.locator("#theme-mode").get_by_role("radio", name="Follow global theme").click()
    expect(page.locator(".theme-type")).to_have_count(0)
    save(page)
    assert _stored(page, name)["themeData"]["isEnabled"] is False


def test_navigation_items_are_the_global_admins(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    expect(page.locator("#nav-all")).to_be_checked()
    page.click("#nav-group-auth")  # Authorization and every item in it
    expect(page.locator("#nav-item-roles")).not_to_be_checked()
    expect(page.locator("#nav-all")).not_to_be_checked()
    page.click("#nav-item-users")
    expect(page.locator("#nav-group-orgs")).not_to_be_checked()
    save(page)
    stored = _stored(page, name)["navItems"]
    assert "all" not in stored and "/roles" not in stored and "/users" not in stored and "/organizations" in stored
    page.click("#nav-all")
    save(page)
    assert _stored(page, name)["navItems"] == ["all"]

    page.context.clear_cookies()
    api_login(accounts.boss)  # an organization admin sees their items, read-only
    visit("/organizations/acme")
    expect(page.locator("#nav-items-read-only")).to_be_visible()
    expect(page.locator("#nav-all")).to_be_disabled()
    expect(page.locator("#nav-item-users")).to_be_disabled()
    expect(page.locator("#nav-item-users")).to_be_checked()


def test_the_ldap_servers_table(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    rows = page.locator("#ldap-table tbody tr")
    expect(rows).to_have_count(0)
    page.click("#ldap-add")
    expect(page.get_by_text("Successfully added")).to_be_visible()
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Example LDAP Server")
    expect(rows.first).to_contain_text("389")
    # Edit opens the server's own page (tests/e2e/test_ldap.py)
    edit = rows.first.get_by_role("link").filter(has=page.get_by_role("button", name="Edit"))
    expect(edit).to_have_attribute("href", re.compile(rf"^/ldap/{name}/ldap_"))
    page.click("#ldap-add")
    expect(rows).to_have_count(2)
    ldaps = page.request.get(f"/api/get-ldaps?owner={name}").json()["data"]
    assert len(ldaps) == 2 and all(ldap["owner"] == name and ldap["port"] == 389 for ldap in ldaps)

    rows.first.get_by_role("button", name="Delete").click()
    expect(page.locator("#ldap-delete-question")).to_contain_text("Sure to delete: ldap_")
    page.click("#ldap-delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(rows).to_have_count(1)

    # a server deleted elsewhere in the meantime: the delete fails with Casdoor's message
    _delete_ldap(server, name, page.request.get(f"/api/get-ldaps?owner={name}").json()["data"][0]["id"])
    rows.first.get_by_role("button", name="Delete").click()
    page.click("#ldap-delete-confirm")
    expect(page.get_by_text("Delete LDAP server failed")).to_be_visible()
    expect(rows).to_have_count(0)


def test_the_obfuscator_key_and_the_dark_logo(visit, page, api_login, accounts, server):
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    key = page.locator("#field-passwordObfuscatorKey")
    expect(key).to_have_count(0)  # Plain: no key
    obfuscator = page.locator("#field-passwordObfuscatorType")
    choose(page, obfuscator, "AES")
    expect(key).to_have_value(re.compile(r"^[0-9a-f]{32}$"))
    aes = key.input_value()
    choose(page, obfuscator, "DES")
    expect(key).to_have_value(re.compile(r"^[0-9a-f]{16}$"))
    choose(page, obfuscator, "AES")
    expect(key).to_have_value(re.compile(r"^[0-9a-f]{32}$"))
    assert key.input_value() != aes  # a fresh key each time

    key.fill("abc")
    page.click("#edit-save")
    expect(page.get_by_text("Failed to save: The AES obfuscator key must be 32, 48 or 64 hexadecimal characters")) \
        .to_be_visible()
    assert _stored(page, name)["passwordObfuscatorType"] == "Plain"  # nothing saved
    key.fill("0123456789abcdef" * 3)
    save(page)
    stored = _stored(page, name)
    assert (stored["passwordObfuscatorType"], stored["passwordObfuscatorKey"]) == ("AES", "0123456789abcdef" * 3)
    choose(page, obfuscator, "Plain")
    expect(key).to_have_count(0)
    save(page)
    assert _stored(page, name)["passwordObfuscatorKey"] == ""

    # the dark logo: shown when enabled; disabling it clears the URL
    expect(page.locator("#field-logoDark")).to_have_count(0)
    page.click("#field-enableDarkLogo")
    page.fill("#field-logoDark", "https://cdn.example.com/dark.png")
    save(page)
    assert _stored(page, name)["logoDark"] == "https://cdn.example.com/dark.png"
    page.click("#field-enableDarkLogo")
    expect(page.locator("#field-logoDark")).to_have_count(0)
    save(page)
    assert _stored(page, name)["logoDark"] == ""


def _master_password(server, name: str) -> str:
    from sqlmodel import Session, select

    from iam_console.db import make_engine
    from iam_console.models import Organization

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            return db.exec(select(Organization).where(Organization.name == name)).one().master_password
    finally:
        engine.dispose()


def test_a_typed_master_password_is_kept_no_longer_than_its_save(visit, page, api_login, accounts, server):
    """A record's secret typed into the form is in the page's state until the save, then the mask
    is (the stored secret is never read back); one typed and left unsaved goes with the form."""
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    expect(page.locator("#field-masterPassword")).to_have_value("")
    secret = f"Master-{uuid.uuid4().hex[:8]}"
    page.fill("#field-masterPassword", secret)
    assert held(server, secret)  # typed, not saved: the form holds it (so the probe can see one)
    save(page)
    expect(page.locator("#field-masterPassword")).to_have_value("***")
    assert _master_password(server, name) == secret
    assert gone(server, secret, seconds=0)

    # saving again sends the mask back: the stored secret stays
    page.fill("#field-displayName", "Renamed display")
    save(page)
    assert _master_password(server, name) == secret

    # typed, then a refused save: the mask is back (the secret is typed again to save it)
    refused = f"Refused-{uuid.uuid4().hex[:8]}"
    page.fill("#field-masterPassword", refused)
    page.fill("#field-name", "acme")  # another organization's name
    page.click("#edit-save")
    expect(page.get_by_text(re.compile("Failed to save"))).to_be_visible()
    expect(page.locator("#field-masterPassword")).to_have_value("***")
    assert gone(server, refused, seconds=0)
    assert _master_password(server, name) == secret

    # typed, then the page is left without saving
    left = f"Left-{uuid.uuid4().hex[:8]}"
    page.fill("#field-masterPassword", left)
    assert held(server, left)
    page.once("dialog", lambda dialog: dialog.accept())  # the unsaved edits' question
    page.click("#menu-group-orgs")
    page.click("#menu-item-users")
    page.wait_for_url(re.compile(r"/users$"))
    assert gone(server, left)
    assert _master_password(server, name) == secret


def test_choices_of_passwords_countries_and_languages_and_the_logo(visit, page, api_login, accounts, server):
    """Password complexity options, country codes and languages are chosen from the kind's values
    (searchable, several at a time, each removable); the logo URL shows its picture."""
    name = _seed_org(server)
    api_login(accounts.admin)
    visit(f"/organizations/{name}")
    expect(page.locator("#field-displayName")).to_have_value(name, timeout=15_000)  # a long form: read
    pick(page, "passwordOptions", "AtLeast8")
    pick(page, "passwordOptions", "Aa123")
    pick(page, "countryCodes", "DE", typed="de")
    pick(page, "countryCodes", "GB", typed="g")
    pick(page, "languages", "fr", typed="f")
    pick(page, "languages", "uk", typed="uk")
    # no free text: a value not among the choices is not offered
    page.click("#field-languages")
    page.locator("input.pick-search, .pick-search input").first.fill("xx")
    expect(page.locator(".pick-option")).to_have_count(0)
    page.keyboard.press("Escape")
    page.get_by_role("button", name="Remove GB").click()
    logo = "/favicon.ico"
    page.fill("#field-logo", logo)
    expect(page.locator("#logo-preview")).to_have_attribute("src", logo)
    save(page)
    stored = _stored(page, name)
    assert stored["passwordOptions"] == ["AtLeast8", "Aa123"]
    assert stored["countryCodes"] == ["DE"] and stored["languages"] == ["fr", "uk"]
    assert stored["logo"] == logo
