"""Multi-factor authentication through the HTTP API (signin/mfa.py, signin/auth.py):
setup of each type, who may do what, the second step of every sign-in path, recovery
codes, replayed and expired codes, and the limits on code checks. Email and SMS codes are
read from a real local SMTP server and HTTP SMS gateway (tests/sinks.py)."""

from __future__ import annotations

import time
import uuid
from datetime import timedelta

import pyotp
import pytest
from fastapi.testclient import TestClient
from sqlmodel import delete, select, update

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.models.base import utcnow
from iam_console.signin import auth, mfa
from tests.api.conftest import sign_in
from tests.api.sdk_server import api_server, sdk  # noqa: F401
from tests.api.test_oauth import REDIRECT, make_app
from tests.conftest import reload_user, unique
from tests.sinks import HttpSink, SmtpSink, code_in

PASSWORD = "s3cret-pass"
SMTP_USER, SMTP_PASSWORD = "mailer@corp.test", "smtp-secret"
FROZEN = "You have entered the wrong password or code too many times"


@pytest.fixture(autouse=True)
def fresh_limits(database):
    """Each test starts with no code checks counted (the client address is shared)."""
    with session_scope() as db:
        db.exec(delete(m.Throttle))


@pytest.fixture(scope="module")
def smtp():
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        yield sink


@pytest.fixture(scope="module")
def gateway():
    with HttpSink() as sink:
        yield sink


@pytest.fixture
def org(database, smtp, gateway) -> str:
    """An organization whose default application lists its own SMTP and SMS providers (the sinks)."""
    name, application = unique("morg"), unique("mapp")
    with session_scope() as db:
        db.add(m.Organization(owner="admin", name=name, display_name=f"Org {name}", password_type="argon2id",
                              default_application=application, country_codes=["US"]))
        db.add(m.Application(owner="admin", name=application, organization=name, enable_password=True,
                             client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                             providers=[{"name": f"{name}-mail", "rule": "All"},
                                        {"name": f"{name}-sms", "rule": "All"}]))
        db.add(m.Provider(owner=name, name=f"{name}-mail", category="Email", type="SMTP", host="127.0.0.1",
                          port=smtp.port, disable_ssl=True, client_id=SMTP_USER, client_secret=SMTP_PASSWORD,
                          title="Your code", content="<p>Your code is %s.</p>"))
        db.add(m.Provider(owner=name, name=f"{name}-sms", category="SMS", type="Custom HTTP SMS",
                          endpoint=f"{gateway.url}/send", method="POST", title="message",
                          template_code="Your code is %s"))
    return name


def _user(make_user, org: str, **fields) -> m.User:
    return make_user(owner=org, password=PASSWORD, **fields)


def _form(user: m.User, mfa_type: str, **extra) -> dict:
    return {"owner": user.owner, "name": user.name, "mfaType": mfa_type, **extra}


def _post(client: TestClient, path: str, **form) -> dict:
    return client.post(path, data=form).json()


def enable_app(client: TestClient, user: m.User) -> tuple[str, str]:
    """Set the app type up through the API; (the TOTP secret, the recovery code)."""
    started = _post(client, "/api/mfa/setup/initiate", **_form(user, "app"))
    assert started["status"] == "ok", started
    secret, recovery = started["data"]["secret"], started["data"]["recoveryCodes"][0]
    verified = _post(client, "/api/mfa/setup/verify", **_form(user, "app", secret=secret,
                                                                passcode=pyotp.TOTP(secret).now()))
    assert verified["status"] == "ok", verified
    enabled = _post(client, "/api/mfa/setup/enable", **_form(user, "app", secret=secret, recoveryCodes=recovery))
    assert enabled["status"] == "ok", enabled
    return secret, recovery


def _step_code(secret: str, offset: int = 0) -> str:
    """A code of a time step not used yet (the current one was spent by the setup)."""
    return pyotp.TOTP(secret).at(time.time() + offset * 30)


def first_step(user: m.User, **query) -> tuple[TestClient, dict]:
    client = TestClient(api)
    body = client.post("/api/login", params=query, json={"organization": user.owner, "username": user.name,
                                                          "password": PASSWORD}).json()
    return client, body


# --- setup ---

