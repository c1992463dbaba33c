"""Applications in the browser, as the global admin and as an organization admin: the list (its
provider links, the built-in application's protection), Add with its defaults, the form's rules
(auto sign-in, token fields, the side panel), the row tables' rules, the copied links and the
signup preview, SAML metadata, the terms-of-use upload, and the 403 and 404 pages."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect

from tests.e2e.steps import choose, save

METADATA = """<md:EntityDescriptor xmlns:md="urn:oasis:names:tc:SAML:2.0:metadata" entityID="https://sp.test/saml">
<md:SPSSODescriptor><md:AssertionConsumerService Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"
Location="https://sp.test/acs"/></md:SPSSODescriptor></md:EntityDescriptor>"""


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _table_row(page, table: str, cls: str, name: str):
    """The row of a row table whose name cell reads `name`."""
    return page.locator(f"#{table}-table tbody tr").filter(
        has=page.locator(f".{cls}", has_text=re.compile(f"^{re.escape(name)}$")))


def _add(page) -> str:
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/applications/admin/application_\w+\?mode=add"))
    return page.url.split("/applications/admin/")[1].split("?")[0]


def _toast(page, text):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def _clipboard_holds(page, text: str) -> None:
    page.wait_for_function("expected => navigator.clipboard.readText().then(t => t === expected)", arg=text,
                           timeout=5000)


def test_the_list_and_add_with_the_defaults(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/applications")
    built_in = _row(page, "app-built-in")
    page.fill("#search-value", "app-built-in")
    expect(built_in).to_have_count(1)
    expect(built_in.get_by_role("button", name="Delete")).to_be_disabled()
    # the providers, in two columns of links
    expect(built_in.get_by_role("link", name="built-in/provider_captcha_default")).to_have_attribute(
        "href", "/providers/built-in/provider_captcha_default")

    name = _add(page)
    # a long form (its default signup and signin items): read once its name is in
    expect(page.locator("#field-name")).to_have_value(name, timeout=15_000)
    expect(page.locator("#field-displayName")).to_have_value(re.compile(r"^New Application - "))
    expect(page.locator("#field-organization")).to_have_text("built-in")
    expect(page.locator("#field-cert")).to_have_text("cert-built-in")
    expect(page.locator("#field-tokenFormat")).to_have_text("JWT")
    expect(page.locator("#field-expireInHours")).to_have_value("168")
    expect(page.locator("#field-refreshExpireInHours")).to_have_value("168")
    expect(page.locator("#field-formOffset")).to_have_text("Center")
    expect(page.locator("#field-redirectUris")).to_have_value("http://localhost:9000/callback")
    expect(page.locator("#field-enableSignUp")).to_be_checked()
    for grant in ("authorization_code", "password", "client_credentials", "token", "id_token", "refresh_token"):
        expect(page.locator(f"#field-grantTypes-{grant}")).to_be_checked()
    expect(page.locator("#signin-methods-table tbody tr .signin-methods-name")).to_have_text(
        ["Password", "Verification code", "WebAuthn", "Face ID"])
    expect(page.locator("#signin-methods-table tbody tr .signin-methods-rule")).to_have_text(
        ["All", "All", "None", "None"])
    expect(page.locator("#providers-table tbody tr .providers-name")).to_have_text(["provider_captcha_default"])
    expect(page.locator("#field-name")).to_be_enabled()

    # Cancel in add mode deletes it
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/applications$"))
    page.fill("#search-value", name)
    expect(page.locator("#list-total")).to_have_text("Total 0")

    # the header's organization narrows the list, and Add makes an application of it
    page.fill("#search-value", "")
    page.click("#organization-selector")
    page.get_by_role("option", name="acme", exact=True).click()
    expect(_row(page, "app-built-in")).to_have_count(0)
    _add(page)
    expect(page.locator("#field-organization")).to_have_text("acme")
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/applications$"))

    visit("/applications/admin/app-built-in")
    expect(page.locator("#field-name")).to_be_disabled()
    expect(page.locator("#field-isShared")).to_be_enabled()  # the global admin shares applications


def test_a_new_application_can_be_signed_up_to(visit, page, context, api_login, accounts):
    """Add then Save: the new application has the default signup items, and its signup page the form."""
    api_login(accounts.admin)
    visit("/applications")
    name = _add(page)
    expect(page.locator("#field-name")).to_have_value(name, timeout=15_000)  # a long form: read
    expect(page.locator("#signup-items-table tbody tr .signup-items-name")).to_contain_text(
        ["ID", "Username", "Display name", "Password", "Confirm password", "Email", "Phone", "Agreement"])
    save(page)
    context.clear_cookies()
    visit(f"/signup/{name}")
    for field in ("#signup-username", "#signup-password", "#signup-confirm-password", "#signup-email"):
        expect(page.locator(field)).to_be_visible()
    expect(page.locator("#signup-submit")).to_be_visible()


def test_the_form_rules(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/applications")
    name = _add(page)

    # token fields are for JWT-Custom only
    expect(page.locator("#field-tokenFields")).to_be_disabled()
    choose(page, page.locator("#field-tokenFormat"), "JWT-Custom")
    expect(page.locator("#field-tokenFields")).to_be_enabled()
    page.fill("#field-tokenFields", "name, email")

    # auto sign-in needs the sign-in session, and goes when the session does
    page.click("#field-enableAutoSignin")
    refused = _toast(page, 'Please enable "Signin session" first before enabling "Auto signin"')
    expect(refused).to_be_visible()
    expect(page.locator("#field-enableAutoSignin")).not_to_be_checked()
    refused.wait_for(state="hidden")  # the toast covers the top buttons
    page.click("#field-enableSigninSession")
    page.click("#field-enableAutoSignin")
    expect(page.locator("#field-enableAutoSignin")).to_be_checked()
    page.click("#field-enableSigninSession")
    expect(page.locator("#field-enableAutoSignin")).not_to_be_checked()

    # the side panel's HTML is for form position 4
    expect(page.locator("#field-formSideHtml")).to_have_count(0)
    choose(page, page.locator("#field-formOffset"), "Side panel")
    expect(page.locator("#field-formSideHtml")).to_be_visible()

    # the limits are at least 1: the service refuses 0
    page.fill("#field-failedSigninLimit", "0")
    page.click("#edit-save")
    failed = _toast(page, re.compile("Failed to save: .*at least 1"))
    expect(failed).to_be_visible()
    failed.wait_for(state="hidden")
    page.fill("#field-failedSigninLimit", "3")

    # the logout URLs (OpenID Back- and Front-Channel Logout): http(s) only, the service says
    expect(page.get_by_text("Back-channel logout URL", exact=True)).to_be_visible()
    page.fill("#field-backchannelLogoutUri", "ftp://rp.test/logout")
    page.click("#edit-save")
    failed = _toast(page, re.compile("Failed to save: .*back-channel logout URI must be an http or https URL"))
    expect(failed).to_be_visible()
    failed.wait_for(state="hidden")
    page.fill("#field-backchannelLogoutUri", "https://rp.test/backchannel")
    page.click("#field-backchannelLogoutSessionRequired")
    page.fill("#field-frontchannelLogoutUri", "https://rp.test/frontchannel")

    # the logo's preview, 90 px high
    page.fill("#field-logo", "/favicon.ico")
    expect(page.locator("#logo-preview")).to_have_attribute("src", "/favicon.ico")
    expect(page.locator("#logo-preview")).to_have_css("height", "90px")

    # the theme follows the organization's until it is customized
    page.locator("#theme-mode").get_by_role("radio", name="Customize").click()
    page.click("#theme-color-00b96b")

    # the HTML fields show a preview
    page.locator("#field-signinHtml .cm-content").fill("<h1 id='hello'>Hello</h1>")
    expect(page.frame_locator("#signinHtml-preview").locator("#hello")).to_have_text("Hello")
    save(page)
    page.reload()
    expect(page.locator("#field-tokenFormat")).to_have_text("JWT-Custom")
    expect(page.locator("#field-tokenFields")).to_have_value("name, email")
    expect(page.locator("#field-formOffset")).to_have_text("Side panel")
    expect(page.locator("#field-failedSigninLimit")).to_have_value("3")
    expect(page.locator("#field-backchannelLogoutUri")).to_have_value("https://rp.test/backchannel")
    expect(page.locator("#field-backchannelLogoutSessionRequired")).to_be_checked()
    expect(page.locator("#field-frontchannelLogoutUri")).to_have_value("https://rp.test/frontchannel")
    expect(page.locator("#field-enableSigninSession")).not_to_be_checked()
    expect(page.locator("#theme-color-00b96b")).to_have_attribute("data-selected", "true")
    expect(page.locator("#theme-mode").get_by_role("radio", name="Customize")).to_be_checked()
    record = page.request.get(f"/api/get-application?id=admin/{name}").json()["data"]
    assert record["themeData"]["isEnabled"] is True and record["themeData"]["colorPrimary"].lower() == "#00b96b"
    assert record["formOffset"] == 4 and record["logo"] == "/favicon.ico"
    assert (record["backchannelLogoutUri"], record["backchannelLogoutSessionRequired"],
            record["frontchannelLogoutUri"]) == ("https://rp.test/backchannel", True, "https://rp.test/frontchannel")


def test_the_row_tables(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/applications")
    _add(page)

    # signin methods: a chosen name sets the display name and the rule; the last row stays
    methods = page.locator("#signin-methods-table tbody tr")
    page.click("#signin-methods-add")
    expect(methods).to_have_count(5)
    ldap = methods.nth(4)
    expect(ldap.locator(".signin-methods-name")).to_have_text("LDAP")
    choose(page, methods.nth(3).locator(".signin-methods-name"), "Face ID")  # unchanged row: its own name
    webauthn = methods.nth(2)
    webauthn.get_by_role("button", name="Delete").click()
    choose(page, methods.nth(3).locator(".signin-methods-name"), "WebAuthn")
    expect(methods.nth(3).locator(".signin-methods-display-name input")).to_have_value("WebAuthn")
    expect(methods.nth(3).locator(".signin-methods-rule")).to_have_text("None")
    choose(page, methods.nth(1).locator(".signin-methods-rule"), "Phone only")
    for _ in range(3):
        methods.nth(0).get_by_role("button", name="Delete").click()
    expect(methods).to_have_count(1)
    expect(methods.nth(0).get_by_role("button", name="Delete")).to_be_disabled()

    # providers: a Captcha provider signs nobody up or in, and offers its own rules
    captcha = page.locator("#providers-table tbody tr").nth(0)
    expect(captcha.locator(".providers-can-sign-in")).to_be_disabled()
    choose(page, captcha.locator(".providers-rule"), "Always")
    expect(captcha.locator(".providers-rule")).to_have_text("Always")

    # signup items: a new application's defaults; ID has no visible switch, Password's required is
    # fixed, Signup button stays
    items = page.locator("#signup-items-table tbody tr")
    defaults = ["ID", "Username", "Display name", "Password", "Confirm password", "Email", "Phone", "Agreement",
                "Signup button", "Providers"]
    expect(items.locator(".signup-items-name")).to_have_text(defaults)
    first = items.nth(0)
    expect(first.locator(".signup-items-visible")).to_have_count(0)
    choose(page, first.locator(".signup-items-rule"), "Incremental")
    expect(items.nth(3).locator(".signup-items-required")).to_be_disabled()
    button = items.nth(8)
    expect(button.locator(".signup-items-required")).to_have_count(0)
    expect(button.get_by_role("button", name="Delete")).to_be_disabled()
    page.click("#signup-items-add")
    third = items.nth(10)
    choose(page, third.locator(".signup-items-name"), "Gender")
    expect(third.locator(".signup-items-options input")).to_be_disabled()
    choose(page, third.locator(".signup-items-type"), "Single Choice")
    third.locator(".signup-items-options input").fill("Female, Male")
    third.locator(".signup-items-visible").click()  # hidden: no longer required
    expect(third.locator(".signup-items-required")).not_to_be_checked()
    # signup items are for applications that take signups
    expect(page.locator("#providers-table .providers-can-sign-up")).to_have_count(1)
    page.click("#field-enableSignUp")
    expect(page.locator("#signup-items-table")).to_have_count(0)
    expect(page.locator("#providers-table .providers-can-sign-up")).to_have_count(0)  # nor signing up with one
    page.click("#field-enableSignUp")

    # signin items and SAML attributes
    # a new application's are Casdoor's defaults: every named item; the next one is a text
    signin = ["Back button", "Languages", "Logo", "Signin methods", "Username", "Password", "Agreement",
              "Forgot password?", "Login button", "Signup link", "Providers"]
    expect(page.locator("#signin-items-table tbody tr .signin-items-name")).to_have_text(signin)
    page.click("#signin-items-add")
    expect(page.locator("#signin-items-table tbody tr .signin-items-name")).to_have_text([*signin, "Text 1"])
    page.click("#saml-attributes-add")
    page.locator("#saml-attributes-table tbody tr .saml-attributes-name input").fill("email")
    page.locator("#saml-attributes-table tbody tr .saml-attributes-value input").fill("$user.email")

    save(page)
    page.reload()
    expect(page.locator("#signin-methods-table tbody tr .signin-methods-name")).to_have_text(["WebAuthn"])
    expect(page.locator("#providers-table tbody tr .providers-rule")).to_have_text(["Always"])
    expect(page.locator("#signup-items-table tbody tr .signup-items-name")).to_have_text([*defaults, "Gender"])
    expect(items.nth(0).locator(".signup-items-rule")).to_have_text("Incremental")
    expect(items.nth(10).locator(".signup-items-options input")).to_have_value("Female, Male")
    expect(page.locator("#saml-attributes-table tbody tr .saml-attributes-value input")).to_have_value("$user.email")


def test_links_saml_metadata_and_terms_of_use(visit, page, context, api_login, accounts, server):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    api_login(accounts.admin)
    visit("/applications")
    name = _add(page)
    expect(page.locator("#field-clientId")).to_have_value(re.compile(r"^\w{20}$"))
    client_id = page.locator("#field-clientId").input_value()

    query = (f"client_id={client_id}&response_type=code"
             f"&redirect_uri=http%3A%2F%2Flocalhost%3A9000%2Fcallback&scope=read&state={name}")
    for target, url in (("signup", f"/signup/{name}"), ("signin", f"/login/oauth/authorize?{query}"),
                        ("authorize", f"/signup/oauth/authorize?{query}"), ("prompt", f"/prompt/{name}")):
        page.click(f"#copy-{target}-url")
        expect(_toast(page, "Copied to clipboard successfully").first).to_be_visible()
        _clipboard_holds(page, server.base_url + url)
    expect(page.locator("#signup-preview")).to_have_attribute("href", f"{server.base_url}/signup/{name}")
    page.fill("#field-redirectUris", "")
    expect(page.locator("#signup-preview-error")).to_have_text(
        "ERROR: You must specify at least one Redirect URL in Redirect URLs")

    # SAML: the metadata link, and a service provider's metadata read
    expect(page.locator("#saml-metadata-url")).to_have_text(
        f"{server.base_url}/api/saml/metadata?application=admin/{name}&enablePostBinding=false")
    page.click("#field-enableSamlPostBinding")
    expect(page.locator("#saml-metadata-url")).to_contain_text("enablePostBinding=true")
    page.fill("#saml-metadata-text", "<not metadata")
    page.click("#saml-parse-metadata")
    expect(_toast(page, "Can not parse metadata")).to_be_visible()
    page.fill("#saml-metadata-text", METADATA)
    page.click("#saml-parse-metadata")
    expect(_toast(page, "Parse metadata successfully")).to_be_visible()
    expect(page.locator("#field-samlReplyUrl")).to_have_value("https://sp.test/acs")

    # terms of use: one .html file, stored as a resource
    chooser = page.locator("#terms-of-use-upload input[type=file]")
    chooser.set_input_files(files=[{"name": "terms.txt", "mimeType": "text/plain", "buffer": b"terms"}])
    expect(_toast(page, "Please select a HTML file")).to_be_visible()
    chooser.set_input_files(files=[{"name": "terms.html", "mimeType": "text/html", "buffer": b"<h1>Terms</h1>"}])
    expect(_toast(page, "File uploaded successfully")).to_be_visible()
    url = f"{server.base_url}/files/resource/built-in/termsOfUse_built-in_{name}.html"
    expect(page.locator("#field-termsOfUse")).to_have_value(url)
    assert page.request.get(url).text() == "<h1>Terms</h1>"
    page.fill("#field-redirectUris", "https://rp.test/cb")
    page.click("#edit-save-bottom")  # the toasts above cover the top buttons
    expect(_toast(page, "Successfully saved")).to_be_visible()
    page.reload()
    expect(page.locator("#field-termsOfUse")).to_have_value(url)
    expect(page.locator("#field-samlReplyUrl")).to_have_value("https://sp.test/acs")


def test_an_organization_admin(visit, page, api_login, accounts):
    api_login(accounts.boss)
    visit("/applications")
    expect(page.locator("#list-table")).to_be_visible()
    expect(_row(page, "app-built-in")).to_have_count(0)  # another organization's
    name = _add(page)
    expect(page.locator("#field-organization")).to_have_text("acme")
    expect(page.locator("#field-organization")).to_be_disabled()
    expect(page.locator("#field-isShared")).to_be_disabled()
    expect(page.locator("#field-owner")).to_be_disabled()
    # the providers offered are acme's and the shared ones
    page.click("#providers-add")
    row = page.locator("#providers-table tbody tr").nth(1)
    row.locator(".providers-name").click()
    page.locator(".pick-option").filter(has_text="provider_captcha_default").click()
    # the chosen provider fills the row: a captcha signs nobody in, and takes its own rules
    expect(row.locator(".providers-name")).to_have_text("provider_captcha_default")
    expect(row.locator(".providers-can-sign-in")).to_be_disabled()
    choose(page, row.locator(".providers-rule"), "Dynamic")
    page.fill("#field-displayName", "Acme portal")
    save(page)
    page.click("#edit-save-exit")
    page.wait_for_url(re.compile(r"/applications$"))
    expect(_row(page, name)).to_contain_text("Acme portal")

    # another organization's application is refused (the 403 page), a missing one is missing
    visit("/applications/admin/app-built-in")
    page.wait_for_url(re.compile(r"/403$"))
    visit(f"/applications/admin/nothing-{uuid.uuid4().hex[:6]}")
    page.wait_for_url(re.compile(r"/404$"))


def test_an_ordinary_user_gets_the_403_page(visit, page, api_login, accounts):
    api_login(accounts.alice)
    visit("/applications/admin/app-built-in")
    page.wait_for_url(re.compile(r"/403$"))
    expect(page.get_by_text("Sorry, you do not have permission to access this page or logged in status invalid.")
           ).to_be_visible()
