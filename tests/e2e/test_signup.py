"""/signup/{application} in the browser: a visitor fills the application's signup items, proves
their email with a code that reached a real local SMTP server, accepts the agreement and lands
signed in; the invitation code comes from the link; a password mismatch, an unchecked agreement
and a taken username are told in place; an application without sign-up says so."""

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

PASSWORD = "Signup-passw0rd"


@dataclass
class World:
    organization: str
    application: str
    closed: str  # an application of the organization without sign-up
    smtp: SmtpSink


def _items(invitation_required: bool) -> list[dict]:
    rows = [("ID", False, False, "Random", {}), ("Username", True, True, "None", {}),
            ("Display name", True, True, "First, last", {}), ("Password", True, True, "None", {}),
            ("Confirm password", True, True, "None", {}), ("Email", True, True, "Normal", {}),
            ("Invitation code", True, invitation_required, "None", {}),
            ("Team", True, True, "None", {"type": "Single Choice", "options": ["Red", "Blue"], "label": "Team"}),
            ("Agreement", True, True, "None", {}), ("Signup button", True, False, "None", {})]
    return [{"name": name, "visible": visible, "required": required, "prompted": False, "rule": rule, **extra}
            for name, visible, required, rule, extra in rows]


@pytest.fixture
def world(server):
    from iam_console.models import Application, Invitation

    fields = {"enable_sign_up": True, "terms_of_use": "https://example.com/terms", "signup_items": _items(True)}
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        with server_db(server) as db:
            org = add_mail_organization(db, sink, fields, password_options=["AtLeast8"])
            closed = f"{org.application}-closed"
            db.add(Application(owner="admin", name=closed, organization=org.name, enable_password=True,
                               client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                               providers=[{"name": org.provider, "rule": "All"}], **fields | {"enable_sign_up": False}))
            db.add(Invitation(owner=org.name, name="welcome", code="WELCOME-1", quota=5, application="All",
                              state="Active"))
        yield World(org.name, org.application, closed, sink)


def _fill(page, username: str, email: str, confirm: str = PASSWORD) -> None:
    page.fill("#signup-username", username)
    page.fill("#signup-firstname", "Grace")
    page.fill("#signup-lastname", "Hopper")
    page.fill("#signup-password", PASSWORD)
    page.fill("#signup-confirm-password", confirm)
    page.fill("#signup-email", email)
    page.select_option("#signup-team", "Blue")


def test_a_visitor_signs_up_and_lands_signed_in(server, visit, page, world):
    visit(f"/login/{world.organization}")  # the sign-in page links the default application's sign-up
    expect(page.locator("#login-signup")).to_have_attribute("href", f"/signup/{world.application}")
    visit(f"/signup/{world.application}?invitationCode=WELCOME-1")
    expect(page.locator("#signup-invitation-code")).to_have_value("WELCOME-1")
    expect(page.locator("#signup-terms")).to_have_attribute("href", "https://example.com/terms")
    assert serious(page) == []
    email = f"grace-{uuid.uuid4().hex[:6]}@signup.test"
    _fill(page, "grace", email, confirm="Other-passw0rd")
    page.click("#signup-submit")
    expect(page.locator("#signup-error")).to_have_text("Your confirmed password is inconsistent with the password!")
    page.fill("#signup-confirm-password", PASSWORD)
    page.click("#signup-submit")
    expect(page.locator("#signup-error")).to_have_text("Please accept the agreement!")
    page.click("#signup-agreement")
    page.click("#signup-submit")  # no code yet
    expect(page.locator("#signup-error")).to_have_text("Empty code")

    page.click("#signup-email-send")
    expect(page.get_by_text("Code sent")).to_be_visible()
    expect(page.locator("#signup-email-send")).to_be_disabled()  # the resend countdown
    page.fill("#signup-email-code", code_in(world.smtp.wait_for(email).body))
    page.click("#signup-submit")
    page.wait_for_url(re.compile(r"/apps/?$"))  # signed in: an ordinary user's home
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"], account["displayName"], account["email"], account["emailVerified"],
            account["invitation"], account["properties"]) == (
        world.organization, "grace", "Grace Hopper", email, True, "welcome", {"Team": "Blue"})


def test_a_taken_username_is_told_and_nothing_more_is_made(server, visit, page, world):
    from sqlmodel import select

    from iam_console.models import User

    visit(f"/signup/{world.application}?invitationCode=WELCOME-1")
    email = f"taken-{uuid.uuid4().hex[:6]}@signup.test"
    _fill(page, "admin", email)
    with server_db(server) as db:
        db.add(User(owner=world.organization, name="admin", uuid=str(uuid.uuid4())))
    page.click("#signup-agreement")
    page.click("#signup-submit")
    expect(page.locator("#signup-error")).to_have_text("Username already exists")
    with server_db(server) as db:
        assert db.exec(select(User.name).where(User.owner == world.organization)).all() == ["admin"]


def test_an_application_without_sign_up_says_so(visit, page, world):
    visit(f"/signup/{world.closed}")
    expect(page.locator("#signup-error")).to_have_text("The application does not allow to sign up new account")
    expect(page.locator("#signup-submit")).to_have_count(0)
    visit("/signup/no-such-application")
    expect(page.locator("#signup-error")).to_contain_text("does not exist")
