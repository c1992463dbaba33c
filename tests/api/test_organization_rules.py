"""The organization's rules, through the API: account items,
MFA items, theme, navigation items, the password obfuscator and the dark logo.
The console's organization page saves through the same crud.update_record."""

from __future__ import annotations

import re

import pytest

from iam_console.core import builtin as b
from iam_console.core.errors import ServiceError
from iam_console.identity import accounts
from iam_console.identity.kinds.organization import check_obfuscator, obfuscator_key
from tests.api.conftest import sign_in
from tests.conftest import unique


def _item(name: str, view: str = "Public", modify: str = "Self", regex: str = "", visible: bool = True) -> dict:
    return {"name": name, "visible": visible, "viewRule": view, "modifyRule": modify, "regex": regex}


def _add(admin, **fields) -> dict:
    name = unique("org")
    body = admin.post("/api/add-organization", json={"owner": "admin", "name": name, **fields}).json()
    body["name"] = name
    return body


def _get(admin, name: str) -> dict:
    return admin.get("/api/get-organization", params={"id": f"admin/{name}"}).json()["data"]


def _update(client, name: str, **fields) -> dict:
    return client.post("/api/update-organization", params={"id": f"admin/{name}"},
                       json={"owner": "admin", "name": name, **fields}).json()


# --- account items ---

@pytest.mark.parametrize(("items", "message"), [
    ([_item("Display name", regex="[a-z")], "The regex of the account item Display name is not valid"),
    ([_item("Tag", modify="Admin", regex="x+")], "The account item Tag takes no regex"),
    ([_item("Score", view="Admin", modify="Self")],
     "The modify rule of the account item Score must be Admin or Immutable"),
    ([_item("Is admin", view="Public", modify="Self")],
     "The modify rule of the account item Is admin must be Admin or Immutable"),
    ([_item("Bio", view="Everyone")], "The view rule of the account item Bio must be Public, Self or Admin"),
    ([_item("Bio", modify="Anyone")], "The modify rule of the account item Bio must be Self, Admin or Immutable"),
    ([_item("Bio"), _item("Bio", modify="Admin")], "The account item Bio appears more than once"),
    (["Bio"], "Each account item must be an object with a name"),
])
def test_bad_account_items_are_refused(admin, items, message):
    answer = _add(admin, accountItems=items)
    assert answer["status"] == "error" and message in answer["msg"], answer
    assert _get(admin, answer["name"]) is None


def test_good_account_items_are_saved_without_placeholders(admin):
    items = [_item("Display name", regex="[A-Z].*"), _item("Is admin", view="Admin", modify="Immutable"),
             _item(b.ACCOUNT_ITEM_PLACEHOLDER), _item("Location", modify="Admin")]
    answer = _add(admin, accountItems=items)
    assert answer["data"] == "Affected", answer
    saved = _get(admin, answer["name"])["accountItems"]
    assert [i["name"] for i in saved] == ["Display name", "Is admin", "Location"]
    assert saved[0]["regex"] == "[A-Z].*"


def test_the_default_account_items_pass_the_rules():
    accounts.check_items(b.default_account_items())


def test_modify_rule_options():
    assert accounts.modify_rules("Bio", "Public") == ("Self", "Admin", "Immutable")
    assert accounts.modify_rules("Bio", "Self") == ("Self", "Admin", "Immutable")
    assert accounts.modify_rules("Score", "Admin") == ("Admin", "Immutable")
    assert accounts.modify_rules("Is admin", "Public") == ("Admin", "Immutable")


# --- MFA items ---

@pytest.mark.parametrize(("items", "message"), [
    ([{"name": "App", "rule": "Required"}, {"name": "Email", "rule": "Required"}],
     "Only 1 MFA methods can be required"),
    ([{"name": "App", "rule": "Optional"}, {"name": "App", "rule": "Prompt"}], "at most once"),
    ([{"name": "Phone"}, {"name": "Email"}, {"name": "App"}, {"name": "Phone"}], "at most once"),
    ([{"name": "SMS", "rule": "Optional"}], "at most once"),
    ([{"name": "App", "rule": "Always"}], "The MFA rule must be Optional, Prompt or Required"),
])
def test_bad_mfa_items_are_refused(admin, items, message):
    answer = _add(admin, mfaItems=items)
    assert answer["status"] == "error" and message in answer["msg"], answer


def test_three_mfa_items_with_one_required(admin):
    items = [{"name": "Phone", "rule": "Prompt"}, {"name": "Email", "rule": "Required"},
             {"name": "App", "rule": "Optional"}]
    answer = _add(admin, mfaItems=items)
    assert answer["data"] == "Affected", answer
    assert _get(admin, answer["name"])["mfaItems"] == items


# --- theme ---

