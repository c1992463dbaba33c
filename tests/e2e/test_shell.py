"""The navigation shell: theme, language, the drawer, and the 404/403 pages."""

from __future__ import annotations

import re

from playwright.sync_api import expect

DARK = re.compile(r"(^|\s)dark(\s|$)")
LIGHT = re.compile(r"(^|\s)light(\s|$)")


def _root_theme(page):
    """The outermost Radix theme: Reflex's color mode puts 'light' or 'dark' on it."""
    return page.locator(".radix-themes[data-is-root-theme='true']")


def _shell_theme(page):
    """The console's own theme around the shell: it carries the Compact scaling."""
    return page.locator(".radix-themes[data-is-root-theme='false']").filter(has=page.locator("#shell-header"))


def _choose(page, menu: str, item: str) -> None:
    page.click(menu)
    page.click(item)
    expect(page.locator(item)).to_have_count(0)  # the menu closed


def test_theme_switcher(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    expect(page.locator("#welcome")).to_be_visible()
    expect(_root_theme(page)).to_have_class(LIGHT)
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "100%")

    _choose(page, "#theme-menu", "#theme-dark")
    expect(_root_theme(page)).to_have_class(DARK)
    expect(_root_theme(page)).not_to_have_class(LIGHT)

    _choose(page, "#theme-menu", "#theme-default")
    expect(_root_theme(page)).to_have_class(LIGHT)
    expect(_root_theme(page)).not_to_have_class(DARK)

    # Compact adds to either mode: Dark stays on
    _choose(page, "#theme-menu", "#theme-dark")
    _choose(page, "#theme-menu", "#theme-compact")
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "90%")
    expect(_root_theme(page)).to_have_class(DARK)
    page.click("#theme-menu")
    expect(page.locator("#theme-compact")).to_have_attribute("data-checked", "true")
    expect(page.locator("#theme-dark")).to_have_attribute("data-checked", "true")
    expect(page.locator("#theme-default")).to_have_attribute("data-checked", "false")
    page.keyboard.press("Escape")

    # the choice survives a reload
    visit.reload()
    expect(page.locator("#welcome")).to_be_visible()
    expect(_root_theme(page)).to_have_class(DARK)
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "90%")

    # Compact toggles back off, Default comes back
    _choose(page, "#theme-menu", "#theme-compact")
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "100%")
    _choose(page, "#theme-menu", "#theme-default")
    expect(_root_theme(page)).to_have_class(LIGHT)

    visit.reload()
    expect(page.locator("#welcome")).to_be_visible()
    expect(_root_theme(page)).to_have_class(LIGHT)
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "100%")