def test_app_setup_shows_the_secret_once_and_stores_only_hashes(make_user, org):
    user = _user(make_user, org)
    client = sign_in(org, user.name, PASSWORD)
    started = _post(client, "/api/mfa/setup/initiate", **_form(user, "app"))["data"]
    assert started["mfaType"] == "app" and not started["enabled"]
    assert started["url"].startswith("otpauth://totp/") and f"secret={started['secret']}" in started["url"]
    assert len(started["recoveryCodes"]) == 1
    # enable before a code has proven the secret: refused, nothing changes
    assert _post(client, "/api/mfa/setup/enable", **_form(user, "app"))["msg"] == mfa.NOT_VERIFIED
    # a secret other than the one issued is refused, whatever its code
    other = pyotp.random_base32()
    refused = _post(client, "/api/mfa/setup/verify", **_form(user, "app", secret=other,
                                                              passcode=pyotp.TOTP(other).now()))
    assert refused["msg"] == "The secret is not the one issued for this setup"
    assert _post(client, "/api/mfa/setup/verify", **_form(user, "app", passcode="000000"))["msg"] == mfa.WRONG_CODE
    assert not reload_user(org, user.name).totp_secret

    secret, recovery = enable_app(client, user)
    stored = reload_user(org, user.name)
    assert stored.totp_secret == secret and stored.preferred_mfa_type == "app"
    assert stored.recovery_codes == [mfa.hash_recovery_code(recovery)] and recovery not in str(stored.recovery_codes)
    account = client.get("/api/get-account").json()["data"]
    assert account["totpSecret"] == "***" and account["recoveryCodes"] == []
    assert {p["mfaType"]: (p["enabled"], p["isPreferred"]) for p in account["multiFactorAuths"]} == {
        "sms": (False, False), "email": (False, False), "app": (True, True)}
    assert all("secret" not in p for p in account["multiFactorAuths"])
    # one method per type: a second setup of the app type is refused
    assert "already enabled" in _post(client, "/api/mfa/setup/initiate", **_form(user, "app"))["msg"]


def test_unknown_type_and_missing_fields(make_user, org):
    user = _user(make_user, org)
    client = sign_in(org, user.name, PASSWORD)
    assert _post(client, "/api/mfa/setup/initiate", **_form(user, "fax"))["msg"] == \
        "Invalid multi-factor authentication type"
    assert _post(client, "/api/mfa/setup/verify", **_form(user, "app"))["msg"] == "missing auth type or passcode"
    assert _post(client, "/api/mfa/setup/initiate", owner=org, mfaType="app")["msg"] == "Bad Request"
    assert TestClient(api).post("/api/mfa/setup/initiate", data=_form(user, "app")).json()["msg"] == \
        "Please login first"


def test_email_setup_needs_an_email_and_a_code_sent_there(make_user, org, smtp):
    bare = _user(make_user, org)
    client = sign_in(org, bare.name, PASSWORD)
    assert _post(client, "/api/mfa/setup/initiate", **_form(bare, "email"))["msg"] == "Please input your Email!"
    assert _post(client, "/api/mfa/setup/initiate", **_form(bare, "sms"))["msg"] == "Please input your phone number!"

    user = _user(make_user, org, email=f"{unique('m')}@corp.test")
    client = sign_in(org, user.name, PASSWORD)
    started = _post(client, "/api/mfa/setup/initiate", **_form(user, "email"))["data"]
    assert started["secret"].endswith("@corp.test") and "***" in started["secret"]
    # the code goes to the account's own address, whatever dest says
    sent = _post(client, "/api/send-verification-code", dest="attacker@evil.test", type="email", method="mfaSetup")
    assert sent["status"] == "ok", sent
    message = smtp.wait_for(user.email).body
    assert _post(client, "/api/mfa/setup/verify", **_form(user, "email", passcode=code_in(message)))["status"] == "ok"
    assert _post(client, "/api/mfa/setup/enable", **_form(user, "email"))["status"] == "ok"
    assert reload_user(org, user.name).mfa_email_enabled
    # the code worked once
    replay = _post(client, "/api/mfa/setup/verify", **_form(user, "email", passcode=code_in(message)))
    assert replay["status"] == "error"


