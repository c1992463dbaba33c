"""The list and edit machinery: the generated walk every screen with a list joins,
an extension's by its declaration alone (WALKS: add, add mode, Cancel, save, rename, a failed save
reverting the name, Save & Exit, delete with its confirmation, paging, sorting and
search, axe-core on its pages), then what the walk cannot say generically: paging
details, protections, and what an organization admin and an ordinary user see."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from iam_console.core.resources import Ownership
from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.e2e.test_accessibility import report


def _seed_users(server, organization: str, count: int) -> None:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.models import Organization, User

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name=organization, display_name=organization,
                                password_type="argon2id"))
            for i in range(count):
                db.add(User(owner=organization, name=f"u{i:03d}", uuid=str(uuid.uuid4()),
                            display_name=f"User {i:03d}", type="normal-user"))
            db.commit()
    finally:
        engine.dispose()


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


@dataclass(frozen=True)
class Walk:
    """One screen's place in the generated walk (WALKS): a screen NAMED does not name is walked as its
    declaration says (walk_of)."""

    screen: str  # the key of ui.screens.SCREENS
    text_field: str = ""  # a plain text field the walk edits and expects back after a reload
    typed: str = "Walked"  # what the walk types there (a value the field's rules take)
    # False: a list without Add or edit page (sessions, resources): the walk reads, pages, sorts,
    # searches and deletes records it seeded
    addable: bool = True
    # a read-only list (Screen.read_only: records, verifications): no Add, Edit or Delete at all;
    # the walk checks so, then pages, sorts and searches the records it seeded
    read_only: bool = False
    # an edit page that only shows the record (Screen.view_only: transactions): Add opens it with
    # every field disabled and no Save; Cancel deletes the record, Back keeps it and the list's
    # Delete then deletes it, with its question
    view_only: bool = False


# the built-in screens with a list page of its own (the LDAP servers are listed on their
# organization's page), each with what its walk needs; any other screen (an extension's) is walked
# as `walk_of` reads its declaration
NAMED = [Walk("organization", "displayName"), Walk("user", "displayName"), Walk("group", "displayName"),
         Walk("invitation", "displayName"), Walk("cert", "displayName"), Walk("application", "displayName"),
         Walk("provider", "displayName"), Walk("token", "scope"), Walk("enforcer", "displayName"),
         Walk("resource", addable=False),
         Walk("session", addable=False), Walk("record", addable=False, read_only=True),
         Walk("verification", addable=False, read_only=True), Walk("webhook", "url", "https://hooks.example.org/walked"),
         Walk("model", "displayName"), Walk("adapter", "table"), Walk("role", "displayName"),
         Walk("permission", "displayName"), Walk("syncer", "table"), Walk("product", "displayName"),
         Walk("payment", "displayName"), Walk("plan", "displayName"), Walk("pricing", "displayName"),
         Walk("subscription", "displayName"), Walk("transaction", view_only=True)]


def walk_of(screen) -> Walk:
    """A screen's walk from its declaration: Add and the edit page unless its list has no Add, a
    read-only or view-only list as declared, and the first plain text field its viewer may edit."""
    text = next((f.key for f in screen.fields if f.widget == "input" and not (
        f.derived or f.virtual or f.global_admin_only or f.locked_for or f.shown_when or f.enabled_when
        or f.check or f.copy_to)), "")
    return Walk(screen.key, text, addable=screen.addable and screen.has_edit_page and not screen.read_only,
                read_only=screen.read_only, view_only=screen.view_only)


def _walks() -> list[Walk]:
    from iam_console.ui import pages  # noqa: F401  (declares the screens, every extension's too)
    from iam_console.ui.screens import SCREENS

    named = {w.screen for w in NAMED}
    return NAMED + [walk_of(s) for key, s in sorted(SCREENS.items())
                    if key not in named and s.columns and s.list_page]


WALKS = _walks()


def test_every_screen_with_a_list_is_walked():
    from iam_console.ui.screens import SCREENS

    assert {w.screen for w in WALKS} == {key for key, s in SCREENS.items() if s.columns and s.list_page}
    assert {w.screen for w in NAMED} <= set(SCREENS)  # no walk of a screen that is gone
    for walk in WALKS:  # an editable walk edits a field, and its type says so
        assert walk.text_field or not walk.addable or walk.view_only, walk


def _seed(server, screen, owner: str, names: list[str]) -> None:
    """Records of the screen's kind straight into the database (the paging part needs a page and one more)."""
    from sqlmodel import Session

    from iam_console.db import make_engine

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            for name in names:
                fields = screen.kind.model.model_fields
                unique = {"uuid": str(uuid.uuid4())} if "uuid" in fields else {}
                # a session is addressed by its application too
                unique |= {"application": "app-built-in"} if "application" in fields else {}
                if "client_id" in fields:  # an application's client id is unique
                    unique["client_id"] = uuid.uuid4().hex
                if "access_key" in fields:  # and so is a key's access key
                    unique["access_key"] = uuid.uuid4().hex
                db.add(screen.kind.model(owner=owner, name=name, **unique))
            db.commit()
    finally:
        engine.dispose()


