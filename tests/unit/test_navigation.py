"""Menu rules for each kind of account, and the route guard's decisions."""

import pytest

from iam_console.commerce.extension import COMMERCE
from iam_console.core.navigation import (
    MenuGroup,
    MenuItem,
    Viewer,
    after_logout,
    guard,
    menu_for,
    safe_return_path,
)
from iam_console.features import CORE

# the built-in features' entries: the menu of the product as it ships, whatever else is installed
# (an installed extension's entries: tests/unit/test_extension.py and its own tests)
EVERY_ROUTE = frozenset(entry.route for entry in (*CORE.menu, *COMMERCE.menu))


def keys(groups):
    return [item.key for group in groups for item in group.items]


def test_nobody_gets_no_menu_and_ordinary_users_only_their_permissions():
    assert menu_for(None, EVERY_ROUTE) == []
    only_permissions = [MenuGroup("/auth", "Authorization", (MenuItem("/permissions", "Permissions"),))]
    assert menu_for(Viewer("acme", is_admin=False), EVERY_ROUTE) == only_permissions
    # a non-admin of the built-in organization is not a global admin either
    assert menu_for(Viewer("built-in", is_admin=False), EVERY_ROUTE) == only_permissions
    # the organization's navItems still decide
    assert menu_for(Viewer("acme", is_admin=False, nav_items=("/users",)), EVERY_ROUTE) == []


def test_global_admin_sees_all_seven_groups():
    groups = menu_for(Viewer("built-in", is_admin=True), EVERY_ROUTE)
    assert [g.label for g in groups] == ["Home", "User Management", "Identity", "Authorization",
                                         "Logging & Auditing", "Business & Payments", "Admin"]
    admin = next(g for g in groups if g.key == "/admin")
    assert [i.label for i in admin.items] == ["System Info", "Syncers", "Webhooks", "Webhook Events", "Swagger"]
    # where Casdoor puts the keys and the orders
    identity = next(g for g in groups if g.key == "/identity")
    assert [i.key for i in identity.items] == ["/applications", "/providers", "/resources", "/certs", "/keys"]
    business = next(g for g in groups if g.key == "/business")
    assert [i.key for i in business.items][:2] == ["/products", "/orders"]


def test_organization_admin_loses_global_only_items():
    groups = menu_for(Viewer("acme", is_admin=True), EVERY_ROUTE)
    shown = keys(groups)
    for hidden in ("/models", "/adapters", "/enforcers", "/sysinfo", "/swagger"):
        assert hidden not in shown
    assert [i.key for i in next(g for g in groups if g.key == "/admin").items] == [
        "/syncers", "/webhooks", "/webhook-events"]
    assert "/roles" in shown and "/permissions" in shown and "/keys" in shown and "/orders" in shown


def test_nav_items_filter_and_empty_groups_drop():
    viewer = Viewer("acme", is_admin=True, nav_items=("/users", "/roles"))
    groups = menu_for(viewer, EVERY_ROUTE)
    assert [g.key for g in groups] == ["/orgs", "/auth"]
    assert keys(groups) == ["/users", "/roles"]


def test_all_in_nav_items_or_none_shows_everything():
    full = keys(menu_for(Viewer("acme", is_admin=True), EVERY_ROUTE))
    assert keys(menu_for(Viewer("acme", is_admin=True, nav_items=("all",)), EVERY_ROUTE)) == full
    assert keys(menu_for(Viewer("acme", is_admin=True, nav_items=("/users", "all")), EVERY_ROUTE)) == full


def test_only_routes_with_a_screen_are_listed():
    groups = menu_for(Viewer("built-in", is_admin=True), frozenset({"/"}))
    assert [(g.key, keys([g])) for g in groups] == [("/home", ["/"])]


def test_guard_waits_while_loading():
    decision = guard("/users", loaded=False, signed_in=False)
    assert not decision.show and decision.redirect == ""


def test_guard_sends_anonymous_visitors_to_login_remembering_the_path():
    decision = guard("/users?p=2", loaded=True, signed_in=False)
    assert not decision.show
    assert decision.redirect == "/login?from=/users%3Fp%3D2"


def test_guard_forces_a_password_update():
    decision = guard("/", loaded=True, signed_in=True, needs_password_update=True)
    assert decision.redirect == "/forget/app-built-in" and not decision.show


def test_guard_lets_signed_in_users_through():
    decision = guard("/", loaded=True, signed_in=True)
    assert decision.show and decision.redirect == ""


@pytest.mark.parametrize("value", ["https://evil.example", "//evil.example/x", "/\\evil.example", "javascript:alert(1)",
                                   "", None, "users", "/ok\nSet-Cookie: x"])
def test_return_paths_stay_on_this_site(value):
    assert safe_return_path(value) == "/"


@pytest.mark.parametrize("value", ["/", "/users", "/users/acme/alice?tab=2#x"])
def test_local_return_paths_are_kept(value):
    assert safe_return_path(value) == value


def test_where_logout_goes():
    assert after_logout("https://app.example/", "acme") == "https://app.example/"
    assert after_logout("", "acme") == "/login/acme"
    assert after_logout("", "built-in") == "/"


def test_guard_sends_an_account_that_must_set_up_mfa_to_the_setup_page():
    decision = guard("/users?p=2", loaded=True, signed_in=True, mfa_setup_required="sms")
    assert (decision.show, decision.redirect) == (False, "/mfa/setup?mfaType=sms")
    assert guard("/mfa/setup?mfaType=app", loaded=True, signed_in=True, mfa_setup_required="sms").show
    assert guard("/mfa/setup/?mfaType=app&from=%2Fx", loaded=True, signed_in=True, mfa_setup_required="app").show
    # a password update comes first; nobody signed in goes to /login whatever the rule
    assert guard("/", loaded=True, signed_in=True, needs_password_update=True,
                 mfa_setup_required="app").redirect.startswith("/forget/")
    assert guard("/", loaded=True, signed_in=False, mfa_setup_required="app").redirect.startswith("/login")