def test_admins_enable_email_or_sms_for_others_but_never_set_anything_up(make_user, org):
    boss = _user(make_user, org, is_admin=True)
    admin = sign_in(org, boss.name, PASSWORD)
    bare = _user(make_user, org)
    assert _post(admin, "/api/mfa/setup/enable", **_form(bare, "email"))["msg"] == "Please input your Email!"
    assert _post(admin, "/api/mfa/setup/enable", **_form(bare, "sms"))["msg"] == "Please input your phone number!"
    user = _user(make_user, org, email=f"{unique('m')}@corp.test", phone="2025550123", country_code="US")
    assert "cannot enable the app type" in _post(admin, "/api/mfa/setup/enable", **_form(user, "app"))["msg"]
    assert "Only the user" in _post(admin, "/api/mfa/setup/initiate", **_form(user, "email"))["msg"]
    assert "Only the user" in _post(admin, "/api/mfa/setup/verify", **_form(user, "app", passcode="123456"))["msg"]
    assert _post(admin, "/api/mfa/setup/enable", **_form(user, "email"))["status"] == "ok"
    assert _post(admin, "/api/mfa/setup/enable", **_form(user, "sms"))["status"] == "ok"
    stored = reload_user(org, user.name)
    assert stored.mfa_email_enabled and stored.mfa_phone_enabled and stored.preferred_mfa_type == "email"
    assert stored.recovery_codes == []  # an admin's enable shows no recovery code, so none is kept
    # at most one preferred
    props = _post(admin, "/api/set-preferred-mfa", **_form(user, "sms"))["data"]
    assert [p["mfaType"] for p in props if p["isPreferred"]] == ["sms"]
    assert "not enabled" in _post(admin, "/api/set-preferred-mfa", **_form(user, "app"))["msg"]
    # masked addresses in the user JSON
    sms = next(p for p in props if p["mfaType"] == "sms")
    assert sms["secret"] != user.phone and sms["secret"].endswith(user.phone[-4:])
    # an ordinary user cannot touch another account's MFA
    other = sign_in(org, _user(make_user, org).name, PASSWORD)
    assert _post(other, "/api/delete-mfa", owner=org, name=user.name)["msg"] == "Unauthorized operation"
    assert _post(other, "/api/set-preferred-mfa", **_form(user, "email"))["msg"] == "Unauthorized operation"
    # Disable removes all
    cleared = admin.post("/api/delete-mfa", params={"owner": org, "name": user.name}).json()
    assert cleared["status"] == "ok" and not any(p["enabled"] for p in cleared["data"])
    stored = reload_user(org, user.name)
    assert not (stored.mfa_email_enabled or stored.mfa_phone_enabled or stored.totp_secret
                or stored.preferred_mfa_type or stored.recovery_codes)


def test_an_admin_of_another_organization_gets_nothing(make_user, make_org, org):
    user = _user(make_user, org, email=f"{unique('m')}@corp.test")
    foreign = make_org()
    stranger = sign_in(foreign.name, _user(make_user, foreign.name, is_admin=True).name, PASSWORD)
    for path in ("/api/mfa/setup/enable", "/api/set-preferred-mfa", "/api/delete-mfa"):
        assert _post(stranger, path, **_form(user, "email"))["msg"] == "Unauthorized operation"
    assert not reload_user(org, user.name).mfa_email_enabled


# --- sign-in ---

def test_password_sign_in_owes_the_second_factor(make_user, org):
    user = _user(make_user, org)
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    client, body = first_step(user)
    assert body["status"] == "ok" and body["data"] == "NextMfa"
    assert [p["mfaType"] for p in body["data2"]] == ["app"] and "secret" not in body["data2"][0]
    assert "iam_session" not in client.cookies and client.cookies.get("iam_mfa")
    assert client.get("/api/get-account").json()["msg"] == "Please login first"
    # a wrong code is refused and counts as a failed sign-in
    wrong = client.post("/api/login", json={"passcode": "000000", "mfaType": "app"}).json()
    assert wrong["msg"] == "password or code is incorrect, you have 4 remaining chances"
    assert client.get("/api/get-account").json()["status"] == "error"
    done = client.post("/api/login", json={"passcode": _step_code(secret, 1), "mfaType": "app"}).json()
    assert done["status"] == "ok" and done["data"] == f"{org}/{user.name}", done
    assert client.get("/api/get-account").json()["data"]["name"] == user.name
    # the pending sign-in is gone with its use
    again = client.post("/api/login", json={"passcode": _step_code(secret, -1), "mfaType": "app"}).json()
    assert again["msg"] == "The sign-in has expired, please sign in again"


