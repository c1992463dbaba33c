"""The rules an application's signin methods and signup Text items set (signin/auth.py,
signin/signup.py), without a database."""

from __future__ import annotations

from iam_console.models import Application
from iam_console.signin import auth, signup


def _app(*methods: tuple[str, str], enable_password: bool = True) -> Application:
    return Application(name="a", enable_password=enable_password,
                       signin_methods=[{"name": n, "displayName": n, "rule": r} for n, r in methods])


def test_the_password_rule():
    assert auth.password_rule(_app(("Password", "All"))) == "All"
    assert auth.password_rule(_app(("Password", "Non-LDAP"), ("LDAP", "None"))) == "Non-LDAP"
    assert auth.password_rule(_app(("Password", "Hide password"))) == "Hide password"
    assert auth.password_rule(_app(("Password", ""))) == "All"  # a row without a rule
    assert auth.password_rule(_app(("Verification code", "All"))) == ""  # not listed
    assert auth.password_rule(_app()) == "All"  # no methods listed: enable_password decides
    assert auth.password_rule(_app(enable_password=False)) == ""
    assert auth.password_rule(_app(("Password", "All"), enable_password=False)) == ""


def test_the_ldap_method():
    assert auth.ldap_enabled(_app(("LDAP", "None")))
    assert not auth.ldap_enabled(_app(("Password", "All")))
    assert not auth.ldap_enabled(_app())


def test_text_items_are_html_and_carry_no_value():
    application = Application(name="a", signup_items=[
        {"name": "Text 1", "visible": True, "type": "Input", "regex": "x+",
         "label": '<b>Hi</b><script>alert(1)</script><a href="javascript:alert(1)">x</a>'},
        {"name": "Textual", "visible": True, "type": "Input", "label": "Textual"}])
    items = signup.Items(application)
    assert signup.is_html_text("Text 1") and signup.is_html_text("Text 5") and not signup.is_html_text("Textual")
    assert [item["name"] for item in items.custom()] == ["Textual"]
    cleaned = signup.html_label(items.by_name["Text 1"])
    assert "<b>Hi</b>" in cleaned and "script" not in cleaned and "javascript" not in cleaned
