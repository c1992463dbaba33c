"""The screen declarations and the edit state's conversions, without a browser."""

from __future__ import annotations

import pytest

from iam_console.core.access import Actor
from iam_console.identity import accounts
from iam_console.ui import pages  # noqa: F401  (declares the screens)
from iam_console.ui.screens import SCREENS, Column, Field, cell, link
from iam_console.ui.state.editing import _id_from_path, _local, _typed
from iam_console.ui.state.listing import _display, _route_organization


def test_edit_routes_and_urls():
    users, organizations = SCREENS["user"], SCREENS["organization"]
    assert users.edit_pattern == "/users/[p0]/[p1]" and users.edit_keys == ["owner", "name"]
    assert users.edit_url({"owner": "acme", "name": "alice"}) == "/users/acme/alice"
    assert organizations.edit_pattern == "/organizations/[p0]"
    assert _id_from_path(users, "/users/acme/alice") == ("acme", "alice")
    assert _id_from_path(organizations, "/organizations/acme") == ("admin", "acme")


def test_cells_are_display_strings():
    assert cell(Column("isAdmin", "Is admin", "bool"), True) == "true"
    created = Column("createdTime", "Created time", "time")
    assert cell(created, "2026-11-22T04:00:00Z") == "Nov 22, 2026, 4:00:00\u202fAM"  # i18n/formats.py, by Babel
    assert cell(created, "2026-11-22T04:00:00Z", "de") == "22.11.2026, 04:00:00"
    assert cell(created, "not a time") == "not a time"
    assert cell(Column("tags", "Tags"), ["a", "b"]) == "a, b"
    assert cell(Column("x", "X"), None) == ""
    assert link("/organizations/{owner}", {"owner": "acme"}) == "/organizations/acme"
    assert link("/x/{missing}", {}) == ""


def test_rows_carry_links_keys_and_protection():
    users = SCREENS["user"]
    row = _display(users, {"owner": "built-in", "name": "admin", "isAdmin": True}, "acme/boss")
    assert row["__key"] == "built-in/admin" and row["__edit"] == "/users/built-in/admin"
    assert row["owner__href"] == "/organizations/built-in" and row["__protected"] == "true"
    mine = _display(users, {"owner": "acme", "name": "boss"}, "acme/boss")
    assert mine["__protected"] == "true"
    other = _display(users, {"owner": "acme", "name": "alice"}, "acme/boss")
    assert other["__protected"] == "false"
    assert _route_organization("/organizations/acme/users", users) == "acme"
    assert _route_organization("/users", users) == ""


@pytest.mark.parametrize(("widget", "text", "before", "expected"), [
    ("input", "7", 3, 7), ("number", " 12 ", 0, 12), ("input", "1.5", 2.0, 1.5),
    ("list", "a, b,,c", [], ["a", "b", "c"]),
    ("input", "x, y", ["old"], ["x", "y"]), ("input", "plain", "old", "plain"),
])
def test_form_text_becomes_the_records_type(widget, text, before, expected):
    assert _typed(Field("k", "K", widget), text, before) == expected


def test_bad_numbers_are_refused_with_the_field_named():
    with pytest.raises(ValueError, match="score must be a number"):
        _typed(Field("score", "Score", "number"), "many", 0)
    with pytest.raises(ValueError, match="at least 0"):
        _typed(Field("days", "Days", "number", minimum=0), "-1", 0)


def test_return_urls_stay_in_the_console():
    assert _local("/users?p=2") == "/users?p=2"
    for outside in ("https://evil.example", "//evil.example", "/\\\\evil", "javascript:alert(1)"):
        assert _local(outside) == ""


def test_view_rules_hide_items(make_org, make_user):
    org = make_org(account_items=[
        {"name": "Email", "visible": True, "viewRule": "Self", "modifyRule": "Self"},
        {"name": "Score", "visible": True, "viewRule": "Admin", "modifyRule": "Admin"},
        {"name": "Bio", "visible": False, "viewRule": "Public", "modifyRule": "Self"},
    ])
    alice = make_user(owner=org.name)
    bob = make_user(owner=org.name)
    boss = make_user(owner=org.name, is_admin=True)
    assert accounts.hidden_attributes(Actor(user=bob), org, alice) == {"email", "score", "bio"}
    assert accounts.hidden_attributes(Actor(user=alice), org, alice) == {"score", "bio"}
    assert accounts.hidden_attributes(Actor(user=boss), org, alice) == {"bio"}