def test_an_empty_second_step_is_told_so_and_costs_no_attempt(make_user, org):
    user = _user(make_user, org)
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    client, _ = first_step(user)
    for _ in range(auth.MAX_PENDING_ATTEMPTS + 1):  # more than the pending sign-in's tries
        for body in ({"passcode": "", "mfaType": "app"}, {"recoveryCode": ""}, {"passcode": "  "}):
            assert client.post("/api/login", json=body).json()["msg"] == "missing passcode or recovery code"
    done = client.post("/api/login", json={"passcode": _step_code(secret, 1), "mfaType": "app"}).json()
    assert done["status"] == "ok", done
    # without a pending sign-in, an empty second step is no first step either
    assert TestClient(api).post("/api/login", json={"passcode": ""}).json()["msg"] == auth.PENDING_EXPIRED


def test_a_totp_code_works_once(make_user, org):
    user = _user(make_user, org)
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    code = _step_code(secret, 1)
    first, _ = first_step(user)
    assert first.post("/api/login", json={"passcode": code, "mfaType": "app"}).json()["status"] == "ok"
    second, _ = first_step(user)
    replay = second.post("/api/login", json={"passcode": code, "mfaType": "app"}).json()
    assert replay["msg"] == "This code has already been used, please wait for the next one"
    assert second.get("/api/get-account").json()["status"] == "error"


def test_a_recovery_code_works_once(make_user, org):
    user = _user(make_user, org)
    _, recovery = enable_app(sign_in(org, user.name, PASSWORD), user)
    client, _ = first_step(user)
    assert client.post("/api/login", json={"recoveryCode": recovery}).json()["status"] == "ok"
    assert reload_user(org, user.name).recovery_codes == []
    client, _ = first_step(user)
    assert client.post("/api/login", json={"recoveryCode": recovery}).json()["status"] == "error"
    assert client.get("/api/get-account").json()["status"] == "error"


def test_an_expired_pending_sign_in_is_refused(make_user, org):
    user = _user(make_user, org)
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    client, _ = first_step(user)
    with session_scope() as db:
        db.exec(update(m.PendingSignIn).where(m.PendingSignIn.owner == org, m.PendingSignIn.user_name == user.name)
                .values(expires_at=utcnow() - timedelta(seconds=1)))
    body = client.post("/api/login", json={"passcode": _step_code(secret, 1), "mfaType": "app"}).json()
    assert body["msg"] == "The sign-in has expired, please sign in again"
    # and a forged cookie opens nothing
    client.cookies.set("iam_mfa", "forged", path="/api/")
    assert client.post("/api/login", json={"recoveryCode": "x"}).json()["msg"] == \
        "The sign-in has expired, please sign in again"


def test_a_pending_sign_in_allows_five_tries(make_user, org):
    user = _user(make_user, org)
    with session_scope() as db:  # a generous failed sign-in limit: the pending sign-in's own limit shows
        db.exec(update(m.Application).where(m.Application.organization == org).values(failed_signin_limit=50))
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    client, _ = first_step(user)
    for _ in range(5):
        assert "incorrect" in client.post("/api/login", json={"passcode": "000000", "mfaType": "app"}).json()["msg"]
    body = client.post("/api/login", json={"passcode": _step_code(secret, 1), "mfaType": "app"}).json()
    assert body["msg"] == "The sign-in has expired, please sign in again"


def test_code_checks_are_limited_per_account_and_per_address(make_user, org):
    user = _user(make_user, org)
    with session_scope() as db:
        db.exec(update(m.Application).where(m.Application.organization == org).values(failed_signin_limit=100))
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    for _ in range(mfa.CHECKS_PER_ACCOUNT - 1):  # the setup's verify counted one
        client, _ = first_step(user)
        assert "incorrect" in client.post("/api/login", json={"passcode": "000000"}).json()["msg"]
    client, _ = first_step(user)
    # the right code, past the limit: refused before it is compared
    body = client.post("/api/login", json={"passcode": _step_code(secret, 1)}).json()
    assert body["msg"].startswith(FROZEN)
    # per client address: other accounts from the same address
    with session_scope() as db:
        db.exec(delete(m.Throttle))
    last = _user(make_user, org)
    last_client = sign_in(org, last.name, PASSWORD)
    started = _post(last_client, "/api/mfa/setup/initiate", **_form(last, "app"))["data"]
    with session_scope() as db:  # the checks of as many other accounts from the test client's address
        for index in range(mfa.CHECKS_PER_ADDRESS):
            mfa.limit_checks(db, m.User(owner=org, name=f"other-{index}"), "testclient")
    body = _post(last_client, "/api/mfa/setup/verify",
                 **_form(last, "app", passcode=pyotp.TOTP(started["secret"]).now()))
    assert body["msg"].startswith(FROZEN)
    assert not reload_user(org, last.name).totp_secret


