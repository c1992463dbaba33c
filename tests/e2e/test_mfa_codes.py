"""Email and SMS multi-factor authentication in the browser:
an ordinary user sets each type up on /mfa/setup with the code that the organization's
providers sent to a real local SMTP server or HTTP SMS gateway (tests/sinks.py), signs out
and signs in with a new code (a wrong one refused, a used one refused the next time), and
Set preferred on the user page decides which method the sign-in step offers first."""

from __future__ import annotations

import re
import uuid

import pytest
from playwright.sync_api import expect
from sqlmodel import Session, delete

from tests.e2e.conftest import Account
from tests.sinks import HttpSink, SmtpSink, code_in

PASSWORD = "Mfa-codes-pass-1"
SMTP_USER, SMTP_PASSWORD = "mailer@codes.test", "codes-smtp-secret"


@pytest.fixture(scope="module")
def smtp():
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        yield sink


@pytest.fixture(scope="module")
def gateway():
    with HttpSink() as sink:
        yield sink


@pytest.fixture(autouse=True)
def fresh_address_limit(engine):
    """Every browser test signs in from 127.0.0.1: the per-address count of code checks
    (signin/mfa.limit_checks) would otherwise carry over from the other MFA tests."""
    from iam_console.models import Throttle

    with Session(engine) as db:
        db.exec(delete(Throttle).where(Throttle.key.like("code-check:ip:%")))
        db.commit()


@pytest.fixture
def organization(engine, smtp, gateway) -> str:
    """A fresh organization whose default application lists its own SMTP and Custom HTTP SMS
    providers (the sinks). One second between codes: a test sends the setup's code and the
    sign-in's a few seconds apart, and the default 60 s would refuse the second."""
    from iam_console.models import Application, Organization, Provider

    name = f"codes{uuid.uuid4().hex[:6]}"
    application = f"app-{name}"
    with Session(engine) as db:
        db.add(Organization(owner="admin", name=name, display_name=name, password_type="argon2id",
                            languages=["en"], nav_items=["all"], country_codes=["US"],
                            default_application=application))
        db.add(Application(owner="admin", name=application, organization=name, enable_password=True,
                           client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex, code_resend_timeout=1,
                           providers=[{"name": f"{name}-mail", "rule": "All"}, {"name": f"{name}-sms", "rule": "All"}]))
        db.add(Provider(owner=name, name=f"{name}-mail", category="Email", type="SMTP", host="127.0.0.1",
                        port=smtp.port, disable_ssl=True, client_id=SMTP_USER, client_secret=SMTP_PASSWORD,
                        title="Your sign-in code", content="<p>Your code is %s.</p>"))
        db.add(Provider(owner=name, name=f"{name}-sms", category="SMS", type="Custom HTTP SMS",
                        endpoint=f"{gateway.url}/send", method="POST", title="message",
                        template_code="Your code is %s"))
        db.commit()
    return name


def _new_user(engine, organization: str, **fields) -> Account:
    from iam_console.identity.passwords import hash_password
    from iam_console.models import User

    name = f"u{uuid.uuid4().hex[:8]}"
    with Session(engine) as db:
        db.add(User(owner=organization, name=name, uuid=str(uuid.uuid4()), type="normal-user", display_name=name,
                    password=hash_password(PASSWORD, "argon2id"), password_type="argon2id",
                    signup_application="app-built-in", **fields))
        db.commit()
    return Account(organization, name, PASSWORD, name)


def _phone() -> str:
    """A valid US number of its own, so that no two tests' codes share a receiver."""
    return f"202555{uuid.uuid4().int % 10000:04d}"


def _sign_in_form(visit, page, account: Account):
    visit(f"/login/{account.organization}")
    page.fill("#login-username", account.username)
    page.fill("#login-password", account.password)
    page.click("#login-submit")


def _sign_out(page):
    page.click("#user-menu")
    page.click("#logout")
    expect(page.locator("#login-username")).to_be_visible()


def _toast(page, text: str | re.Pattern):
    return page.locator("[data-sonner-toast]").filter(has_text=text)


def _wrong(code: str) -> str:
    return str((int(code) + 1) % 1_000_000).zfill(6)


