"""How an application's sign-in page looks (signin/signin_page.py) and the cleaning of the HTML
administrators write for public pages (core/html.py)."""

from __future__ import annotations

from iam_console import models as m
from iam_console.core import html
from iam_console.signin import signin_page


def _app(**fields) -> m.Application:
    return m.Application(owner="admin", name="app", organization="org", **fields)


def test_html_is_cleaned_of_scripts_handlers_and_script_urls():
    cleaned = html.safe('<p onclick="x()">Hi <b>you</b><script>alert(1)</script><img src="a.png" onerror="alert(1)">'
                        '<a href="javascript:alert(1)">j</a><a href="https://example.com/">e</a>'
                        '<iframe src="https://evil.example/"></iframe><style>*{}</style></p>')
    assert cleaned == ('<p>Hi <b>you</b><img src="a.png"><a rel="noopener noreferrer">j</a>'
                       '<a href="https://example.com/" rel="noopener noreferrer">e</a></p>')
    assert html.safe("") == "" and len(html.safe("x" * 200_000)) == html.MAX_LENGTH


def test_an_application_without_items_shows_the_defaults():
    org = m.Organization(owner="admin", name="org", logo="https://cdn.example/org.png")
    look = signin_page.look(_app(form_offset=9, form_side_html="<b>side</b>"), org)
    assert look.shown == {"Logo", "Languages", "Forgot password?", "Signup link"}
    assert (look.logo, look.position, look.side_html, look.agreement) == ("https://cdn.example/org.png", 2, "", "")
    assert signin_page.look(None, org).logo == "https://cdn.example/org.png"


def test_the_items_decide_what_is_shown_and_custom_text_is_cleaned():
    items = [{"name": "Logo", "visible": False}, {"name": "Back button", "visible": True},
             {"name": "Languages", "visible": True}, {"name": "Signup link", "visible": True},
             {"name": "Forgot password?", "visible": False}, {"name": "Username", "visible": True},
             {"name": "Agreement", "visible": True, "rule": "Signin (Default True)"},
             {"name": "Text 1", "visible": True, "label": "<b>Hello</b><script>x()</script>"},
             {"name": "Text 2", "visible": False, "label": "<i>hidden</i>"}]
    look = signin_page.look(_app(signin_items=items, logo="https://cdn.example/app.png", form_offset=4,
                                 form_side_html='<h2 onmouseover="x()">Welcome</h2>'), None)
    assert look.shown == {"Back button", "Languages", "Signup link"}
    assert look.custom == ("<b>Hello</b>",)
    assert (look.position, look.side_html, look.agreement) == (4, "<h2>Welcome</h2>", "checked")
    unchecked = signin_page.look(_app(signin_items=[{"name": "Agreement", "visible": True, "rule": "Signin"}]), None)
    assert unchecked.agreement == "unchecked"
    signup_only = signin_page.look(_app(signin_items=[{"name": "Agreement", "visible": True, "rule": "None"}]), None)
    assert signup_only.agreement == ""


def test_the_organization_is_chosen_first_unless_the_page_says_none():
    assert signin_page.look(_app(org_choice_mode="Select"), None).org_choice == "Select"
    assert signin_page.look(_app(org_choice_mode="Input"), None).org_choice == "Input"
    assert signin_page.look(_app(org_choice_mode="Input"), None, "None").org_choice == ""  # after the choice
    assert signin_page.look(_app(org_choice_mode="None"), None).org_choice == ""
    assert signin_page.look(_app(org_choice_mode="<script>"), None).org_choice == ""
