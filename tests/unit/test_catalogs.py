"""The catalog check (docs/extending.md, "Languages"): every offered language has a catalog with
every English key in each extension that ships translations, the same placeholders, and a
translation rather than the English (but for the words listed in catalog_same/<lang>.txt); every
key is used by the code, and every string the code shows through the catalog is a key."""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from iam_console.core.builtin import LANGUAGES
from iam_console.extension import extensions
from iam_console.i18n import DEFAULT_LANGUAGE, LANGUAGE_NAMES

ROOT = Path(__file__).resolve().parents[2]
SAME = Path(__file__).parent / "catalog_same"
FOLDERS = {extension.name: Path(extension.translations) for extension in extensions() if extension.translations}
# Catalogs still being written: the check skips these languages (by name) while their file is
# absent. Empty it when they land.
AWAITED: set[str] = set()

PLACEHOLDER = re.compile(r"%[sd]|\{\w*\}")
# calls whose first argument is a catalog key: the pages' t(), states' say(), translate(), and the
# errors the API answers with (core/errors.py ServiceError and its kinds)
# (by the argument that holds the key: envelope.error(request, key), MenuEntry(group, route, label),
# a screen's Column(key, label), Field(key, label) and a row table's Cell(key, label))
KEY_ARGUMENT = {"t": 0, "say": 0, "translate": 0, "ServiceError": 0, "BindRefused": 0, "OutboundError": 0,
                "error": 1, "MenuGroup": 1, "MenuEntry": 2, "Column": 1, "Field": 1, "Cell": 1}
# Reflex components that show their text arguments, and the properties read out or shown
SHOWING = {"text", "heading", "button", "badge", "link", "label", "callout", "title", "description", "span",
           "p", "strong", "em", "th", "legend", "option"}
SHOWN_PROPERTIES = {"placeholder", "aria_label", "title", "alt", "label"}
NOT_WORDS = {"XXXX-XXXX", "IAM", "<EntityDescriptor ...>"}  # a code's shape, the product's name, XML


def _english(folder: Path) -> dict[str, str]:
    return json.loads((folder / f"{DEFAULT_LANGUAGE}.json").read_text(encoding="utf-8"))


def _sources() -> Iterator[Path]:
    for folder in (ROOT / "iam_console", ROOT / "extensions"):
        yield from (p for p in folder.rglob("*.py") if "tests" not in p.relative_to(ROOT).parts)


def _text(node: ast.AST | None) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _name(call: ast.Call) -> str:
    return call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")


def _from_rx(call: ast.Call) -> bool:
    node = call.func
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id == "rx"


def scan(source: str) -> tuple[set[str], set[str], set[str]]:
    """A module's string constants, the keys it looks up in the catalog, and the texts its
    components show without the catalog."""
    constants, keys, bare = set(), set(), set()
    for node in ast.walk(ast.parse(source)):
        if (text := _text(node)) is not None:
            constants.add(text)
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "tr":
            keys.add(_text(node.slice)) if _text(node.slice) else None  # Prefs.tr["..."]
        elif isinstance(node, ast.Call):
            name = _name(node)
            position = KEY_ARGUMENT.get(name, len(node.args))
            if position < len(node.args) and (key := _text(node.args[position])) and re.search("[A-Za-z]", key):
                keys.add(key)
            if _from_rx(node):
                shown = [_text(a) for a in node.args] if name in SHOWING else []
                shown += [_text(k.value) for k in node.keywords if k.arg in SHOWN_PROPERTIES]
                bare |= {s for s in shown if s and re.search("[A-Za-z]{2}", s) and s not in NOT_WORDS}
    return constants, keys, bare


def scan_code() -> tuple[set[str], set[str], dict[str, set[str]]]:
    constants, keys, bare = set(), set(), {}
    for path in _sources():
        found = scan(path.read_text(encoding="utf-8"))
        constants |= found[0]
        keys |= found[1]
        if found[2]:
            bare[str(path.relative_to(ROOT))] = found[2]
    return constants, keys, bare


def browser_test_page_keys() -> set[str]:
    """The keys the browser tests' own pages look up (IAM_EXTRA_PAGES, tests/e2e/conftest.py): the
    console's build fails on one no catalog has."""
    pages = [*(ROOT / "tests" / "e2e").glob("*_pages.py"), ROOT / "tests" / "e2e" / "state_probe.py"]
    return {key for path in pages for key in scan(path.read_text(encoding="utf-8"))[1]}


def unused(catalog: set[str], constants: set[str]) -> list[str]:
    return sorted(key for key in catalog if key not in constants)