@pytest.mark.parametrize(("theme", "message"), [
    ({"isEnabled": True, "themeType": "neon"}, "The theme type must be default, dark, lark or comic"),
    ({"isEnabled": True, "colorPrimary": "red"}, "The primary color must be a hexadecimal color"),
    ({"isEnabled": True, "borderRadius": 21}, "The border radius must be an integer between 0 and 20"),
    ({"isEnabled": True, "borderRadius": -1}, "between 0 and 20"),
    ({"isEnabled": True, "borderRadius": 2.5}, "between 0 and 20"),
    ({"isEnabled": "yes"}, "themeData.isEnabled must be true or false"),
    ({"isCompact": 1}, "themeData.isCompact must be true or false"),
])
def test_bad_themes_are_refused(admin, theme, message):
    answer = _add(admin, themeData=theme)
    assert answer["status"] == "error" and message in answer["msg"], answer


def test_a_customized_theme_and_the_sdks_empty_one(admin):
    theme = {"isEnabled": True, "themeType": "comic", "colorPrimary": "#ED4192", "borderRadius": 16,
             "isCompact": True}
    answer = _add(admin, themeData=theme)
    assert answer["data"] == "Affected", answer
    assert _get(admin, answer["name"])["themeData"] == theme
    empty = {"themeType": "", "colorPrimary": "", "borderRadius": 0, "isCompact": False, "isEnabled": False}
    assert _add(admin, themeData=empty)["data"] == "Affected"


# --- navigation items: the global admin's alone ---

def test_only_a_global_admin_changes_the_navigation_items(admin, make_org, make_user):
    org = make_org(nav_items=["all"])
    make_user(owner=org.name, name="boss", password="Boss-pass-1", is_admin=True)
    boss = sign_in(org.name, "boss", "Boss-pass-1")
    refused = _update(boss, org.name, navItems=["/users"])
    assert refused["msg"] == "Only a global admin may change the navigation items"
    # sending them back unchanged, with other changes, is fine
    assert _update(boss, org.name, navItems=["all"], displayName="Boss's")["data"] == "Affected"
    assert _update(admin, org.name, navItems=["/users", "/roles"])["data"] == "Affected"
    assert _get(admin, org.name)["navItems"] == ["/users", "/roles"]
    assert _update(admin, org.name, navItems=[3])["status"] == "error"


# --- password obfuscator ---

@pytest.mark.parametrize(("kind", "key", "message"), [
    ("AES", "abc", "The AES obfuscator key must be 32, 48 or 64 hexadecimal characters"),
    ("AES", "z" * 32, "The AES obfuscator key must be 32, 48 or 64 hexadecimal characters"),
    ("AES", "", "The AES obfuscator key must be"),
    ("DES", "0123456789abcdef00", "The DES obfuscator key must be 16 hexadecimal characters"),
    ("Blowfish", "", "Unknown password obfuscator type: Blowfish"),
])
def test_bad_obfuscator_keys_are_refused(admin, kind, key, message):
    answer = _add(admin, passwordObfuscatorType=kind, passwordObfuscatorKey=key)
    assert answer["status"] == "error" and message in answer["msg"], answer


@pytest.mark.parametrize(("kind", "key"), [
    ("AES", "0" * 32), ("AES", "a" * 48), ("AES", "F" * 64), ("DES", "0123456789abcdef"),
])
def test_good_obfuscator_keys(admin, kind, key):
    answer = _add(admin, passwordObfuscatorType=kind, passwordObfuscatorKey=key)
    assert answer["data"] == "Affected", answer
    saved = _get(admin, answer["name"])
    assert (saved["passwordObfuscatorType"], saved["passwordObfuscatorKey"]) == (kind, key)


def test_plain_and_empty_obfuscators_keep_no_key(admin):
    empty = _add(admin, passwordObfuscatorType="", passwordObfuscatorKey="leftover")
    saved = _get(admin, empty["name"])
    assert (saved["passwordObfuscatorType"], saved["passwordObfuscatorKey"]) == ("Plain", "")


@pytest.mark.parametrize(("kind", "length"), [("AES", 32), ("DES", 16), ("Plain", 0), ("", 0)])
def test_a_chosen_type_gets_a_fresh_valid_key(kind, length):
    key = obfuscator_key(kind)
    assert len(key) == length and re.fullmatch("[0-9a-f]*", key)
    check_obfuscator(kind or "Plain", key)
    if length:
        assert obfuscator_key(kind) != key  # random, not a shared constant
    with pytest.raises(ServiceError):
        check_obfuscator("AES", obfuscator_key("DES"))


# --- dark logo ---

def test_disabling_the_dark_logo_clears_its_url(admin):
    answer = _add(admin, enableDarkLogo=True, logoDark="https://cdn.example.com/dark.png")
    assert _get(admin, answer["name"])["logoDark"] == "https://cdn.example.com/dark.png"
    assert _update(admin, answer["name"], enableDarkLogo=False)["data"] == "Affected"
    assert _get(admin, answer["name"])["logoDark"] == ""
