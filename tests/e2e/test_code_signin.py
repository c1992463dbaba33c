"""Sign-in with a verification code on /login/{organization}: the organization's default
application lists "Verification code", so the page offers it beside the password; the code
reaches the account's email on a real local SMTP server and signs the account in; an address no
account has is told in place."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.mail_world import SMTP_PASSWORD, SMTP_USER, add_mail_organization
from tests.sinks import SmtpSink, code_in


@pytest.fixture
def world(server):
    from iam_console.models import User

    methods = [{"name": "Password", "displayName": "Password", "rule": "All"},
               {"name": "Verification code", "displayName": "Verification code", "rule": "All"}]
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        with server_db(server) as db:
            organization = add_mail_organization(db, sink, {"signin_methods": methods}).name
            email = f"ann-{organization}@code.test"
            db.add(User(owner=organization, name="ann", uuid=str(uuid.uuid4()), email=email,
                        password="", password_type="argon2id"))
        yield organization, email, sink


def test_a_code_sent_to_the_email_signs_the_account_in(visit, page, world):
    organization, email, smtp = world
    visit(f"/login/{organization}")
    page.get_by_role("radio", name="Verification code").click()
    expect(page.locator("#login-code-address")).to_be_visible()
    assert serious(page) == []
    page.fill("#login-code-address", "nobody@code.test")
    page.click("#login-send-code")
    expect(page.locator("#login-error")).to_contain_text("doesn't exist")
    page.fill("#login-code-address", email)
    page.click("#login-send-code")
    expect(page.get_by_text("Code sent")).to_be_visible()
    page.fill("#login-code", code_in(smtp.wait_for(email).body))
    page.click("#login-submit")
    page.wait_for_url(re.compile(r"/(apps)?/?$"))
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"], account["emailVerified"]) == (organization, "ann", True)


def test_an_application_without_the_method_shows_the_password_alone(visit, page, accounts):
    visit("/login/acme")  # no default application: the password alone
    expect(page.locator("#login-username")).to_be_visible()
    expect(page.locator("#login-methods")).to_have_count(0)
    visit("/login")  # the built-in application lists both (its seeded signin methods)
    expect(page.get_by_role("radio", name="Password")).to_be_checked()