def test_the_group_tree_scopes_the_users_list():
    from iam_console.identity.ui.groups import _tree_scope

    groups = SCREENS["group"]
    assert _tree_scope("/trees/acme/dev%20ops") == ("acme", "dev ops")
    assert _tree_scope("/trees/acme") == ("acme", "")
    assert _tree_scope("/groups/acme/dev") == ("", "")
    top = _display(groups, {"owner": "acme", "name": "eng", "parentId": "acme", "isTopGroup": True,
                            "haveChildren": True}, "acme/boss")
    child = _display(groups, {"owner": "acme", "name": "dev", "parentId": "eng", "isTopGroup": False}, "acme/boss")
    assert top["parentId__href"] == "/organizations/acme" and child["parentId__href"] == "/groups/acme/eng"
    assert top["__protected"] == "true" and child["__protected"] == "false"  # delete: leaves only
    assert child["users__href"] == "/trees/acme/dev"


def test_the_ldap_screen_is_addressed_by_its_id_and_exits_to_its_organization():
    ldap = SCREENS["ldap"]
    assert ldap.edit_pattern == "/ldap/[p0]/[p1]" and ldap.edit_keys == ["owner", "id"]
    assert _id_from_path(ldap, "/ldap/acme/ldap_1") == ("acme", "ldap_1")
    assert ldap.edit_url({"owner": "acme", "id": "ldap_1"}) == "/ldap/acme/ldap_1"
    assert ldap.exit_url({"owner": "acme", "id": "ldap_1"}) == "/organizations/acme"
    assert SCREENS["user"].exit_url({"owner": "acme", "name": "x"}) == "/users"
    assert ldap.name_locked({}) and ldap.name_label == "ID"
    checks = next(f for f in ldap.fields if f.key == "filterFields")
    assert checks.widget == "checks" and checks.options == ("uid", "mail", "mobile", "sAMAccountName")
    assert _typed(checks, "uid, mail", []) == ["uid", "mail"] and _typed(checks, "", ["uid"]) == []


def test_every_screen_has_its_pages_and_no_key_tests_in_the_generic_states():
    from pathlib import Path

    from iam_console.ui.routes import PAGES
    from iam_console.ui.state.listing import Lists

    routes = {spec.route: spec for spec in PAGES}
    for declared in SCREENS.values():
        assert declared.edit_pattern in routes or not declared.has_edit_page, declared.key
        assert declared.list_route in routes, declared.key  # its own list, or the page listing it
        for extra in declared.routes:
            assert extra.path in routes
    assert routes["/organizations/[p0]"].title == "Organization" and routes["/account"].title == "My Account"
    assert routes["/organizations"].follows_organization
    assert not routes["/organizations/[p0]/users"].follows_organization
    # the lists inside other pages are states of the one mixin
    from iam_console.identity.ui.groups import GroupUsers
    from iam_console.identity.ui.organization_state import LdapServers
    assert issubclass(LdapServers, Lists) and issubclass(GroupUsers, Lists)
    assert LdapServers in SCREENS["organization"].sections
    generic = Path(__file__).parents[2] / "iam_console" / "ui"
    for module in ("state/listing.py", "state/editing.py", "components/listing.py", "components/editing.py"):
        assert "screen.key ==" not in (generic / module).read_text(), module


@pytest.mark.parametrize(("algorithm", "bits", "expected"), [
    ("ES256", "2048", "0"), ("ES512", "0", "0"), ("RS256", "0", "2048"), ("PS384", "4096", "4096"),
    ("RS512", "1024", "1024"), ("PS256", "3000", "2048"), ("RS384", "", "2048"),
])
def test_a_certs_new_algorithm_settles_the_bit_size_and_clears_the_pair(algorithm, bits, expected):
    fields = {f.key: f for f in SCREENS["cert"].fields}
    assert fields["cryptoAlgorithm"].then(algorithm, {"bitSize": bits, "certificate": "x", "privateKey": "y"}) == {
        "bitSize": expected, "certificate": "", "privateKey": ""}
    assert fields["bitSize"].then("1024") == {"certificate": "", "privateKey": ""}
    assert fields["certificate"].rows == fields["privateKey"].rows == 30


def test_a_then_of_one_or_two_parameters():
    from iam_console.ui.state.editing import then_values

    seen = []
    both = Field("a", "A", then=lambda value, values: seen.append((value, values)) or {"b": value + "!"})
    assert then_values(both, "x", {"a": "x", "b": ""}) == {"b": "x!"} and seen == [("x", {"a": "x", "b": ""})]
    assert then_values(Field("s", "S", "switch", then=lambda on: {} if on else {"t": ""}), False, {}) == {"t": ""}
    assert then_values(Field("n", "N"), "x", {}) == {}
