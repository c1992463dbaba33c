"""A screen's `password` fields are the secrets of their kind (docs/architecture.md, "Fields of an
edit page"): read masked, so the edit form never holds a stored secret, and typed ones are put back
to the mask after the save. A secret shown in a plain field would escape both."""

from __future__ import annotations

import re

import pytest

from iam_console.identity import users
from iam_console.models.base import wire_names
from iam_console.ui import pages  # noqa: F401  (declares the screens)
from iam_console.ui.screens import SCREENS


def _secrets(model, attributes) -> set[str]:
    names = wire_names(model)
    return {names.get(a, a) for a in attributes}


@pytest.mark.parametrize("key", sorted(SCREENS))
def test_password_fields_are_the_kinds_masked_secrets(key):
    model = SCREENS[key].kind.model
    masked = _secrets(model, model.json_secrets)
    typed = {f.key for f in SCREENS[key].fields if f.widget == "password"}
    assert typed <= masked, typed - masked
    # every masked secret the page edits is typed into a password field
    edited = {f.key for f in SCREENS[key].fields} & masked
    assert edited <= typed, edited - typed


def test_there_are_password_fields_to_check():
    typed = {(key, f.key) for key, screen in SCREENS.items() for f in screen.fields if f.widget == "password"}
    assert {("organization", "masterPassword"), ("provider", "clientSecret"), ("ldap", "password")} <= typed


# the password options' regexes run in the server (re) and in the console's dialog (RegExp)
@pytest.mark.parametrize(("option", "passes", "fails"), [
    ("AtLeast6", ["abcdef", "日本語日本語"], ["abcde", ""]),
    ("AtLeast8", ["abcdefgh"], ["abcdefg"]),
    ("Aa123", ["aB3", "xY9z"], ["abc3", "ABC3", "aBc"]),
    ("SpecialChar", ["a!", "a b"], ["aB3"]),
    ("NoRepeat", ["abab", "a\na"], ["aab", "x11"]),
])
def test_the_password_options(option, passes, fails):
    pattern, _ = users.PASSWORD_OPTIONS[option]
    assert all(re.search(pattern, p) for p in passes)
    assert not any(re.search(pattern, p) for p in fails)