def _placeholders(text: str) -> list[str]:
    return PLACEHOLDER.findall(text)


def same_allowed(language: str) -> set[str]:
    path = SAME / f"{language}.txt"
    return set(path.read_text(encoding="utf-8").splitlines()) - {""} if path.is_file() else set()


def problems(english: dict[str, str], translated: dict[str, str], allowed: set[str]) -> list[str]:
    """What is wrong with a language's catalog against the English one (a key without a letter,
    "%s", is the same in every language)."""
    found = [f"missing: {key!r}" for key in english if key not in translated]
    found += [f"not an English key: {key!r}" for key in translated if key not in english]
    for key, text in translated.items():
        if key in english and _placeholders(key) != _placeholders(text):
            found.append(f"placeholders differ: {key!r} -> {text!r}")
        if key in english and text == key and key not in allowed and re.search("[A-Za-z]", PLACEHOLDER.sub("", key)):
            found.append(f"left in English (list it in catalog_same if the word is the same): {key!r}")
    return found


def test_every_offered_language_has_a_name_of_its_own():
    assert list(LANGUAGE_NAMES) == list(LANGUAGES)


@pytest.mark.parametrize("language", [code for code in LANGUAGES if code != DEFAULT_LANGUAGE])
@pytest.mark.parametrize("extension", sorted(FOLDERS))
def test_the_catalog_translates_every_key(extension, language):
    path = FOLDERS[extension] / f"{language}.json"
    if not path.is_file() and language in AWAITED:
        pytest.skip(f"{language}: catalog not written yet ({extension}); AWAITED in tests/unit/test_catalogs.py")
    assert path.is_file(), f"{path} is missing"
    english = _english(FOLDERS[extension])
    translated = json.loads(path.read_text(encoding="utf-8"))
    assert problems(english, translated, same_allowed(language)) == []


@pytest.mark.parametrize("language", [code for code in LANGUAGES if code != DEFAULT_LANGUAGE])
def test_the_same_words_list_only_keys_left_the_same(language):
    english = {key for folder in FOLDERS.values() for key in _english(folder)}
    merged: dict[str, str] = {}
    for folder in FOLDERS.values():
        path = folder / f"{language}.json"
        merged |= json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    stale = sorted(key for key in same_allowed(language) if key not in english or merged.get(key, key) != key)
    assert stale == [], f"catalog_same/{language}.txt lists keys that are not left in English"


def test_every_key_is_used_and_every_shown_string_is_a_key():
    english = {key for folder in FOLDERS.values() for key in _english(folder)}
    constants, keys, bare = scan_code()
    assert unused(english, constants) == [], "keys no code uses"
    assert sorted(keys - english) == [], "strings the code shows that no catalog has"
    assert sorted(browser_test_page_keys() - english) == [], "strings the browser tests' pages show that no catalog has"
    assert bare == {}, "texts shown without the catalog (t(...))"


def test_the_check_catches_an_unused_key_and_an_untranslated_string():
    """The scan is real: a planted key nobody uses, a planted t() of a string no catalog has, and
    a text shown bare are each reported."""
    english = {key for folder in FOLDERS.values() for key in _english(folder)}
    constants, _, _ = scan_code()
    assert unused(english | {"A planted key nobody uses"}, constants) == ["A planted key nobody uses"]
    planted = 'rx.button(t("Planted and untranslated"))\nraise ServiceError("Planted %s", 1)\n' \
              'error(request, "Planted too")\nrx.text("Shown bare", placeholder="Bare too")\nPrefs.tr["Planted tr"]\n' \
              'Cell("length", "Planted label")\n'
    _, keys, bare = scan(planted)
    assert keys - english == {"Planted and untranslated", "Planted %s", "Planted too", "Planted tr", "Planted label"}
    assert bare == {"Shown bare", "Bare too"}


def test_the_check_catches_a_broken_catalog():
    english = {"Hello %s": "Hello %s", "Name": "Name", "Save": "Save", "{count} users": "{count} users"}
    broken = {"Hello %s": "Bonjour", "Name": "Name", "Save": "Enregistrer", "{count} users": "{n} utilisateurs",
              "Extra": "En trop"}
    assert problems(english, broken, allowed=set()) == [
        "not an English key: 'Extra'",
        "placeholders differ: 'Hello %s' -> 'Bonjour'",
        "left in English (list it in catalog_same if the word is the same): 'Name'",
        "placeholders differ: '{count} users' -> '{n} utilisateurs'",
    ]
    assert problems(english, {k: v for k, v in broken.items() if k != "Save"}, {"Name"})[0] == "missing: 'Save'"