def test_email_second_factor_at_sign_in(make_user, org, smtp):
    user = _user(make_user, org, email=f"{unique('m')}@corp.test")
    boss = sign_in(org, _user(make_user, org, is_admin=True).name, PASSWORD)
    assert _post(boss, "/api/mfa/setup/enable", **_form(user, "email"))["status"] == "ok"
    client, body = first_step(user)
    assert body["data"] == "NextMfa" and body["data2"][0]["mfaType"] == "email"
    # no pending sign-in, no code
    assert _post(TestClient(api), "/api/send-verification-code", type="email", method="mfaAuth")["msg"] == \
        "The sign-in has expired, please sign in again"
    assert _post(client, "/api/send-verification-code", type="email", method="mfaAuth")["status"] == "ok"
    code = code_in(smtp.wait_for(user.email).body)
    assert client.post("/api/login", json={"passcode": code, "mfaType": "email"}).json()["status"] == "ok"
    assert client.get("/api/get-account").json()["data"]["name"] == user.name


def test_sms_second_factor_at_sign_in(make_user, org, gateway):
    number = f"202555{uuid.uuid4().int % 10000:04d}"
    user = _user(make_user, org, phone=number, country_code="US")
    boss = sign_in(org, _user(make_user, org, is_admin=True).name, PASSWORD)
    assert _post(boss, "/api/mfa/setup/enable", **_form(user, "sms"))["status"] == "ok"
    client, body = first_step(user)
    assert body["data2"][0]["mfaType"] == "sms"
    assert _post(client, "/api/send-verification-code", type="phone", method="mfaAuth")["status"] == "ok"
    code = gateway.wait_for(f"+1{number}").fields["code"]
    assert client.post("/api/login", json={"passcode": "999999" if code != "999999" else "111111",
                                            "mfaType": "sms"}).json()["status"] == "error"
    assert client.post("/api/login", json={"passcode": code, "mfaType": "sms"}).json()["status"] == "ok"


def test_the_authorize_sign_in_owes_it_too(make_user, org):
    user = _user(make_user, org)
    secret, _ = enable_app(sign_in(org, user.name, PASSWORD), user)
    app = make_app(org, redirect_uris=[REDIRECT])
    query = {"clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
             "state": "st"}
    client, body = first_step(user, **query)
    assert body["data"] == "NextMfa" and body["data2"] is not None
    done = client.post("/api/login", params=query, json={"passcode": _step_code(secret, 1), "mfaType": "app"}).json()
    assert done["status"] == "ok" and done["data2"].startswith(f"{REDIRECT}?code="), done
    # a pending sign-in for the console cannot be completed into another application's code
    client, _ = first_step(user)
    other = client.post("/api/login", params=query, json={"passcode": _step_code(secret, -1)}).json()
    assert other["msg"] == "The sign-in in progress is for another application"


def test_the_password_grant_is_refused_for_mfa_accounts(make_user, org):
    user = _user(make_user, org)
    app = make_app(org, grant_types=["password"], redirect_uris=[REDIRECT])
    grant = {"grant_type": "password", "client_id": app.client_id, "client_secret": app.client_secret,
             "username": user.name, "password": PASSWORD}
    assert "access_token" in TestClient(api).post("/api/login/oauth/access_token", data=grant).json()
    enable_app(sign_in(org, user.name, PASSWORD), user)
    refused = TestClient(api).post("/api/login/oauth/access_token", data=grant)
    assert refused.status_code == 400
    body = refused.json()
    assert body["error"] == "invalid_grant" and "multi-factor" in body["error_description"]
    assert "access_token" not in body