def _no_serious_violations(page, where: str) -> None:
    found = serious(page)
    report(where, found)
    assert found == [], f"{where}: critical or serious WCAG violations"


def _search_by_name(page, text: str) -> None:
    page.click("#search-field")
    page.get_by_role("option", name="Name", exact=True).click()
    page.fill("#search-value", text)


def _add_and_edit(walk, screen, page, server, prefix: str, taken: str) -> str:
    """Add, add mode, Cancel, Add and Save, rename, a failed save, Save & Exit, delete: the owner."""
    list_url = re.compile(re.escape(screen.list_route) + r"(\?.*)?$")
    add_url = re.compile(re.escape(screen.list_route.rstrip("s")) + r".*\?mode=add")
    page.click("#list-add")
    page.wait_for_url(add_url)
    expect(page.locator("#edit-cancel")).to_be_visible()
    name = page.locator("#field-name").input_value()
    assert name.startswith(screen.kind.name_prefix + "_")
    # the owner: a text, or a picker of organizations (its button shows the chosen one); a kind
    # owned by admin (organizations, tokens) shows none
    owner = "admin" if screen.kind.ownership is Ownership.ADMIN else page.locator("#field-owner").evaluate(
        "e => e.tagName === 'INPUT' ? e.value : e.textContent.trim()")
    _no_serious_violations(page, screen.edit_pattern)

    # Cancel in add mode deletes the record it opened
    page.click("#edit-cancel")
    page.wait_for_url(list_url)
    _search_by_name(page, name)
    expect(page.locator("#list-total")).to_have_text("Total 0")

    _seed(server, screen, owner, [taken])
    page.click("#list-add")
    page.wait_for_url(add_url)
    # type only once the new record is read: a late read would overwrite the typing
    expect(page.locator("#field-name")).to_have_value(re.compile(re.escape(screen.kind.name_prefix + "_")))
    expect(page.locator("#field-name")).not_to_have_value(name)  # not the cancelled one's, still shown
    expect(page.locator("#edit-cancel")).to_be_visible()
    name = page.locator("#field-name").input_value()
    page.fill(f"#field-{walk.text_field}", walk.typed)
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-cancel")).to_have_count(0)  # saved: no longer add mode

    # rename: the page follows the new name
    renamed = f"{prefix}-renamed"
    page.fill("#field-name", renamed)
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/{renamed}$"))
    expect(page.locator(f"#field-{walk.text_field}")).to_have_value(walk.typed)

    # a failed save puts the saved name back
    page.fill("#field-name", taken)
    page.click("#edit-save")
    expect(page.get_by_text(re.compile(r"Failed to save: .*"))).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(renamed)

    page.click("#edit-save-exit")
    page.wait_for_url(list_url)
    _search_by_name(page, renamed)
    expect(_row(page, renamed)).to_have_count(1)
    _row(page, renamed).get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {renamed} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, renamed)).to_have_count(0)

    return owner


def _add_and_view(screen, page, prefix: str) -> str:
    """A view-only edit page: Add, every field disabled and no Save, Cancel deleting the record;
    Add again, Back to the list, and Delete there: the owner."""
    list_url = re.compile(re.escape(screen.list_route) + r"(\?.*)?$")
    add_url = re.compile(re.escape(screen.list_route.rstrip("s")) + r".*\?mode=add")
    page.click("#list-add")
    page.wait_for_url(add_url)
    expect(page.locator("#edit-cancel")).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(re.compile(re.escape(screen.kind.name_prefix + "_")))
    name = page.locator("#field-name").input_value()
    owner = page.locator("#field-owner").input_value()
    expect(page.locator("#edit-save")).to_have_count(0)
    expect(page.locator("#edit-save-exit")).to_have_count(0)
    form = page.locator("#edit-form")
    expect(form.locator("input:not([disabled]), textarea:not([disabled]), button:not([disabled])")).to_have_count(0)
    assert form.locator("input").count() == len(screen.fields) + 2  # the owner and name too
    _no_serious_violations(page, screen.edit_pattern)
    page.click("#edit-cancel")
    page.wait_for_url(list_url)
    _search_by_name(page, name)
    expect(page.locator("#list-total")).to_have_text("Total 0")

    page.click("#list-add")
    page.wait_for_url(add_url)
    expect(page.locator("#field-name")).to_have_value(re.compile(re.escape(screen.kind.name_prefix + "_")))
    expect(page.locator("#field-name")).not_to_have_value(name)
    name = page.locator("#field-name").input_value()
    page.click("#edit-back")
    page.wait_for_url(list_url)
    _search_by_name(page, name)
    expect(_row(page, name)).to_have_count(1)
    _row(page, name).get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {name} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, name)).to_have_count(0)
    return owner


