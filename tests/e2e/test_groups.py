"""Groups in the browser: the list and edit screens (add, edit, rename, a failed
save reverting the name, delete with its confirmation, the refused delete of a
group with children) and the group tree (selection showing the group's users,
remove from group, add a child group, edit and delete from the tree), with the
organization field for an organization admin and a global admin."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from playwright.sync_api import expect

from tests.e2e.steps import as_page

CHIEF_PASSWORD = "E2e-chief-pass-1"


@dataclass(frozen=True)
class Account:  # what the api_login fixture reads
    organization: str
    username: str
    password: str


def _seed_organization(server, users: dict[str, list[str]]) -> tuple[str, Account]:
    """A fresh organization with the groups eng (Physical, top) > dev (Virtual) and
    sales (top), its admin 'chief' (in dev) and the given users with their groups."""
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.identity.passwords import hash_password
    from iam_console.models import Group, Organization, User

    org = f"tree-{uuid.uuid4().hex[:6]}"
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                                nav_items=["all"], password_options=["AtLeast6"]))
            db.add(Group(owner=org, name="eng", display_name="Engineering", type="Physical", parent_id=org,
                         is_top_group=True, is_enabled=True))
            db.add(Group(owner=org, name="dev", display_name="Developers", type="Virtual", parent_id="eng",
                         is_enabled=True))
            db.add(Group(owner=org, name="sales", display_name="Sales", type="Virtual", parent_id=org,
                         is_top_group=True, is_enabled=True))
            db.add(User(owner=org, name="chief", uuid=str(uuid.uuid4()), display_name="Chief", is_admin=True,
                        type="normal-user", groups=[f"{org}/dev"],
                        password=hash_password(CHIEF_PASSWORD, "argon2id"), password_type="argon2id"))
            for name, groups in users.items():
                db.add(User(owner=org, name=name, uuid=str(uuid.uuid4()), display_name=name.title(),
                            type="normal-user", groups=[f"{org}/{g}" for g in groups]))
            db.commit()
    finally:
        engine.dispose()
    return org, Account(org, "chief", CHIEF_PASSWORD)


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def _node(page, name: str):
    return page.locator(f'#group-tree .tree-node[data-name="{name}"]')


def _choose(page, field: str, option: str) -> None:
    page.click(f"#field-{field}")
    page.get_by_role("option", name=option, exact=True).click()


def test_add_edit_rename_fail_and_delete_a_group(visit, page, api_login, accounts, server):
    org, _ = _seed_organization(server, {})
    api_login(accounts.admin)
    visit("/groups")
    expect(page.locator("#list-table")).to_be_visible()

    page.click("#list-add")
    page.wait_for_url(re.compile(r"/groups/built-in/group_\w+\?mode=add"))
    name = page.url.split("/groups/built-in/")[1].split("?")[0]
    expect(page.locator("#field-name")).to_have_value(name)
    expect(page.locator("#field-displayName")).to_have_value(re.compile(r"New Group - "))
    expect(page.locator("#field-type")).to_have_text("Virtual")
    expect(page.locator("#field-parentId")).to_contain_text("Built-in Organization")  # the organization itself
    expect(page.locator("#field-owner")).to_be_enabled()  # a global admin may move it
    expect(page.locator("#group-members")).to_contain_text("No users")

    page.fill("#field-displayName", "Edited Group")
    _choose(page, "type", "Physical")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-cancel")).to_have_count(0)
    expect(page.locator("#field-type")).to_have_text("Physical")

    renamed = f"renamed-{uuid.uuid4().hex[:6]}"
    page.fill("#field-name", renamed)
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/groups/built-in/{renamed}$"))
    expect(page.locator("#field-displayName")).to_have_value("Edited Group")

    # a failed save puts the saved name back
    taken = f"taken-{uuid.uuid4().hex[:6]}"
    other = page.request.post("/api/add-group", data={"owner": "built-in", "name": taken,
                                                      "type": "Virtual", "parentId": "built-in"},
                              headers=as_page(page)).json()
    assert other["status"] == "ok", other
    page.fill("#field-name", taken)
    page.click("#edit-save")
    expect(page.get_by_text(re.compile("Failed to save: .*already exists"))).to_be_visible()
    expect(page.locator("#field-name")).to_have_value(renamed)

    page.click("#edit-save-exit")
    page.wait_for_url(re.compile(r"/groups$"))
    page.fill("#search-value", renamed)
    row = _row(page, renamed)
    expect(row).to_have_count(1)
    expect(row).to_contain_text("Physical")
    expect(row.get_by_role("link", name="built-in").first).to_have_attribute("href", "/organizations/built-in")
    row.get_by_role("button", name="Delete").click()
    expect(page.locator("#delete-question")).to_have_text(f"Sure to delete: {renamed} ?")
    page.click("#delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    expect(_row(page, renamed)).to_have_count(0)

    # the type filter, within the organization chosen in the header
    page.fill("#search-value", "")
    page.click("#organization-selector")
    page.get_by_role("option", name=org, exact=True).click()
    visit("/groups")
    expect(page.locator("#list-total")).to_have_text("Total 3")
    page.click("#filter-type")
    page.get_by_role("option", name="Physical", exact=True).click()
    expect(page.locator("#list-total")).to_have_text("Total 1")
    expect(_row(page, "Engineering")).to_have_count(1)


def test_a_group_with_children_cannot_be_deleted(visit, page, api_login, server):
    org, chief = _seed_organization(server, {})
    api_login(chief)
    visit("/groups")
    expect(page.locator("#list-total")).to_have_text("Total 3")
    # the parent column links to the organization for a top group, else to the parent group
    expect(_row(page, "dev").get_by_role("link", name="eng")).to_have_attribute("href", f"/groups/{org}/eng")
    expect(_row(page, "sales").get_by_role("link", name=org).last).to_have_attribute("href", f"/organizations/{org}")
    expect(_row(page, "Developers").get_by_role("link", name="View users")).to_have_attribute(
        "href", f"/trees/{org}/dev")
    expect(_row(page, "Engineering").get_by_role("button", name="Delete")).to_be_disabled()
    expect(_row(page, "Developers").get_by_role("button", name="Delete")).to_be_enabled()
    # and the server refuses it whoever asks
    refused = page.request.post("/api/delete-group", data={"owner": org, "name": "eng"}, headers=as_page(page)).json()
    assert refused["status"] == "error" and "child groups" in refused["msg"], refused

    # the organization list links to the organization's tree
    visit("/organizations")
    expect(_row(page, org).get_by_role("link", name="Groups")).to_have_attribute("href", f"/trees/{org}")
    expect(_row(page, org).get_by_role("link", name="View users")).to_have_attribute(
        "href", f"/organizations/{org}/users")

    # an organization admin cannot move a group to another organization
    visit(f"/groups/{org}/sales")
    expect(page.locator("#field-owner")).to_be_disabled()
    expect(page.locator("#field-name")).to_be_enabled()


def test_the_tree_shows_each_groups_users_and_removes_from_a_group(visit, page, api_login, server):
    org, chief = _seed_organization(server, {"carol": ["dev"], "dave": ["eng"], "erin": ["dev", "sales"]})
    api_login(chief)
    visit(f"/trees/{org}")
    expect(page.locator("#group-tree .tree-node")).to_have_count(3)
    expect(_node(page, "eng")).to_have_attribute("data-type", "Physical")
    expect(_node(page, "dev")).to_have_attribute("data-type", "Virtual")
    expect(_node(page, "eng").locator("svg.lucide-building-2")).to_have_count(1)
    expect(_node(page, "dev").locator("svg.lucide-cloud")).to_have_count(1)
    expect(page.locator("#tree-organization")).to_have_count(0)  # an organization admin has their own only
    # nothing selected: every user of the organization
    expect(page.locator("#list-total")).to_have_text("Total 4")
    expect(page.get_by_role("button", name="Remove")).to_have_count(0)

    _node(page, "dev").get_by_role("link", name="Developers").click()
    page.wait_for_url(re.compile(f"/trees/{org}/dev$"))
    expect(_node(page, "dev")).to_have_attribute("data-selected", "true")
    expect(page.locator("#list-total")).to_have_text("Total 3")
    expect(_row(page, "carol")).to_have_count(1)
    expect(_row(page, "dave")).to_have_count(0)
    # the viewer's own account cannot be removed
    expect(_row(page, "chief").get_by_role("button", name="Remove")).to_be_disabled()

    _row(page, "carol").get_by_role("button", name="Remove").click()
    expect(page.locator("#remove-question")).to_have_text("Sure to remove: carol ?")
    page.click("#remove-confirm")
    expect(page.get_by_text("Successfully removed")).to_be_visible()
    expect(_row(page, "carol")).to_have_count(0)
    expect(page.locator("#list-total")).to_have_text("Total 2")

    _node(page, "eng").get_by_role("link", name="Engineering").click()
    page.wait_for_url(re.compile(f"/trees/{org}/eng$"))
    expect(_node(page, "eng")).to_have_attribute("data-selected", "true")
    expect(page.locator("#list-total")).to_have_text("Total 1")
    expect(_row(page, "dave")).to_have_count(1)
    expect(page.locator("#tree-delete")).to_have_count(0)  # eng has a child: no delete

    page.click("#tree-show-all")
    page.wait_for_url(re.compile(f"/trees/{org}$"))
    expect(page.locator("#list-total")).to_have_text("Total 4")


def test_add_edit_and_delete_groups_from_the_tree(visit, page, api_login, accounts, server):
    org, _ = _seed_organization(server, {"carol": ["dev"]})
    api_login(accounts.admin)
    visit(f"/trees/{org}/dev")
    expect(_node(page, "dev")).to_have_attribute("data-selected", "true")
    expect(page.locator("#tree-organization")).to_have_text(org)  # a global admin's selector
    expect(page.locator("#organization-selector")).to_have_count(0)  # the header's is not on tree pages
    expect(page.locator("#list-total")).to_have_text("Total 2")

    # add a child of the selected group: opened in add mode, Save & Exit goes back to the tree
    page.click("#tree-add-child")
    page.wait_for_url(re.compile(rf"/groups/{org}/group_\w+\?mode=add&returnUrl=/trees/{org}/dev"))
    child = page.url.split(f"/groups/{org}/")[1].split("?")[0]
    expect(page.locator("#field-parentId")).to_have_text("Developers")
    page.fill("#field-displayName", "Web team")
    page.click("#edit-save-exit")
    page.wait_for_url(re.compile(f"/trees/{org}/dev$"))
    expect(_node(page, child)).to_contain_text("Web team")
    expect(page.locator("#group-tree .tree-node").nth(2)).to_have_attribute("data-name", child)  # under dev
    expect(page.locator("#tree-delete")).to_have_count(0)  # dev has a child now

    # edit from the tree: Save keeps the way back, through a rename too
    _node(page, child).get_by_role("link", name="Web team").click()
    page.wait_for_url(re.compile(f"/trees/{org}/{child}$"))
    expect(_node(page, child)).to_have_attribute("data-selected", "true")
    page.click("#tree-edit")
    page.wait_for_url(re.compile(rf"/groups/{org}/{child}\?returnUrl="))
    page.fill("#field-name", "web")
    page.click("#edit-save")
    page.wait_for_url(re.compile(rf"/groups/{org}/web\?returnUrl="))
    page.click("#edit-save-exit")
    # back to the tree URL it was opened from; that name is gone, so the tree's top
    page.wait_for_url(re.compile(f"/trees/{org}$"))
    expect(_node(page, "web")).to_have_count(1)

    # delete a leaf, with its confirmation
    _node(page, "web").get_by_role("link", name="Web team").click()
    page.wait_for_url(re.compile(f"/trees/{org}/web$"))
    expect(_node(page, "web")).to_have_attribute("data-selected", "true")
    page.click("#tree-delete")
    expect(page.locator("#tree-delete-question")).to_have_text("Sure to delete: web ?")
    page.click("#tree-delete-confirm")
    expect(page.get_by_text("Successfully deleted")).to_be_visible()
    page.wait_for_url(re.compile(f"/trees/{org}$"))
    expect(_node(page, "web")).to_have_count(0)

    # add a top-level group; Cancel in add mode deletes it and goes back to the tree
    page.click("#tree-add-top")
    page.wait_for_url(re.compile(rf"/groups/{org}/group_\w+\?mode=add"))
    added = page.url.split(f"/groups/{org}/")[1].split("?")[0]
    expect(page.locator("#field-parentId")).to_have_text(org)
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(f"/trees/{org}$"))
    expect(_node(page, added)).to_have_count(0)

    # another organization from the tree's own selector
    page.click("#tree-organization")
    page.get_by_role("option", name="built-in", exact=True).click()
    page.wait_for_url(re.compile(r"/trees/built-in$"))