def test_language_switcher(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    home = page.locator("#menu-group-home")
    expect(home).to_have_text("Home")

    _choose(page, "#language-menu", "#language-zh")
    expect(home).to_have_text("首页")
    page.click("#user-menu")
    expect(page.locator("#logout")).to_have_text("登出")
    page.keyboard.press("Escape")

    visit.reload()
    expect(page.locator("#welcome")).to_be_visible()
    expect(home).to_have_text("首页")

    _choose(page, "#language-menu", "#language-en")
    expect(home).to_have_text("Home")
    page.click("#user-menu")
    expect(page.locator("#logout")).to_have_text("Logout")


def test_unknown_path_shows_404_and_back_home(visit, page, server, api_login, accounts):
    api_login(accounts.admin)
    visit("/no/such/page")

    expect(page.locator("#result-message")).to_have_text("Sorry, the page you visited does not exist.")
    expect(page.get_by_text("404", exact=True)).to_be_visible()
    page.click("#back-home")

    expect(page).to_have_url(server.url("/"))
    expect(page.locator("#welcome")).to_contain_text("Admin")


def test_403_page(visit, page):
    visit("/403")

    expect(page.locator("#result-message")).to_have_text(
        "Sorry, you do not have permission to access this page or logged in status invalid.")
    expect(page.locator("#back-home")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/403/?$"))  # not behind the guard: no redirect to /login


def test_drawer_menu_on_narrow_screens_only(visit, page, api_login, accounts):
    api_login(accounts.admin)
    page.set_viewport_size({"width": 390, "height": 844})
    visit("/")
    expect(page.locator("#welcome")).to_be_visible()

    drawer = page.locator("#menu-drawer")
    expect(drawer).to_be_visible()
    expect(page.locator("#menu-group-home")).to_be_hidden()
    expect(page.locator("#menu-item-")).to_have_count(0)
    drawer.click()
    dashboard = page.locator("#menu-item-")
    expect(dashboard).to_be_visible()
    expect(dashboard).to_have_text("Dashboard")
    page.keyboard.press("Escape")
    expect(dashboard).to_have_count(0)

    page.set_viewport_size({"width": 1280, "height": 800})
    expect(drawer).to_be_hidden()
    expect(page.locator("#menu-group-home")).to_be_visible()


def test_global_admin_opens_swagger_from_the_admin_menu(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    page.click("#menu-group-admin")
    link = page.locator("#menu-item-swagger")
    expect(link).to_be_visible()
    with page.context.expect_page() as opened:
        link.click()
    swagger = opened.value
    swagger.wait_for_load_state()
    expect(swagger).to_have_url(re.compile(r"/swagger$"))
    expect(swagger.locator(".swagger-ui .title")).to_contain_text("IAM Console API", timeout=15_000)
    expect(swagger.locator(".opblock-summary-path").first).to_be_visible()


def test_organization_admin_has_no_swagger(visit, page, api_login, accounts):
    """The Admin group shows an organization admin Syncers and Webhooks only."""
    api_login(accounts.boss)
    visit("/")
    expect(page.locator("#menu-group-home")).to_be_visible()
    page.click("#menu-group-admin")
    expect(page.locator("#menu-item-syncers")).to_be_visible()
    expect(page.locator("#menu-item-webhooks")).to_be_visible()
    expect(page.locator("#menu-item-sysinfo")).to_have_count(0)
    expect(page.locator("#menu-item-swagger")).to_have_count(0)


def test_an_organization_theme_styles_its_members_console(engine, visit, page, api_login, accounts):
    """A customized theme (organization edit page) gives its members' console its accent colour,
    corner radius and compactness; other organizations keep the default."""
    import uuid

    from conftest import Account

    from iam_console.db import session_scope
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Organization, User

    member = Account(f"themed-{uuid.uuid4().hex[:6]}", "tess", "Themed-pass-1", "Tess")
    with session_scope(engine) as db:
        db.add(Organization(owner="admin", name=member.organization, display_name="Themed",
                            password_type="argon2id", theme_data={
                                "isEnabled": True, "themeType": "comic", "colorPrimary": "#ED4192",
                                "borderRadius": 16, "isCompact": True}))
        db.add(User(owner=member.organization, name=member.username, uuid=str(uuid.uuid4()),
                    type="normal-user", display_name=member.display_name,
                    password=hash_password(member.password, "argon2id"), password_type="argon2id"))

    api_login(member)
    visit("/apps")
    expect(page.locator("#shell-header")).to_be_visible()
    expect(_shell_theme(page)).to_have_attribute("data-accent-color", "pink")
    expect(_shell_theme(page)).to_have_attribute("data-radius", "full")
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "90%")

    api_login(accounts.alice)  # acme has no theme of its own
    visit("/apps")
    expect(page.locator("#shell-header")).to_be_visible()
    expect(_shell_theme(page)).to_have_attribute("data-accent-color", "blue")
    expect(_shell_theme(page)).to_have_attribute("data-radius", "medium")
    expect(_shell_theme(page)).to_have_attribute("data-scaling", "100%")


def test_a_server_out_of_reach_shows_the_connection_notice(page):
    """A network failure shows 'Failed to connect to server: {error}'. The
    page's websocket is pointed at a port where nothing listens, as if the server were down."""
    page.add_init_script("""(() => {
      const Reachable = window.WebSocket;
      window.WebSocket = class extends Reachable {
        constructor(url, protocols) { super("ws://127.0.0.1:9/_event/", protocols); }
      };
    })();""")
    page.goto("/login")
    notice = page.locator("#connection-error")
    expect(notice).to_be_visible(timeout=30_000)
    expect(notice).to_contain_text("Failed to connect to server: ")
