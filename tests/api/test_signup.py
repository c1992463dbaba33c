"""Sign-up over HTTP (signin/signup.py): the account made under the application's signup
items, its email proven by a code that reached a real local SMTP server, invitation codes with
their quota, the ID rule, the captcha, an authorization request answered, and every refusal
writing nothing."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from tests.api.test_oauth import REDIRECT
from tests.mail_world import Org, mail_organization
from tests.sinks import code_in

PASSWORD = "Signup-pass-1"


def items(**rules) -> list[dict]:
    """The signup items of a usual application; `rules` overrides an item's (name with _ for space)."""
    rows = [("ID", False, False, "Random"), ("Username", True, True, "None"), ("Display name", True, True, "None"),
            ("Password", True, True, "None"), ("Confirm password", True, True, "None"),
            ("Email", True, True, "Normal"), ("Phone", True, False, "No verification"),
            ("Agreement", True, False, "None"), ("Signup button", True, False, "None")]
    found = []
    for name, visible, required, rule in rows:
        override = rules.get(name.replace(" ", "_"), {})
        found.append({"name": name, "visible": visible, "required": required, "prompted": False, "rule": rule,
                      **override})
    return found


@pytest.fixture(autouse=True)
def fresh_address_counts(database):
    with session_scope() as db:
        db.execute(sa.delete(m.Throttle).where(m.Throttle.key.like("signup%")))


def _org(smtp, extra_items: list | None = None, **application_fields) -> Org:
    fields = {"enable_sign_up": True, "signup_items": items() + (extra_items or []), **application_fields}
    return mail_organization(smtp, fields, password_options=["AtLeast8", "Aa123"])


def _send(client: TestClient, org: Org, email: str) -> dict:
    return client.post("/api/send-verification-code", data={
        "applicationId": f"admin/{org.application}", "method": "signup", "type": "email", "dest": email}).json()


def _form(org: Org, username: str, **fields) -> dict:
    return {"application": org.application, "organization": org.name, "username": username, "name": "New Person",
            "password": PASSWORD, "email": f"{username}@corp.test", **fields}


def _users(org: Org) -> list[m.User]:
    with session_scope() as db:
        return list(db.exec(select(m.User).where(m.User.owner == org.name)).all())


def _signed_up(client: TestClient, org: Org, smtp, name: str, **fields) -> dict:
    """Send a code to the new address, then sign up with it."""
    email = fields.pop("email", f"{name}@corp.test")
    sent = _send(client, org, email)
    assert sent["status"] == "ok", sent
    code = code_in(smtp.wait_for(email).body)
    return client.post("/api/signup", json=_form(org, name, email=email, emailCode=code, **fields)).json()


def test_a_visitor_signs_up_with_a_proven_email_and_is_signed_in(smtp):
    org = _org(smtp)
    visitor = TestClient(api)
    answer = _signed_up(visitor, org, smtp, "newcomer")
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/newcomer", answer
    me = visitor.get("/api/get-account").json()["data"]
    assert (me["name"], me["displayName"], me["email"], me["emailVerified"]) == (
        "newcomer", "New Person", "newcomer@corp.test", True)
    assert (me["signupApplication"], me["registerType"], me["registerSource"], me["isAdmin"]) == (
        org.application, "Application Signup", f"{org.name}/{org.application}", False)
    # the password works; the code worked once
    assert TestClient(api).post("/api/login", json={"organization": org.name, "username": "newcomer",
                                                     "password": PASSWORD}).json()["status"] == "ok"
    with session_scope() as db:
        record = db.exec(select(m.Record).where(m.Record.organization == org.name, m.Record.action == "signup")).one()
        assert record.user == f"{org.name}/newcomer" and PASSWORD not in (record.object or "")
        spent = db.exec(select(m.Verification).where(m.Verification.receiver == "newcomer@corp.test")).one()
        assert spent.is_used


