"""Forms behave as people expect: Enter submits a one-field form, the first field
gets the cursor, and leaving an edit page with unsaved edits asks first (a
confirm for the console's own links, the browser's question on unload). axe-core
checks the MFA pages on the way (the setup steps, the sign-in's second step)."""

from __future__ import annotations

import re
import time
import uuid

import pyotp
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.test_accessibility import report
from tests.e2e.test_mfa import _new_user, _sign_in_form, _sign_out


def _focused(page) -> str:
    return page.evaluate("document.activeElement && document.activeElement.id")


def _no_serious_violations(page, where: str) -> None:
    found = serious(page)
    report(where, found)
    assert found == [], where


def test_enter_verifies_the_mfa_passcode_and_the_second_step(server, visit, page):
    account = _new_user(server)
    _sign_in_form(visit, page, account)
    expect(page.locator("#account-name")).to_be_visible()

    visit("/mfa/setup?mfaType=app")
    expect(page.locator("#mfa-qr")).to_be_visible()
    expect(page.locator("#mfa-passcode")).to_be_focused()  # the form's one field has the cursor
    _no_serious_violations(page, "/mfa/setup (passcode)")
    secret = page.locator("#mfa-secret").inner_text().strip()
    page.keyboard.type("000000")
    page.keyboard.press("Enter")
    expect(page.get_by_text("The passcode is incorrect")).to_be_visible()
    expect(page.locator("#mfa-recovery-code")).to_have_count(0)
    page.fill("#mfa-passcode", pyotp.TOTP(secret).now())
    page.press("#mfa-passcode", "Enter")  # no click on Verify
    expect(page.locator("#mfa-recovery-code")).to_be_visible()
    _no_serious_violations(page, "/mfa/setup (recovery code)")
    page.click("#mfa-enable")
    expect(page).to_have_url(re.compile(r"/account/?$"))

    # the sign-in's second step: the passcode has the cursor, Enter sends it
    _sign_out(page)
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-passcode")).to_be_focused()
    _no_serious_violations(page, "/login (second step)")
    page.keyboard.type(pyotp.TOTP(secret).at(time.time() + 30))
    page.keyboard.press("Enter")
    expect(page.locator("#account-name")).to_have_text(account.display_name)


def test_the_first_field_gets_the_cursor(visit, page, api_login, accounts):
    visit("/login")
    expect(page.locator("#login-username")).to_be_focused()

    api_login(accounts.admin)
    visit("/organizations/acme")  # a global admin may rename it: the name comes first
    expect(page.locator("#field-name")).to_be_focused()
    visit("/organizations/built-in")  # its name is locked: the next field
    expect(page.locator("#field-displayName")).to_be_focused()


def _new_group(server) -> str:
    from sqlmodel import Session

    from iam_console.db import make_engine
    from iam_console.models import Group

    name = f"unsaved-{uuid.uuid4().hex[:6]}"
    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            db.add(Group(owner="acme", name=name, display_name=name))
            db.commit()
    finally:
        engine.dispose()
    return name


def test_leaving_unsaved_edits_asks_first(server, visit, page, api_login, accounts):
    group = _new_group(server)
    api_login(accounts.admin)
    edit_url = re.compile(f"/groups/acme/{group}$")
    visit(f"/groups/acme/{group}")
    expect(page.locator("#field-displayName")).to_have_value(group)

    # nothing edited: a link goes without a question
    questions: list[str] = []
    page.on("dialog", lambda dialog: (questions.append(dialog.message), dialog.dismiss()))
    page.click("#menu-group-orgs")
    page.click("#menu-item-groups")
    page.wait_for_url(re.compile(r"/groups$"))
    assert questions == []

    visit(f"/groups/acme/{group}")
    expect(page.locator("#field-displayName")).to_have_value(group)  # read: typing now is not overwritten
    page.fill("#field-displayName", "Not saved yet")
    expect(page.locator("#edit-unsaved")).to_have_attribute("data-dirty", "true")
    # Cancel on the question: the page and its edits stay
    page.click("#menu-group-orgs")
    page.click("#menu-item-groups")
    expect(page).to_have_url(edit_url)
    assert questions == ["You have unsaved changes. Leave this page?"]
    expect(page.locator("#field-displayName")).to_have_value("Not saved yet")

    # closing the tab or reloading: the browser's own question
    page.close(run_before_unload=True)
    page.wait_for_timeout(500)
    assert len(questions) == 2 and not page.is_closed()


def test_ok_on_the_question_leaves_and_saving_clears_it(server, visit, page, api_login, accounts):
    group = _new_group(server)
    api_login(accounts.admin)
    visit(f"/groups/acme/{group}")
    expect(page.locator("#field-displayName")).to_have_value(group)
    page.fill("#field-displayName", "Changed then left")
    questions: list[str] = []
    page.once("dialog", lambda dialog: (questions.append(dialog.type), dialog.accept()))
    page.click("#menu-group-orgs")
    page.click("#menu-item-groups")
    page.wait_for_url(re.compile(r"/groups$"))
    assert questions == ["confirm"]

    visit(f"/groups/acme/{group}")
    expect(page.locator("#field-displayName")).to_have_value(group)  # the edit was not saved
    page.fill("#field-displayName", "Saved")
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    expect(page.locator("#edit-unsaved")).to_have_attribute("data-dirty", "false")
    page.on("dialog", lambda dialog: (questions.append(dialog.type), dialog.dismiss()))
    page.click("#menu-group-orgs")
    page.click("#menu-item-groups")
    page.wait_for_url(re.compile(r"/groups$"))
    assert questions == ["confirm"]


def test_the_back_button_asks_too(server, visit, page, api_login, accounts):
    """Back from an edit page with unsaved edits: Cancel stays with the edits, OK goes back."""
    group = _new_group(server)
    api_login(accounts.admin)
    visit("/groups")
    page.locator(f'a[href="/groups/acme/{group}"]').first.click()
    page.wait_for_url(re.compile(f"/groups/acme/{group}$"))
    expect(page.locator("#field-displayName")).to_have_value(group)
    page.fill("#field-displayName", "Kept on Back")
    expect(page.locator("#edit-unsaved")).to_have_attribute("data-dirty", "true")
    answers = ["dismiss"]
    questions: list[str] = []

    def answer(dialog):
        questions.append(dialog.message)
        dialog.dismiss() if answers.pop(0) == "dismiss" else dialog.accept()

    page.on("dialog", answer)
    page.go_back()
    page.wait_for_timeout(500)
    assert questions == ["You have unsaved changes. Leave this page?"]
    expect(page).to_have_url(re.compile(f"/groups/acme/{group}$"))
    expect(page.locator("#field-displayName")).to_have_value("Kept on Back")

    answers.append("accept")
    page.go_back()
    expect(page).to_have_url(re.compile(r"/groups/?$"))
    expect(page.locator(f'a[href="/groups/acme/{group}"]').first).to_be_visible()
    assert len(questions) == 2
