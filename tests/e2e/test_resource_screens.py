"""The list and edit machinery through its first screens, organizations and users:
add (defaults, add mode, Cancel), edit, rename, a failed save reverting the
name, delete with its confirmation, paging and sorting past one page, and what
an organization admin and an ordinary user see and may change."""

from __future__ import annotations

import re
import uuid

from playwright.sync_api import expect


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


def test_add_edit_rename_fail_and_delete_an_organization(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/organizations")
    expect(page.locator("#list-table")).to_be_visible()

    page.click("#list-add")
    page.wait_for_url(re.compile(r"/organizations/organization_\w+\?mode=add"))
    name = page.url.split("/organizations/")[1].split("?")[0]
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-displayName")).to_have_value(re.compile(r"New Organization - "))
    expect(page.locator("#edit-cancel")).to_be_visible()

    # Cancel in add mode deletes the record it opened
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/organizations$"))
    expect(_row(page, name)).to_have_count(0)

    page.click("#list-add")
    page.wait_for_url(re.compile(r"/organizations/organization_\w+\?mode=add"))
    name = page.url.split("/organizations/")[1].split("?")[0]
    page.fill("#field-displayName", "Edited Org")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-cancel")).to_have_count(0)  # saved: no longer add mode

    # rename: the page follows the new name
    renamed = f"renamed-{uuid.uuid4().hex[:6]}"
    page.fill("#field-name", renamed)
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/organizations/{renamed}$"))
    expect(page.locator("#field-displayName")).to_have_value("Edited Org")

    # a failed save puts the saved name back
    page.fill("#field-name", "built-in")
    page.click("#edit-save")
    expect(page.get_by_text(re.compile("Failed to save: .*already exists"))).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(renamed)

    page.click("#edit-save-exit")
    page.wait_for_url(re.compile(r"/organizations$"))
    page.fill("#search-value", renamed)
    expect(_row(page, renamed)).to_have_count(1)
    _row(page, renamed).get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {renamed} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, renamed)).to_have_count(0)


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
    expect(_row(page, "alice")).to_have_count(1)
    assert set(page.locator("#list-table tbody tr td:first-child").all_inner_texts()) == {"acme"}
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