@pytest.mark.parametrize("walk", WALKS, ids=lambda w: w.screen)
def test_the_generated_screen_walk(walk, visit, page, api_login, accounts, server):
    """Add; the edit page in add mode; Cancel deletes the record; Add again and Save; rename; a failed
    save puts the name back; Save & Exit; delete with its question; paging, sorting and search.
    axe-core checks the list and the edit page on the way."""
    from iam_console.ui import pages  # noqa: F401
    from iam_console.ui.screens import SCREENS

    screen = SCREENS[walk.screen]
    api_login(accounts.admin)
    visit(screen.list_route)
    expect(page.locator("#list-table")).to_be_visible()
    _no_serious_violations(page, screen.list_route)

    prefix = f"walk-{uuid.uuid4().hex[:6]}"
    taken = f"{prefix}-taken"
    if walk.view_only:
        owner = _add_and_view(screen, page, prefix)
        _seed(server, screen, owner, [taken])
    elif walk.addable:
        owner = _add_and_edit(walk, screen, page, server, prefix, taken)
    else:
        expect(page.locator("#list-add")).to_have_count(0)
        expect(page.get_by_role("link", name="Edit")).to_have_count(0)
        owner = "built-in"
        _seed(server, screen, owner, [taken])

    # paging, sorting and search over a page and one more of the screen's records
    count = screen.page_size + 1
    _seed(server, screen, owner, [f"{prefix}-{i:02d}" for i in range(count - 1)])  # and the taken one
    # and one the search leaves out: the total shows the search has been applied (its input is
    # debounced) before the walk sorts and pages, whatever else the database holds
    _seed(server, screen, owner, [f"unsearched-{uuid.uuid4().hex[:6]}"])
    visit(screen.list_route)
    _search_by_name(page, prefix)
    expect(page.locator("#list-total")).to_have_text(f"Total {count}")
    expect(page.locator("#page-current")).to_have_text("1 / 2")
    page.click("#sort-name")  # ascending
    expect(page.locator("#list-table tbody tr").first).to_contain_text(f"{prefix}-00")
    expect(page.locator("th", has=page.locator("#sort-name"))).to_have_attribute("aria-sort", "ascending")
    page.click("#page-next")
    expect(page.locator("#page-current")).to_have_text("2 / 2")
    expect(page.locator("#list-table tbody tr")).to_have_count(1)
    expect(_row(page, taken)).to_have_count(1)
    page.focus("#sort-name")  # descending from the keyboard, back on the first page
    page.keyboard.press("Enter")
    expect(page.locator("#list-table tbody tr").first).to_contain_text(taken)
    _no_serious_violations(page, screen.list_route + " (searched, sorted)")
    if walk.read_only:
        expect(page.locator("#list-table").get_by_role("button", name="Delete")).to_have_count(0)
    elif not walk.addable:  # delete, with its question
        _row(page, taken).get_by_role("button", name="Delete").click()
        expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {taken} ?")
        page.click("#delete-confirm")
        expect(page.get_by_text("Successfully deleted")).to_be_visible()
        expect(page.locator("#list-total")).to_have_text(f"Total {count - 1}")


