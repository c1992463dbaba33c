"""The application's signin methods Password (rules All, Non-LDAP, Hide password) and LDAP at
/api/login (signin/auth.py); the LDAP bind itself is in test_ldap.py."""

from __future__ import annotations

from fastapi.testclient import TestClient

from iam_console.api.app import api
from iam_console.signin import auth
from tests.conftest import reload_user
from tests.mail_world import mail_organization

PASSWORD = "Methods-pass-1"


def _methods(**rules: str) -> dict:
    return {"signin_methods": [{"name": name.replace("_", " "), "displayName": name, "rule": rule}
                               for name, rule in rules.items()]}


def _login(org: str, username: str, password: str, method: str = "Password") -> dict:
    return TestClient(api).post("/api/login", json={"organization": org, "username": username, "password": password,
                                                     "signinMethod": method}).json()


def test_hide_password_refuses_the_password_method(make_user):
    org = mail_organization(None, _methods(Password="Hide password", Verification_code="All"))
    make_user(owner=org.name, name="ann", password=PASSWORD)
    answer = _login(org.name, "ann", PASSWORD)
    assert answer == {**answer, "status": "error", "msg": auth.PASSWORD_OFF}
    assert reload_user(org.name, "ann").signin_wrong_times == 0  # refused before any check


def test_an_application_without_the_password_method_refuses_it(make_user):
    org = mail_organization(None, _methods(Verification_code="All"))
    make_user(owner=org.name, name="ann", password=PASSWORD)
    assert _login(org.name, "ann", PASSWORD)["msg"] == auth.PASSWORD_OFF


def test_rules_all_and_non_ldap_sign_in_an_account_with_its_own_password(make_user):
    for rule in ("All", "Non-LDAP"):
        org = mail_organization(None, _methods(Password=rule))
        make_user(owner=org.name, name="ann", password=PASSWORD)
        assert _login(org.name, "ann", PASSWORD)["status"] == "ok", rule
    # an application that lists no methods: its enable_password switch
    listed_none = mail_organization(None, {"signin_methods": []})
    make_user(owner=listed_none.name, name="ann", password=PASSWORD)
    assert _login(listed_none.name, "ann", PASSWORD)["status"] == "ok"


def test_the_ldap_method_must_be_listed(make_user):
    org = mail_organization(None, _methods(Password="All"))
    make_user(owner=org.name, name="ann", password=PASSWORD)
    assert _login(org.name, "ann", PASSWORD, "LDAP")["msg"] == auth.LDAP_OFF


def test_the_ldap_method_answers_an_account_not_from_ldap_as_a_wrong_password(make_user):
    org = mail_organization(None, _methods(Password="Hide password", LDAP="None"))
    make_user(owner=org.name, name="ann", password=PASSWORD)
    own_password = _login(org.name, "ann", PASSWORD, "LDAP")
    missing = _login(org.name, "nobody", PASSWORD, "LDAP")
    assert own_password["status"] == "error" and own_password["msg"] == missing["msg"] == \
        "password or code is incorrect, you have 4 remaining chances"
    assert reload_user(org.name, "ann").signin_wrong_times == 1


def test_an_unknown_method_is_refused(make_user):
    org = mail_organization(None, _methods(Password="All"))
    assert _login(org.name, "ann", PASSWORD, "Magic")["msg"] == "Unsupported signin method: Magic"