@pytest.mark.parametrize(("fields", "message"), [
    ({"username": "a"}, "Username must have at least 2 characters"),
    ({"username": "9lives"}, "Username cannot start with a digit"),
    ({"username": "me@corp.test"}, "Username cannot be an email address"),
    ({"username": "two words"}, "Username cannot contain white spaces"),
    ({"password": "short1A"}, "The password must have at least 8 characters"),
    ({"password": "alllowercase1"}, "The password must contain at least one uppercase letter"),
    ({"email": "not-an-email"}, "Email is invalid"),
    ({"email": ""}, "Email cannot be empty"),
    ({"name": " "}, "DisplayName cannot be blank"),
    ({"phone": "123"}, "Phone number is invalid"),
    ({"emailCode": "000000"}, "Code has not been sent yet!"),
    ({"organization": "built-in"}, "does not sign up users of built-in"),
])
def test_bad_input_is_refused_and_nothing_is_written(smtp, fields, message):
    org = _org(smtp)
    answer = TestClient(api).post("/api/signup", json={**_form(org, "someone"), **fields}).json()
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert _users(org) == []


def test_sign_up_turned_off_is_said_clearly(smtp):
    org = _org(smtp, enable_sign_up=False)
    answer = TestClient(api).post("/api/signup", json=_form(org, "someone")).json()
    assert answer["msg"] == "The application does not allow to sign up new account"
    assert _send(TestClient(api), org, "x@corp.test")["msg"] == answer["msg"]
    assert _users(org) == []


def test_a_taken_name_or_address_is_refused(smtp):
    org = _org(smtp)
    assert _signed_up(TestClient(api), org, smtp, "first")["status"] == "ok"
    again = TestClient(api).post("/api/signup", json=_form(org, "first", email="other@corp.test",
                                                           emailCode="1")).json()
    assert again["msg"] == "Username already exists"
    assert _send(TestClient(api), org, "first@corp.test")["msg"] == "Email already exists"
    same_mail = TestClient(api).post("/api/signup", json=_form(org, "second", email="FIRST@corp.test")).json()
    assert same_mail["msg"] == "Email already exists"
    assert [u.name for u in _users(org)] == ["first"]


def test_no_verification_takes_the_email_as_typed(smtp):
    org = _org(smtp, signup_items=items(Email={"rule": "No verification"}))
    assert _send(TestClient(api), org, "a@corp.test")["status"] == "error"  # nothing to verify: no code is sent
    answer = TestClient(api).post("/api/signup", json=_form(org, "plain")).json()
    assert answer["status"] == "ok", answer
    assert _users(org)[0].email_verified is False


def test_invitation_codes_count_their_quota_and_place_the_user(smtp, make_user):
    invitation_item = {"name": "Invitation code", "visible": True, "required": True, "rule": "None"}
    org = _org(smtp, signup_items=[*items(Email={"rule": "No verification"}), invitation_item])
    with session_scope() as db:
        db.add(m.Group(owner=org.name, name="invited", display_name="Invited", type="Virtual"))
        db.add(m.Invitation(owner=org.name, name="spring", code="SPRING-24", quota=1, used_count=0,
                            application="All", signup_group=f"{org.name}/invited", state="Active"))
        db.add(m.Invitation(owner=org.name, name="paused", code="PAUSED-1", quota=5, state="Suspended"))
    visitor = TestClient(api)
    assert visitor.post("/api/signup", json=_form(org, "noinvite")).json()["msg"] == "Invitation code cannot be blank"
    assert visitor.post("/api/signup", json=_form(org, "wrong", invitationCode="NOPE")).json()["msg"] == \
        "Invitation code is invalid"
    assert visitor.post("/api/signup", json=_form(org, "paused", invitationCode="PAUSED-1")).json()["msg"] == \
        "Invitation code suspended"
    assert visitor.post("/api/signup", json=_form(org, "invited1", invitationCode="SPRING-24")).json()["status"] == "ok"
    user = _users(org)[0]
    assert (user.invitation, user.invitation_code, user.groups) == ("spring", "SPRING-24", [f"{org.name}/invited"])
    with session_scope() as db:
        used = db.exec(select(m.Invitation).where(m.Invitation.owner == org.name,
                                                  m.Invitation.name == "spring")).one().used_count
    assert used == 1
    exhausted = TestClient(api).post("/api/signup", json=_form(org, "invited2", invitationCode="SPRING-24")).json()
    assert exhausted["msg"] == "Invitation code exhausted"
    assert [u.name for u in _users(org)] == ["invited1"]