def test_the_built_in_organization_is_protected(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/organizations")
    page.fill("#search-value", "built-in")
    expect(_row(page, "built-in").get_by_role("button", name="Delete")).to_be_disabled()
    visit("/organizations/built-in")
    expect(page.locator("#field-name")).to_be_disabled()


def test_paging_and_sorting_a_list_longer_than_a_page(visit, page, api_login, accounts, server):
    organization = f"paged-{uuid.uuid4().hex[:6]}"
    _seed_users(server, organization, 41)
    api_login(accounts.admin)
    visit(f"/organizations/{organization}/users")
    expect(page.locator("#list-total")).to_have_text("Total 41")
    expect(page.locator("#page-current")).to_have_text("1 / 3")

    page.click("#sort-name")  # ascending by name
    expect(page.locator("#list-table tbody tr").first).to_contain_text("u000")
    seen = set()
    for expected_page in (1, 2, 3):
        expect(page.locator("#page-current")).to_have_text(f"{expected_page} / 3")
        names = page.locator("#list-table tbody tr td:nth-child(3)").all_inner_texts()
        assert not seen.intersection(names), "a row repeated across pages"
        seen.update(names)
        if expected_page < 3:
            page.click("#page-next")
    assert len(seen) == 41

    page.click("#sort-name")  # descending
    expect(page.locator("#list-table tbody tr").first).to_contain_text("u040")
    page.fill("#page-jump", "2")
    page.press("#page-jump", "Enter")
    expect(page.locator("#page-current")).to_have_text("2 / 3")

    # deleting the last row of a page above the first steps back a page
    page.fill("#page-jump", "3")
    page.press("#page-jump", "Enter")
    expect(page.locator("#list-table tbody tr")).to_have_count(1)
    page.locator("#list-table tbody tr").get_by_role("button", name="Delete").click()
    page.click("#delete-confirm")
    expect(page.locator("#page-current")).to_have_text("2 / 2")
    expect(page.locator("#list-total")).to_have_text("Total 40")
    expect(page.locator("#list-table tbody tr")).to_have_count(20)

    # the size changer: 50 a page shows them all on one
    page.click("#page-size")
    page.get_by_role("option", name="50", exact=True).click()
    expect(page.locator("#page-current")).to_have_text("1 / 1")
    expect(page.locator("#list-table tbody tr")).to_have_count(40)


def test_an_organization_admin_sees_only_their_organization(visit, page, api_login, accounts):
    api_login(accounts.boss)
    visit("/organizations")
    expect(page.locator("#list-table tbody tr")).to_have_count(1)
    expect(_row(page, "acme")).to_have_count(1)
    expect(page.locator("#list-add")).to_have_count(0)  # adding organizations is for global admins
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    visit("/users")
    expect(page.locator("#list-table tbody tr").first).to_be_visible()
    assert set(page.locator("#list-table tbody tr td:first-child").all_inner_texts()) == {"acme"}
    # other tests add users to acme: alice and boss are found by name, wherever they are
    _search_by_name(page, "alice")
    expect(_row(page, "alice")).to_have_count(1)
    page.fill("#search-value", "boss")
    # their own account cannot be deleted from the list
    expect(_row(page, "boss").get_by_role("button", name="Delete")).to_be_disabled()
    visit("/users/built-in/admin")  # out of reach: answered as a missing user
    page.wait_for_url(re.compile(r"/404$"))


def test_field_locks_for_an_ordinary_user_and_an_admin(visit, page, api_login, accounts):
    api_login(accounts.alice)
    visit("/account")
    expect(page.locator("#field-name")).to_be_disabled()
    expect(page.locator("#field-isAdmin")).to_have_count(0)  # view rule Admin: not shown to her
    expect(page.locator("#field-tag")).to_be_disabled()  # modify rule Admin
    expect(page.locator("#field-displayName")).to_be_enabled()  # modify rule Self
    bio = f"Down the rabbit hole {uuid.uuid4().hex[:6]}"  # not her name: other tests expect it
    page.fill("#field-bio", bio)
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()

    visit("/organizations")  # her own organization, read-only
    expect(page.locator("#list-table tbody tr")).to_have_count(1)
    expect(page.get_by_role("button", name="Delete")).to_have_count(0)
    expect(page.locator("#list-add")).to_have_count(0)

    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/users/acme/alice")
    expect(page.locator("#field-bio")).to_have_value(bio)
    expect(page.locator("#field-tag")).to_be_enabled()
    expect(page.locator("#field-isAdmin")).to_be_enabled()
    expect(page.locator("#field-owner")).to_be_disabled()  # only a global admin moves a user


def test_what_the_server_refuses_is_not_offered(visit, page, api_login, accounts, server):
    """An ordinary user sees no Add on /users and /applications, and no Delete she could use; an
    organization admin sees a shared provider read-only: every field disabled, Back for Save, and
    its Delete disabled in the list."""
    from iam_console.models import Application

    app = f"acme-app-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Application(owner="admin", name=app, organization="acme", client_id=uuid.uuid4().hex,
                           client_secret=uuid.uuid4().hex))
    api_login(accounts.alice)
    for route, name in (("/users", "alice"), ("/applications", app)):
        visit(route)
        _search_by_name(page, name)
        expect(_row(page, name)).to_have_count(1)
        expect(page.locator("#list-add")).to_have_count(0)
        expect(_row(page, name).get_by_role("button", name="Delete")).to_be_disabled()
    visit("/permissions")  # she may ask for permissions
    expect(page.locator("#list-add")).to_be_visible()

    page.context.clear_cookies()
    api_login(accounts.boss)
    visit("/providers")
    expect(page.locator("#list-add")).to_be_visible()
    _search_by_name(page, "provider_captcha_default")
    expect(_row(page, "provider_captcha_default").get_by_role("button", name="Delete")).to_be_disabled()
    visit("/providers/admin/provider_captcha_default")
    expect(page.locator("#field-displayName")).to_have_value("Captcha Default")
    expect(page.locator("#field-displayName")).to_be_disabled()
    expect(page.locator("#field-name")).to_be_disabled()
    expect(page.locator("#edit-save")).to_have_count(0)
    expect(page.locator("#edit-back")).to_be_visible()
    # their own record stays editable
    visit("/users/acme/alice")
    expect(page.locator("#edit-save")).to_be_visible()
    expect(page.locator("#field-displayName")).to_be_enabled()


