"""The application screen's declared rules without a browser: the row tables' cells (what a
chosen name sets, which cells a row's provider or item allows), the list's two provider columns and
the form's own conditions (the browser behaviour is tests/e2e/test_applications.py)."""

from __future__ import annotations

from iam_console.ui import pages  # noqa: F401  (declares the screens)
from iam_console.ui.screens import SCREENS
from iam_console.ui.state.listing import _display

SCREEN = SCREENS["application"]


def _field(key: str):
    return next(f for f in SCREEN.fields if f.key == key)


def _cell(field: str, key: str):
    return next(c for c in _field(field).columns if c.key == key)


def test_a_signin_method_is_named_after_itself_and_one_stays():
    name = _cell("signinMethods", "name")
    assert name.then("Verification code") == {"displayName": "Verification code", "rule": "All"}
    assert name.then("LDAP") == {"displayName": "LDAP", "rule": "None"}
    rule = _cell("signinMethods", "rule")
    assert tuple(rule.options_for({"name": "Password"})) == ("All", "Non-LDAP", "Hide password")
    assert tuple(rule.options_for({"name": "Verification code"})) == ("All", "Email only", "Phone only")
    assert _field("signinMethods").min_rows == 1
    every = [{"name": n} for n in ("Password", "Verification code", "WebAuthn", "LDAP", "Face ID")]
    assert _field("signinMethods").new_row(every) is None  # the five are there: Add is disabled
    assert _field("signinMethods").new_row(every[:2])["name"] == "WebAuthn"


def test_a_providers_row_follows_its_provider():
    email = {"name": "mail", "rule": "All", "provider": {"category": "Email", "type": "Default"}}
    github = {"name": "gh", "rule": "None", "provider": {"category": "OAuth", "type": "GitHub"}}
    google = {"name": "g", "rule": "OneTap", "provider": {"category": "OAuth", "type": "Google"}}
    unknown = {"name": "x", "rule": "None"}  # stored before its kind was: nothing is held back
    sign_in = _cell("providers", "canSignIn")
    assert sign_in.disabled_when(email) and not sign_in.disabled_when(github) and not sign_in.disabled_when(unknown)
    rule = _cell("providers", "rule")
    assert rule.options_for(email)[0] == "All" and rule.options_for(google) == ["Default", "OneTap"]
    assert rule.options_for({**google, "rule": "One Tap"}) == ["One Tap", "Default", "OneTap"]  # the former value kept
    assert dict(rule.labels) == {"OneTap": "One Tap"}
    codes = _cell("providers", "countryCodes")
    assert codes.hidden_when(email) and not codes.hidden_when({"provider": {"category": "SMS", "type": "x"}})
    assert _cell("providers", "canSignUp").shown_when({}, {"enableSignUp": False}) is False


def test_the_signup_items_rules():
    visible, required = _cell("signupItems", "visible"), _cell("signupItems", "required")
    assert visible.hidden_when({"name": "ID"}) and not visible.hidden_when({"name": "Email"})
    assert visible.then(False) == {"required": False} and visible.then(True) == {"required": True}
    assert required.disabled_when({"name": "Password"})
    assert required.hidden_when({"name": "Signup button"}) and required.hidden_when({"name": "Providers"})
    assert _field("signupItems").fixed_row({"name": "Signup button"})
    assert _cell("signupItems", "options").disabled_when({"type": "Input"})
    assert not _cell("signupItems", "options").disabled_when({"type": "Multiple Choices"})
    assert tuple(_cell("signupItems", "rule").options_for({"name": "Agreement"})) == (
        "None", "Signin", "Signin (Default True)")
    assert _cell("signupItems", "name").then("Providers") == {"rule": "big"}


def test_the_form_conditions():
    auto = _field("enableAutoSignin")
    assert auto.check({}, {"enableAutoSignin": True, "enableSigninSession": False}).startswith("Please enable")
    assert auto.check({}, {"enableAutoSignin": True, "enableSigninSession": True}) == ""
    assert _field("enableSigninSession").then(False) == {"enableAutoSignin": False}
    assert _field("tokenFields").enabled_when({"tokenFormat": "JWT-Custom"}, {}) is True
    assert _field("tokenFields").enabled_when({"tokenFormat": "JWT"}, {}) is False
    assert _field("formSideHtml").shown_when({"formOffset": "4"}, {}) is True


def test_the_providers_in_two_columns_of_links():
    record = {"owner": "admin", "name": "app", "organization": "acme", "createdTime": "", "displayName": "",
              "logo": "", "providers": [{"name": "a"}, {"name": "b", "provider": {"owner": "admin"}},
                                        {"name": "c", "provider": {"owner": "acme"}}]}
    row = _display(SCREEN, record, "built-in/admin")
    # owner/name: a shared provider is admin's (an entry saved without its owner: the organization's)
    assert (row["providers"], row["moreProviders"]) == ("acme/a, admin/b", "acme/c")
    assert row["providers__href"] == row["moreProviders__href"] == "/providers/"
    assert row["__protected"] == "false"
    assert _display(SCREEN, {**record, "name": "app-built-in"}, "built-in/admin")["__protected"] == "true"