def test_an_invitation_naming_a_username_takes_that_username_only(smtp):
    invitation_item = {"name": "Invitation code", "visible": True, "required": False, "rule": "None"}
    org = _org(smtp, signup_items=[*items(Email={"rule": "No verification"}), invitation_item])
    with session_scope() as db:
        db.add(m.Invitation(owner=org.name, name="for-bea", code="BEA-1", quota=5, application="All",
                            username="bea", email="bea@corp.test", state="Active"))
    other = TestClient(api).post("/api/signup", json=_form(org, "carl", invitationCode="BEA-1")).json()
    assert other["msg"] == "Please register using the username corresponding to the invitation code"
    mail = TestClient(api).post("/api/signup", json=_form(org, "bea", email="b2@corp.test",
                                                          invitationCode="BEA-1")).json()
    assert mail["msg"] == "Please register using the email corresponding to the invitation code"
    assert _users(org) == []
    done = TestClient(api).post("/api/signup", json=_form(org, "bea", email="BEA@corp.test",
                                                          invitationCode="BEA-1")).json()
    assert done["status"] == "ok", done
    assert [(u.name, u.invitation) for u in _users(org)] == [("bea", "for-bea")]


def test_incremental_ids_and_a_hidden_username(smtp):
    org = _org(smtp, signup_items=items(ID={"rule": "Incremental"}, Username={"visible": False},
                                        Email={"rule": "No verification"}))
    for n in (1, 2):
        answer = TestClient(api).post("/api/signup", json=_form(org, "", email=f"u{n}@corp.test")).json()
        assert answer["data"] == f"{org.name}/{n}", answer  # no username item: the name is the id
    assert sorted(u.uuid for u in _users(org)) == ["1", "2"]


def test_first_and_last_name_make_the_display_name(smtp):
    org = _org(smtp, signup_items=items(Display_name={"rule": "First, last"}, Email={"rule": "No verification"}))
    missing = TestClient(api).post("/api/signup", json=_form(org, "ada", firstName="Ada")).json()
    assert missing["msg"] == "LastName cannot be blank"
    assert TestClient(api).post("/api/signup", json=_form(org, "ada", firstName="Ada",
                                                          lastName="Lovelace")).json()["status"] == "ok"
    user = _users(org)[0]
    assert (user.display_name, user.first_name, user.last_name) == ("Ada Lovelace", "Ada", "Lovelace")


def test_a_custom_item_is_checked_by_its_regex_and_kept_in_properties(smtp):
    custom = {"name": "Employee number", "visible": True, "required": True, "type": "Input", "label": "Employee #",
              "regex": "E[0-9]{4}", "rule": "None"}
    org = _org(smtp, [custom], signup_items=[*items(Email={"rule": "No verification"}), custom])
    missing = TestClient(api).post("/api/signup", json=_form(org, "worker")).json()
    assert missing["status"] == "error"
    wrong = TestClient(api).post("/api/signup", json=_form(org, "worker", **{"Employee number": "12"})).json()
    assert "doesn't match the signup item regex" in wrong["msg"]
    ok = TestClient(api).post("/api/signup", json=_form(org, "worker", **{"Employee number": "E1234"})).json()
    assert ok["status"] == "ok", ok
    assert _users(org)[0].properties == {"Employee number": "E1234"}


