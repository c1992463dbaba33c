"""The email reset dialog: alice, an ordinary user of acme,
proves a new address with the code that acme's SMTP provider sent to a real local SMTP
server, and the page reloads with it; the code is listed for acme's admin."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect

from tests.e2e.steps import server_db
from tests.sinks import SmtpSink, code_in

APPLICATION, PROVIDER = "app-acme-reset", "smtp-acme-reset"
SMTP_USER, SMTP_PASSWORD = "noreply@acme.test", "acme-smtp-pass"


def _acme(db):
    from sqlmodel import select

    from iam_console.models import Organization, User

    return (db.exec(select(Organization).where(Organization.name == "acme")).one(),
            db.exec(select(User).where(User.owner == "acme", User.name == "alice")).one())


@pytest.fixture
def acme_mail(server):
    """acme's default application, listing acme's SMTP provider, for this test only (other tests
    rely on acme naming no default application); alice's email is put back afterwards."""
    from sqlmodel import select

    from iam_console.models import Application, Provider

    with server_db(server) as db:
        before = (_acme(db)[1].email, _acme(db)[1].email_verified)
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        try:
            with server_db(server) as db:
                db.add(Provider(owner="acme", name=PROVIDER, display_name="Acme SMTP", category="Email", type="SMTP",
                                host="127.0.0.1", port=sink.port, disable_ssl=True, client_id=SMTP_USER,
                                client_secret=SMTP_PASSWORD, title="Acme code",
                                content="<p>Your Acme code is %s</p>"))
                db.add(Application(owner="admin", name=APPLICATION, organization="acme", enable_password=True,
                                   client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                                   providers=[{"name": PROVIDER, "rule": "All"}]))
                acme, _ = _acme(db)
                acme.default_application = APPLICATION
                db.add(acme)
            yield sink
        finally:
            with server_db(server) as db:
                acme, alice = _acme(db)
                acme.default_application = ""
                alice.email, alice.email_verified = before
                db.add_all([acme, alice])
                for model, owner, name in ((Application, "admin", APPLICATION), (Provider, "acme", PROVIDER)):
                    row = db.exec(select(model).where(model.owner == owner, model.name == name)).first()
                    if row is not None:
                        db.delete(row)


def _stored_alice(server) -> tuple[str, bool]:
    with server_db(server) as db:
        alice = _acme(db)[1]
        return alice.email, alice.email_verified


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def test_alice_resets_her_email_with_the_code_sent_there(visit, page, api_login, accounts, server, acme_mail):
    address = f"alice-{uuid.uuid4().hex[:8]}@wonderland.test"
    api_login(accounts.alice)
    visit("/account")
    expect(page.locator("#field-name")).to_have_value("alice")
    expect(page.locator("#field-email")).to_be_disabled()  # only admins type it in
    page.click("#reset-email-open")
    expect(page.locator("#reset-dest")).to_be_visible()

    page.click("#reset-ok")
    expect(_toast(page, "Email cannot be empty")).to_be_visible()
    page.fill("#reset-dest", address)
    page.click("#reset-ok")
    expect(_toast(page, "Empty code")).to_be_visible()

    page.click("#reset-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    expect(page.locator("#reset-send")).to_be_disabled()
    expect(page.locator("#reset-send")).to_have_text(re.compile(r"^\d+ s$"))
    mail = acme_mail.wait_for(address)
    assert mail.login == (SMTP_USER, SMTP_PASSWORD) and mail.message["Subject"] == "Acme code"
    code = code_in(mail.body)

    wrong = str((int(code) + 1) % 1_000_000).zfill(6)
    page.fill("#reset-code", wrong)
    page.click("#reset-ok")
    expect(_toast(page, "password or code is incorrect, you have 4 remaining chances")).to_be_visible()
    assert _stored_alice(server)[0] != address

    page.fill("#reset-code", code)
    page.click("#reset-ok")
    # the page reloads with the new address
    expect(page.locator("#field-email")).to_have_value(address)
    expect(page.locator("#reset-dest")).to_have_count(0)
    assert _stored_alice(server) == (address, True)

    # acme's admin sees the code among the Verifications, and types addresses in directly
    page.context.clear_cookies()
    api_login(accounts.boss)
    listed = page.request.get("/api/get-verifications", params={"owner": "acme", "p": "1", "pageSize": "50"}).json()
    row = next(r for r in listed["data"] if r["receiver"] == address)
    assert (row["code"], row["isUsed"], row["user"], row["provider"]) == (code, True, "acme/alice", PROVIDER)
    visit("/users/acme/alice")
    expect(page.locator("#field-name")).to_have_value("alice")
    expect(page.locator("#field-email")).to_be_enabled()
    expect(page.locator("#reset-email-open")).to_have_count(0)  # another user's page: no reset dialog