def _set_up(visit, page, mfa_type: str, receive) -> str:
    """Set a type up on /mfa/setup with the code `receive()` reads; the recovery code shown."""
    visit(f"/mfa/setup?mfaType={mfa_type}")
    expect(page.locator("#mfa-send")).to_be_visible()
    page.click("#mfa-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    code = receive()
    page.fill("#mfa-passcode", _wrong(code))
    page.click("#mfa-verify")
    expect(_toast(page, "password or code is incorrect")).to_be_visible()
    expect(page.locator("#mfa-enable")).to_have_count(0)
    page.fill("#mfa-passcode", code)
    page.click("#mfa-verify")
    expect(page.locator("#mfa-recovery-code")).to_have_text(re.compile(r"^[0-9a-f-]{36}$"))
    recovery = page.locator("#mfa-recovery-code").inner_text().strip()
    page.click("#mfa-enable")  # 'Enabled successfully', and a full load of /account
    expect(page).to_have_url(re.compile(r"/account/?$"))
    return recovery


def test_email_setup_then_sign_in_with_a_new_code_each_time(engine, organization, smtp, visit, page):
    address = f"{uuid.uuid4().hex[:8]}@codes.test"
    account = _new_user(engine, organization, email=address)
    _sign_in_form(visit, page, account)
    expect(page.locator("#account-name")).to_be_visible()

    visit("/mfa/setup?mfaType=email")
    masked = address[0] + "***" + address[7] + "@codes.test"
    expect(page.locator("#mfa-dest")).to_contain_text(masked)
    _set_up(visit, page, "email", lambda: code_in(smtp.wait_for(address).body))
    setup_mail = smtp.wait_for(address)
    assert setup_mail.login == (SMTP_USER, SMTP_PASSWORD) and setup_mail.message["Subject"] == "Your sign-in code"
    expect(page.locator("#mfa-enabled-email")).to_be_visible()
    expect(page.locator("#mfa-preferred-email")).to_be_visible()
    expect(page.locator("#mfa-enabled-sms")).to_have_count(0)
    expect(page.locator("#mfa-enabled-app")).to_have_count(0)

    # sign out, sign in: the password is not enough; the code goes out when asked for
    _sign_out(page)
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-passcode")).to_be_visible()
    expect(page.locator("#login-mfa-dest")).to_have_text(masked)
    expect(page.locator("#login-mfa-type")).to_have_count(0)  # one method: nothing to choose
    assert len(smtp.to(address)) == 1
    page.click("#login-mfa-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    code = code_in(smtp.wait_for(address, count=2).body)
    page.click("#login-mfa-submit")  # nothing typed
    expect(page.locator("#login-mfa-error")).to_have_text("missing passcode or recovery code")
    page.fill("#login-passcode", _wrong(code))
    page.click("#login-mfa-submit")
    expect(page.locator("#login-mfa-error")).to_contain_text("password or code is incorrect")
    expect(page.locator("#account-name")).to_have_count(0)
    page.fill("#login-passcode", code)
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)

    # the code worked once: the next sign-in refuses it
    _sign_out(page)
    _sign_in_form(visit, page, account)
    page.fill("#login-passcode", code)
    page.click("#login-mfa-submit")
    expect(page.locator("#login-mfa-error")).to_have_text("Code has not been sent yet!")
    expect(page.locator("#account-name")).to_have_count(0)
    visit("/account")
    expect(page).to_have_url(re.compile(r"/login"))


def test_sms_setup_then_sign_in_with_the_texted_code(engine, organization, gateway, visit, page):
    phone = _phone()
    account = _new_user(engine, organization, phone=phone, country_code="US")
    _sign_in_form(visit, page, account)
    expect(page.locator("#account-name")).to_be_visible()

    def texted(count: int = 1) -> str:
        return gateway.wait_for(f"+1{phone}", count=count).fields["code"]

    _set_up(visit, page, "sms", texted)
    expect(page.locator("#mfa-enabled-sms")).to_be_visible()
    expect(page.locator("#mfa-preferred-sms")).to_be_visible()

    _sign_out(page)
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-mfa-dest")).to_have_text(phone[:3] + "****" + phone[-4:])
    page.click("#login-mfa-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    code = texted(2)
    page.fill("#login-passcode", code)
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)


def test_set_preferred_decides_the_method_offered_first(engine, organization, smtp, gateway, visit, page):
    address, phone = f"{uuid.uuid4().hex[:8]}@codes.test", _phone()
    account = _new_user(engine, organization, email=address, phone=phone, country_code="US",
                        mfa_email_enabled=True, mfa_phone_enabled=True, preferred_mfa_type="email")
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-mfa-type")).to_have_text("Email")
    page.click("#login-mfa-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    page.fill("#login-passcode", code_in(smtp.wait_for(address).body))
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)

    visit("/account")
    expect(page.locator("#mfa-preferred-email")).to_be_visible()
    page.click("#mfa-prefer-sms")
    expect(_toast(page, "Successfully saved")).to_be_visible()
    expect(page.locator("#mfa-preferred-sms")).to_be_visible()
    expect(page.locator("#mfa-preferred-email")).to_have_count(0)
    expect(page.locator("#mfa-prefer-email")).to_be_visible()

    _sign_out(page)
    _sign_in_form(visit, page, account)
    expect(page.locator("#login-mfa-type")).to_have_text("SMS")
    expect(page.locator("#login-mfa-dest")).to_have_text(phone[:3] + "****" + phone[-4:])
    # the other method is still one choice away
    page.click("#login-mfa-type")
    page.get_by_role("option", name="Email").click()
    expect(page.locator("#login-mfa-dest")).to_have_text(address[0] + "***" + address[7] + "@codes.test")
    page.click("#login-mfa-type")
    page.get_by_role("option", name="SMS").click()
    expect(page.locator("#login-mfa-dest")).to_have_text(phone[:3] + "****" + phone[-4:])
    page.click("#login-mfa-send")
    expect(_toast(page, "Code sent")).to_be_visible()
    page.fill("#login-passcode", gateway.wait_for(f"+1{phone}").fields["code"])
    page.click("#login-mfa-submit")
    expect(page.locator("#account-name")).to_have_text(account.display_name)
