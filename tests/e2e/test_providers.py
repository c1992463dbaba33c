"""Providers in the browser, as the global admin and as acme's admin: the list (owner admin
shown as 'admin (Shared)', the category filter, the type filter grouped by category), the edit
page's fields per category and type, what a category change sets (Email: port 465, SSL, title,
the 5-minute content, the admin's own address), the user mapping a custom OAuth provider needs,
an owner change emptying the cert, the SAML ACS URL, and the test tools against a real local SMTP
server and HTTP endpoints, and the Default captcha."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import choose, server_db
from tests.sinks import HttpSink, SmtpSink, code_in

SMTP_USER, SMTP_PASSWORD = "mailer@providers.test", "providers-smtp-pass"


def _provider(server, owner: str, **fields) -> str:
    from iam_console.models import Provider

    name = f"prov-{uuid.uuid4().hex[:8]}"
    with server_db(server) as db:
        db.add(Provider(owner=owner, name=name, display_name=name, **fields))
    return name


@pytest.fixture(autouse=True)
def _no_leftovers(server):
    """The providers this module made go afterwards: other tests count on the shared ones and on
    which Email and SMS providers an organization has."""
    yield
    from sqlmodel import select

    from iam_console.models import Provider

    with server_db(server) as db:
        for row in db.exec(select(Provider).where(Provider.name.startswith("prov-"))):
            db.delete(row)


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _search(page, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", text)


def _field(page, key: str):
    return page.locator(f"#field-{key}")


def _pick(page, key: str, option: str) -> None:
    """A picker: open it and choose the option of that text."""
    _field(page, key).click()
    page.locator(".pick-option").filter(has_text=re.compile(f"^{re.escape(option)}$")).click()


def _label(page, key: str):
    return page.locator(f"#field-{key}-label")


def _open_new(page, visit) -> str:
    visit("/providers")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/providers/[^/]+/provider_\w+\?mode=add"))
    expect(_field(page, "category")).to_have_text("OAuth")
    expect(_field(page, "type")).to_have_text("GitHub")
    return page.url.split("?")[0].rsplit("/", 1)[1]


def test_the_list_shows_shared_providers_and_filters_by_category_and_type(visit, page, api_login, accounts, server):
    shared = _provider(server, "admin", category="SMS", type="Twilio SMS", client_id="sid")
    api_login(accounts.admin)
    visit("/providers")
    _search(page, shared)
    expect(_row(page, shared)).to_contain_text("admin (Shared)")
    expect(_row(page, shared)).to_contain_text("Twilio SMS")
    expect(page.locator("#list-total")).to_have_text("Total 1")

    visit("/providers")
    choose(page, page.locator("#filter-category"), "Payment")
    rows = page.locator("#list-table tbody tr")  # other tests add payment providers: any page of them
    expect(rows.filter(has_not_text="Payment")).to_have_count(0)
    expect(rows.first).to_contain_text("Payment")
    expect(rows.filter(has_text="Captcha")).to_have_count(0)

    # the type filter lists each category's types under the category's heading
    page.click("#filter-type")
    web3 = page.get_by_role("group").filter(has=page.get_by_text("Web3", exact=True))
    expect(web3.get_by_role("option", name="MetaMask", exact=True)).to_be_visible()
    page.get_by_role("option", name="Twilio SMS", exact=True).click()
    expect(page.locator("#list-total")).to_have_text("Total 0")  # together with the category Payment: none
    choose(page, page.locator("#filter-category"), "All")
    expect(_row(page, shared)).to_have_count(1)
    expect(page.locator("#list-table tbody tr").filter(has_text="provider_captcha_default")).to_have_count(0)
    expect(page.locator("#page-jump")).to_be_visible()
    expect(page.locator("#page-size")).to_be_visible()


def test_category_email_sets_its_defaults_and_the_smtp_tools_work(visit, page, api_login, accounts):
    api_login(accounts.admin)
    _open_new(page, visit)
    expect(_label(page, "clientId")).to_have_text("Client ID")
    choose(page, _field(page, "category"), "Email")
    expect(_field(page, "type")).to_have_text("Default")
    expect(_field(page, "port")).to_have_value("465")
    expect(_field(page, "disableSsl")).to_have_attribute("aria-checked", "false")
    expect(_field(page, "title")).to_have_value("Verification code")
    expect(_field(page, "content")).to_have_value(re.compile("within 5 minutes"))
    expect(_field(page, "receiver")).to_have_value("admin@example.com")
    # the client fields as an Email provider names them
    expect(_label(page, "clientId")).to_have_text("Username")
    expect(_label(page, "clientSecret")).to_have_text("Password")
    expect(_label(page, "clientId2")).to_have_text("From address")
    assert serious(page) == [], "the Email provider page: critical or serious WCAG violations"

    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as smtp:
        _field(page, "host").fill("127.0.0.1")
        _field(page, "port").fill(str(smtp.port))
        _field(page, "disableSsl").click()
        _field(page, "clientId").fill(SMTP_USER)
        _field(page, "clientSecret").fill(SMTP_PASSWORD)
        _field(page, "clientId2").fill("noreply@providers.test")
        page.click("#provider-test-smtp")
        expect(page.get_by_text("SMTP connected successfully")).to_be_visible()
        assert smtp.mails == []

        _field(page, "receiver").fill("not-an-address")
        expect(page.locator("#provider-test-email")).to_be_disabled()
        _field(page, "receiver").fill("tester@providers.test")
        expect(page.locator("#provider-test-email")).to_be_enabled()
        page.click("#provider-test-email")
        expect(page.get_by_text("Successfully sent")).to_be_visible()
        mail = smtp.wait_for("tester@providers.test")
        assert code_in(mail.body) == "123456" and mail.message["Subject"] == "Verification code"

    # the server is gone: a clear error, and the page stays usable
    page.click("#provider-test-smtp")
    expect(page.get_by_text(re.compile("Failed to send the email"))).to_be_visible()
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/providers(\?.*)?$"))


def test_category_changes_reset_the_type_and_show_that_categorys_fields(visit, page, api_login, accounts, server):
    api_login(accounts.admin)
    _open_new(page, visit)
    for category, default in (("SMS", "Twilio SMS"), ("Storage", "AWS S3"), ("SAML", "Keycloak"),
                              ("Payment", "PayPal"), ("Captcha", "Default"), ("Web3", "MetaMask"),
                              ("Notification", "Telegram"), ("OAuth", "Google")):
        choose(page, _field(page, "category"), category)
        expect(_field(page, "type")).to_have_text(default)
    # the type list is the category's
    _field(page, "type").click()
    expect(page.get_by_role("option", name="Azure AD B2C", exact=True)).to_have_count(0)
    expect(page.get_by_role("option", name="AzureADB2C", exact=True)).to_be_visible()
    expect(page.get_by_role("option", name="Twilio SMS", exact=True)).to_have_count(0)
    page.keyboard.press("Escape")

    choose(page, _field(page, "category"), "SAML")
    assert serious(page) == [], "the SAML provider page: critical or serious WCAG violations"
    expect(page.locator("#provider-acs-url")).to_have_text(f"SP ACS URL: {server.base_url}/api/acs")
    expect(_label(page, "endpoint")).to_have_text("SAML 2.0 endpoint")
    expect(_field(page, "bucket")).to_have_count(0)
    choose(page, _field(page, "category"), "Storage")
    expect(_field(page, "bucket")).to_be_visible()
    expect(page.locator("#provider-acs-url")).to_have_count(0)

    # WeCom: sub types and methods; the app ID is an agent ID for an internal application
    choose(page, _field(page, "category"), "OAuth")
    choose(page, _field(page, "type"), "WeCom")
    expect(_field(page, "subType")).to_have_text("Internal")
    expect(_field(page, "method")).to_have_text("Normal")
    expect(_label(page, "appId")).to_have_text("Agent ID")

    # WeChat keeps its own switch and access token in the SSL and content fields
    choose(page, _field(page, "type"), "WeChat")
    expect(_label(page, "disableSsl")).to_have_text("Use WeChat Media Platform in PC")
    expect(_label(page, "content")).to_have_text("Access token")
    expect(_field(page, "clientId2")).to_be_visible()

    # a custom OAuth provider needs its user mapping's id, username and display name
    choose(page, _field(page, "type"), "Custom")
    expect(_field(page, "userMapping-id")).to_be_visible()
    page.click("#edit-save")
    refused = page.get_by_text(re.compile(r"Failed to save: .*This field is required"))
    expect(refused).to_be_visible()
    refused.wait_for(state="hidden")  # the toast covers the Save button
    _field(page, "userMapping-id").fill("sub")
    _field(page, "userMapping-username").fill("preferred_username")
    _field(page, "userMapping-displayName").fill("name")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()


def test_an_owner_change_empties_the_cert_and_offers_the_new_organizations(visit, page, api_login, accounts, server):
    from iam_console.models import Cert

    cert = f"acme-cert-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Cert(owner="acme", name=cert, display_name=cert, scope="JWT", type="x509",
                    crypto_algorithm="RS256", bit_size=2048))
    name = _provider(server, "built-in", category="Payment", type="Alipay", cert="cert-built-in")
    api_login(accounts.admin)
    visit(f"/providers/built-in/{name}")
    expect(_field(page, "cert")).to_have_text("cert-built-in")
    _pick(page, "owner", "acme")
    expect(_field(page, "cert")).to_have_text("—")
    _field(page, "cert").click()
    expect(page.locator(".pick-option").filter(has_text=cert)).to_be_visible()
    page.locator(".pick-option").filter(has_text=cert).click()
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/providers/acme/{name}$"))
    expect(_field(page, "cert")).to_have_text(cert)
    # the global admin may share a provider
    _pick(page, "owner", "admin (Shared)")
    page.click("#edit-save-bottom")  # the first save's toast may cover the top one
    page.wait_for_url(re.compile(f"/providers/admin/{name}$"))


def test_sms_notification_and_captcha_tools(visit, page, api_login, accounts, server):
    with HttpSink() as gateway:
        sms = _provider(server, "built-in", category="SMS", type="Custom HTTP SMS", endpoint="", method="POST")
        api_login(accounts.admin)
        visit(f"/providers/built-in/{sms}")
        expect(_label(page, "receiver")).to_have_text("Test phone number")
        _field(page, "receiver").fill("+15550009876")
        expect(page.locator("#provider-test-sms")).to_be_disabled()  # a Custom HTTP SMS needs its endpoint
        _field(page, "endpoint").fill(f"{gateway.url}/sms")
        expect(page.locator("#provider-test-sms")).to_be_enabled()
        page.click("#provider-test-sms")
        expect(page.get_by_text("Successfully sent")).to_be_visible()
        assert gateway.wait_for("+15550009876").fields["code"] == "123456"

        hook = _provider(server, "built-in", category="Notification", type="Custom HTTP", method="POST",
                         title="text", receiver=f"{gateway.url}/notify")
        visit(f"/providers/built-in/{hook}")
        expect(_label(page, "receiver")).to_have_text("Endpoint")
        _field(page, "content").fill("Hello from the console")
        page.click("#provider-test-notification")
        expect(page.get_by_text("Successfully sent")).to_be_visible()
        assert any(c.path == "/notify" and c.fields.get("text") == "Hello from the console" for c in gateway.calls)

    captcha = _provider(server, "built-in", category="Captcha", type="Default")
    visit(f"/providers/built-in/{captcha}")
    page.click("#provider-test-captcha")
    expect(page.locator("#provider-captcha-image")).to_be_visible()
    assert serious(page) == [], "the captcha preview: critical or serious WCAG violations"
    page.fill("#provider-captcha-answer", "abcde")
    page.click("#provider-captcha-verify")
    expect(page.get_by_text("Wrong captcha answer")).to_be_visible()
    # a captcha on the internet: said plainly
    choose(page, _field(page, "type"), "hCaptcha")
    expect(_label(page, "clientId")).to_have_text("Site key")
    expect(page.locator("#provider-test-captcha")).to_be_disabled()
    _field(page, "clientId").fill("site")
    _field(page, "clientSecret").fill("secret")
    page.click("#provider-test-captcha")
    expect(page.get_by_text(re.compile("a service on the internet"))).to_be_visible()


@pytest.fixture
def acme_provider(server):
    return _provider(server, "acme", category="Email", type="Default", host="127.0.0.1", port=25, disable_ssl=True)


def test_an_organization_admin_works_in_their_own_organization(visit, page, api_login, accounts, server,
                                                               acme_provider):
    shared = _provider(server, "admin", category="Captcha", type="Default")
    other = _provider(server, "built-in", category="Captcha", type="Default")
    api_login(accounts.boss)
    visit("/providers")
    _search(page, "prov-")
    expect(_row(page, acme_provider)).to_have_count(1)
    expect(_row(page, shared)).to_contain_text("admin (Shared)")
    expect(_row(page, other)).to_have_count(0)

    visit(f"/providers/acme/{acme_provider}")
    expect(_field(page, "owner")).to_be_disabled()  # fixed to their own organization
    expect(_field(page, "owner")).to_have_value("acme")
    with SmtpSink() as smtp:
        _field(page, "port").fill(str(smtp.port))
        _field(page, "clientId2").fill("noreply@acme.test")
        _field(page, "receiver").fill("boss@acme.test")
        page.click("#provider-test-email")
        expect(page.get_by_text("Successfully sent")).to_be_visible()
        assert code_in(smtp.wait_for("boss@acme.test").body) == "123456"

    # Add: a provider of acme, opened in add mode
    visit("/providers")
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/providers/acme/provider_\w+\?mode=add"))
    choose(page, _field(page, "category"), "Email")
    expect(_field(page, "receiver")).to_have_value("")  # acme's boss has no email
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/providers(\?.*)?$"))

    # a shared provider is read-only to them: its test tools are refused
    visit(f"/providers/admin/{shared}")
    page.click("#provider-test-captcha")
    expect(page.get_by_text(re.compile("Unauthorized|not allowed|permission", re.I))).to_be_visible()


def test_stripe_names_its_webhook_signing_secret_and_masks_it(visit, page, api_login, accounts, server):
    """Stripe keeps its webhook signing secret in Client secret 2: the page names it so, masked
    as the other secrets, and the mask saved back keeps it."""
    from sqlmodel import select

    from iam_console.models import Provider

    name = _provider(server, "built-in", category="Payment", type="Stripe", client_secret="sk_test_kept",
                     client_secret2="whsec_kept")
    api_login(accounts.admin)
    visit(f"/providers/built-in/{name}")
    expect(_label(page, "clientSecret2")).to_have_text("Webhook signing secret")
    expect(_field(page, "clientSecret2")).to_have_attribute("type", "password")
    expect(_field(page, "clientSecret2")).to_have_value("***")
    expect(_field(page, "clientSecret")).to_have_value("***")
    assert serious(page) == [], "the Stripe provider page: critical or serious WCAG violations"
    _field(page, "displayName").fill(f"{name} renamed")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    with server_db(server) as db:
        stored = db.exec(select(Provider).where(Provider.name == name)).one()
        assert (stored.display_name, stored.client_secret, stored.client_secret2) == (
            f"{name} renamed", "sk_test_kept", "whsec_kept")
    # PayPal has no second secret
    choose(page, _field(page, "type"), "PayPal")
    expect(_field(page, "clientSecret2")).to_have_count(0)