# the row's Delete (every list with actions has one), clickable where it is drawn: the element
# at its centre is the button itself, not a cell scrolled over it, and within the window; else
# what is there instead, and the widths around it
REACHABLE = """(button) => {
  const box = button.getBoundingClientRect();
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  const inside = box.left >= 0 && box.right <= window.innerWidth && box.top >= 0 && box.bottom <= window.innerHeight;
  const hit = document.elementFromPoint(x, y);
  if (inside && hit !== null && button.contains(hit)) return "";
  const table = button.closest(".rt-TableRoot"), viewport = button.closest(".rt-ScrollAreaViewport");
  return JSON.stringify({button: [box.left, box.top, box.right, box.bottom], window: [innerWidth, innerHeight],
                         hit: hit && (hit.tagName + "." + hit.className),
                         table: table && table.getBoundingClientRect().width,
                         viewport: viewport && [viewport.clientWidth, viewport.scrollWidth],
                         page: document.documentElement.scrollWidth});
}"""


def _actions_reachable(page, row) -> None:
    """The row's Delete is on screen at 1280 px, without scrolling the table sideways."""
    assert page.viewport_size["width"] == 1280
    delete = row.get_by_role("button", name="Delete")
    expect(delete).to_have_count(1)
    # measured again until the page settles (up to 5 s): the list's rows and a toast may still be
    # arriving when the row first shows, moving or covering it for a moment
    for _ in range(25):
        top = delete.evaluate("b => b.getBoundingClientRect().top")
        page.evaluate("top => window.scrollBy(0, top - 300)", top)  # down only: the table stays unscrolled
        off = delete.evaluate(REACHABLE)
        if off == "":
            return
        page.wait_for_timeout(200)
    raise AssertionError(f"the row's actions are off screen at 1280 px: {off}")


@pytest.mark.parametrize("walk", [w for w in WALKS if not w.read_only], ids=lambda w: w.screen)
def test_every_lists_actions_are_reachable_at_1280_px(walk, visit, page, api_login, accounts, server):
    """A record of every list with actions, seen by the global admin in a 1280x800 window: its Delete
    (and the column it is in) stays on screen however many columns the list has."""
    from iam_console.ui import pages  # noqa: F401
    from iam_console.ui.screens import SCREENS

    screen = SCREENS[walk.screen]
    owner = "admin" if screen.kind.ownership is Ownership.ADMIN else "built-in"
    name = f"reach-{uuid.uuid4().hex[:6]}"
    _seed(server, screen, owner, [name])
    api_login(accounts.admin)
    visit(screen.list_route)
    _search_by_name(page, name)
    expect(_row(page, name)).to_have_count(1)
    _actions_reachable(page, _row(page, name))


def test_the_group_trees_user_actions_are_reachable_at_1280_px(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/trees/built-in")
    _search_by_name(page, "admin")  # the newest users come first: by now other tests' are on page 1
    row = _row(page, "admin")
    expect(row.first).to_be_visible()
    _actions_reachable(page, row.first)