def test_an_always_captcha_is_required(smtp):
    org = _org(smtp, signup_items=items(Email={"rule": "No verification"}))
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.name == org.application)).one()
        app.providers = [*app.providers, {"name": "provider_captcha_default", "rule": "Always"}]
        db.add(app)
    answer = TestClient(api).post("/api/signup", json=_form(org, "robot")).json()
    assert answer["msg"] == "Turing test failed."
    assert _users(org) == []


def test_signing_up_through_an_authorization_request_answers_its_code(smtp):
    org = _org(smtp, signup_items=items(Email={"rule": "No verification"}), redirect_uris=[REDIRECT],
               grant_types=["authorization_code"])
    with session_scope() as db:
        client_id = db.exec(select(m.Application.client_id).where(m.Application.name == org.application)).one()
    answer = TestClient(api).post("/api/signup", params={
        "clientId": client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid", "state": "s1"},
        json=_form(org, "oauthed")).json()
    assert answer["status"] == "ok" and answer["data2"] == f"{REDIRECT}?code={answer['data']}&state=s1", answer


def test_bodies_of_the_wrong_shape_are_refused(smtp):
    org = _org(smtp)
    for body in ([], {"application": org.application, "username": 5}, {"application": "no-such-app"}):
        answer = TestClient(api).post("/api/signup", json=body).json()
        assert answer["status"] == "error", body
    assert _users(org) == []


def test_sign_ups_from_one_address_are_limited(smtp):
    org = _org(smtp, signup_items=items(Email={"rule": "No verification"}))
    visitor = TestClient(api)
    answers = [visitor.post("/api/signup", json=_form(org, "a")).json()["msg"] for _ in range(21)]
    assert answers[:20] == ["Username must have at least 2 characters"] * 20
    assert answers[20].startswith("Too many requests from this address, please wait for "), answers[20]


def test_code_sends_from_one_address_are_limited_and_say_so(smtp, monkeypatch):
    """Issue 26: the send limit answered the password lockout's message."""
    from iam_console.signin import signup

    monkeypatch.setattr(signup, "SENDS_PER_ADDRESS", (1, 600))
    org = _org(smtp)
    visitor = TestClient(api)
    assert _send(visitor, org, "first-code@corp.test")["status"] == "ok"
    refused = _send(visitor, org, "second-code@corp.test")
    assert refused["msg"].startswith("Too many codes were asked for from this address, please wait for "), refused


def test_items_set_through_the_api_leave_the_form_signing_up(smtp, admin):
    """Issue 26: the Signup button that settling appends was a required Input, so once the items
    were set through the API every sign-up answered "Please input your Signup button!". Items that
    take no value (the button, the providers, a Text item) are never required."""
    org = _org(smtp, signup_items=items(Email={"rule": "No verification"}))
    ident = {"id": f"admin/{org.application}"}
    application = admin.get("/api/get-application", params=ident).json()["data"]
    sent = [item for item in items(Email={"rule": "No verification"}) if item["name"] != "Signup button"]
    sent += [{"name": "Providers", "visible": True, "required": True, "type": "Input", "rule": "big"},
             {"name": "Text 1", "visible": True, "required": True, "type": "Input", "label": "<p>Welcome</p>"}]
    saved = admin.post("/api/update-application", params=ident, json={**application, "signupItems": sent}).json()
    assert saved["status"] == "ok", saved
    stored = {i["name"]: i for i in admin.get("/api/get-application", params=ident).json()["data"]["signupItems"]}
    assert [stored[n]["required"] for n in ("Signup button", "Providers", "Text 1")] == [False, False, False]
    answer = TestClient(api).post("/api/signup", json=_form(org, "viaapi")).json()
    assert answer["status"] == "ok" and answer["data"] == f"{org.name}/viaapi", answer
    # an application stored before the fix, with the required Input button, signs up too
    stored_before = _org(smtp, signup_items=items(Email={"rule": "No verification"}, Signup_button={
        "required": True, "type": "Input"}))
    answer = TestClient(api).post("/api/signup", json=_form(stored_before, "stored")).json()
    assert answer["status"] == "ok", answer