def test_no_session_is_created_anywhere_else(make_user, org):
    """Every AuthSession row comes from auth.complete_sign_in: a second-factor account's
    first step leaves none behind."""
    user = _user(make_user, org)
    enable_app(sign_in(org, user.name, PASSWORD), user)
    with session_scope() as db:
        db.exec(delete(m.AuthSession).where(m.AuthSession.owner == org, m.AuthSession.user_name == user.name))
    first_step(user)
    with session_scope() as db:
        assert db.exec(select(m.AuthSession).where(m.AuthSession.owner == org,
                                                   m.AuthSession.user_name == user.name)).first() is None


def test_required_and_prompt_rules(make_user, org):
    with session_scope() as db:
        organization = db.exec(select(m.Organization).where(m.Organization.name == org)).one()
        organization.mfa_items = [{"name": "App", "rule": "Required"}, {"name": "Email", "rule": "Prompt"}]
        db.add(organization)
    user = _user(make_user, org)
    with session_scope() as db:
        organization = db.exec(select(m.Organization).where(m.Organization.name == org)).one()
        stored = db.exec(select(m.User).where(m.User.owner == org, m.User.name == user.name)).one()
        assert mfa.rule_for(organization, stored) == "Required"
        organization.mfa_items = [{"name": "Email", "rule": "Prompt"}]
        assert mfa.rule_for(organization, stored) == "Prompt"
        stored.totp_secret = pyotp.random_base32()
        assert mfa.rule_for(organization, stored) == ""  # any enabled method meets the rule
        organization.mfa_items = [{"name": "App", "rule": "Optional"}]
        stored.totp_secret = ""
        assert mfa.rule_for(organization, stored) == ""


def test_qr_code_limits():
    assert mfa.qr_svg("otpauth://totp/a?secret=ABC").lstrip().startswith("<?xml")
    with pytest.raises(mfa.ServiceError, match="QR code is too large"):
        mfa.qr_svg("otpauth://totp/a?secret=" + "A" * 2000)
    with pytest.raises(mfa.ServiceError, match="Access token is empty"):
        mfa.qr_svg("")


# --- the official Python SDK as a real client (application credentials: an admin's rights) ---

def test_python_sdk_mfa_calls(sdk, make_user, org):  # noqa: F811
    user = _user(make_user, org, email=f"{unique('m')}@corp.test", phone=f"202555{uuid.uuid4().int % 10000:04d}",
                 country_code="US")
    # an application acts as an admin: it may not set anything up for a user, nor enable the app type
    with pytest.raises(Exception, match="Only the user may set up"):
        sdk.mfa_initiate(org, "app", user.name)
    with pytest.raises(Exception, match="Only the user may set up"):
        sdk.mfa_verify(org, "app", user.name, "SECRET", "123456")
    with pytest.raises(Exception, match="cannot enable the app type"):
        sdk.mfa_enable(org, "app", user.name, "SECRET")
    assert sdk.mfa_enable(org, "email", user.name, "")["status"] == "ok"
    assert sdk.mfa_enable(org, "sms", user.name, "")["status"] == "ok"
    preferred = sdk.mfa_set_preferred(org, "sms", user.name)["data"]
    assert [p["mfaType"] for p in preferred if p["isPreferred"]] == ["sms"]
    assert reload_user(org, user.name).preferred_mfa_type == "sms"
    cleared = sdk.mfa_delete(org, user.name)["data"]
    assert not any(p["enabled"] for p in cleared)
    stored = reload_user(org, user.name)
    assert not (stored.mfa_email_enabled or stored.mfa_phone_enabled or stored.preferred_mfa_type)


def test_an_application_gets_no_code_until_a_required_mfa_is_set_up(make_user, org):
    with session_scope() as db:
        organization = db.exec(select(m.Organization).where(m.Organization.name == org)).one()
        organization.mfa_items = [{"name": "App", "rule": "Required"}]
        db.add(organization)
    user = _user(make_user, org)
    app = make_app(org, redirect_uris=[REDIRECT])
    query = {"clientId": app.client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid",
             "state": "st"}
    client, body = first_step(user, **query)
    assert body["status"] == "ok" and body["data2"].startswith("/mfa/setup?mfaType=app&from=%2Flogin%2Foauth%2F")
    with session_scope() as db:
        assert db.exec(select(m.Token).where(m.Token.application == app.name)).first() is None
    # signed in to the console (to set it up), and once it is, the application gets its code
    enable_app(client, user)
    client, body = first_step(user, **query)
    assert body["data"] == "NextMfa"
