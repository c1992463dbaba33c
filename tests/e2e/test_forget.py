"""/forget/{application}: a user who forgot their password finds their account, gets a code at
their own address from the organization's SMTP provider (a real local SMTP server), proves it
and sets a new password; an account flagged "need update password" is sent there by the guard."""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.mail_world import SMTP_PASSWORD, SMTP_USER, add_mail_organization
from tests.sinks import SmtpSink, code_in

PASSWORD, NEW_PASSWORD = "0ld-passw0rd", "N3w-passw0rd"


@dataclass
class World:
    organization: str
    application: str
    user: str
    email: str
    smtp: SmtpSink


@pytest.fixture
def world(server):
    """An organization of its own: its default application lists its SMTP provider (the sink),
    and one user with an email address."""
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        with server_db(server) as db:
            org = add_mail_organization(db, sink)
            user = f"user-{uuid.uuid4().hex[:6]}"
            email = f"{user}@forget.test"
            db.add(User(owner=org.name, name=user, uuid=str(uuid.uuid4()), email=email,
                        password=hash_password(PASSWORD, "argon2id", ""), password_type="argon2id"))
        yield World(org.name, org.application, user, email, sink)


def _signs_in(page, server, world: World, password: str) -> bool:
    answer = page.request.post("/api/login", data={
        "organization": world.organization, "username": world.user, "password": password})
    return answer.json()["status"] == "ok"


def _to_the_code_step(visit, page, world: World, *, from_sign_in: bool = True) -> str:
    """To a code sent (from the sign-in page's link, or from the forget page the guard showed);
    the code that reached the address."""
    if from_sign_in:
        visit(f"/login/{world.organization}")
        page.click("#login-forget")
    page.wait_for_url(re.compile(f"/forget/{world.application}$"))
    page.fill("#forget-account", world.user)
    page.click("#forget-find")
    expect(page.locator("#forget-dest")).to_contain_text("@forget.test")
    expect(page.locator("#forget-dest")).not_to_have_text(world.email)  # masked
    page.click("#forget-send")
    expect(page.get_by_text("Code sent")).to_be_visible()
    expect(page.locator("#forget-send")).to_be_disabled()  # the resend countdown
    return code_in(world.smtp.wait_for(world.email).body)


def test_a_forgotten_password_is_replaced_through_a_code(server, visit, page, world):
    code = _to_the_code_step(visit, page, world)
    assert serious(page) == []
    page.fill("#forget-code", f"{(int(code) + 1) % 1_000_000:06d}")
    page.click("#forget-verify")
    expect(page.locator("#forget-error")).to_contain_text("remaining chances")
    page.fill("#forget-code", code)
    page.click("#forget-verify")

    page.fill("#forget-password", NEW_PASSWORD)
    page.fill("#forget-confirm", "something else")
    page.click("#forget-change")
    expect(page.locator("#forget-error")).to_contain_text("inconsistent")
    page.fill("#forget-confirm", NEW_PASSWORD)
    page.click("#forget-change")
    page.wait_for_url(re.compile(f"/login/{world.organization}$"))
    assert _signs_in(page, server, world, NEW_PASSWORD)
    assert not _signs_in(page, server, world, PASSWORD)


def test_an_unknown_account_is_said_plainly(server, visit, page, world):
    visit(f"/forget/{world.application}")
    page.fill("#forget-account", "nobody-by-that-name")
    page.keyboard.press("Enter")
    expect(page.locator("#forget-error")).to_contain_text("doesn't exist")
    visit("/forget/no-such-application")
    expect(page.locator("#forget-error")).to_contain_text("does not exist")


def test_an_account_that_must_change_its_password_is_sent_here(server, visit, page, world, api_login):
    from sqlmodel import select

    from iam_console.models import User

    with server_db(server) as db:
        user = db.exec(select(User).where(User.owner == world.organization, User.name == world.user)).one()
        user.need_update_password = True
        db.add(user)
    assert _signs_in(page, server, world, PASSWORD)
    visit("/account")
    code = _to_the_code_step(visit, page, world, from_sign_in=False)
    page.fill("#forget-code", code)
    page.click("#forget-verify")
    page.fill("#forget-password", NEW_PASSWORD)
    page.fill("#forget-confirm", NEW_PASSWORD)
    page.click("#forget-change")
    page.wait_for_url(re.compile(f"/login/{world.organization}$"))
    assert _signs_in(page, server, world, NEW_PASSWORD)
    visit("/account")  # the flag is gone: the page shows
    expect(page.locator("#field-name")).to_have_value(world.user)
