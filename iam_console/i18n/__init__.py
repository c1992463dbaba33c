"""The translation catalog: English keys, one JSON file per other language.

Pages and API messages look strings up here instead of spelling them out in
each language, so a new language is one new file. A message with a count ("at most %d
characters") is written once per plural category of the language, and the count picks the form
by CLDR's rules (docs/extending.md, "Languages")."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Union

from babel import Locale, UnknownLocaleError

from iam_console.extension import extensions
from iam_console.i18n.formats import count_text

FOLDER = Path(__file__).parent  # the built-in features' catalogs
# every language the console offers (core/builtin.py LANGUAGES), each in its own name; one without
# a catalog file yet shows English
LANGUAGE_NAMES = {"en": "English", "es": "Español", "fr": "Français", "de": "Deutsch", "zh": "简体中文",
                  "id": "Bahasa Indonesia", "ja": "日本語", "ko": "한국어", "ru": "Русский", "vi": "Tiếng Việt",
                  "pt": "Português"}
DEFAULT_LANGUAGE = "en"
COUNT = "%d"  # a counted message's count: its one %d (its other placeholders are %s)
# a catalog value: the text, or for a counted message its plural forms by CLDR category
Entry = Union[str, dict[str, str]]  # noqa: UP007 (a runtime alias)


def _read(language: str) -> dict[str, Entry]:
    """A language's catalog: every extension's file of it, in their order (iam_console/extension.py;
    the built-in features' files are this folder's)."""
    merged: dict[str, Entry] = {}
    for extension in extensions():
        if extension.translations:
            path = Path(extension.translations) / f"{language}.json"
            if path.is_file():
                merged |= json.loads(path.read_text(encoding="utf-8"))
    return merged


@functools.cache
def catalog(language: str) -> dict[str, Entry]:
    """Every key, translated where the language has it (English otherwise)."""
    keys = _read(DEFAULT_LANGUAGE)
    if language == DEFAULT_LANGUAGE or language not in LANGUAGE_NAMES:
        return keys
    return {**keys, **_read(language)}


def _weight(part: str) -> float:
    for parameter in part.split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.strip() == "q":
            try:
                return float(value)
            except ValueError:
                return 0.0
    return 1.0


def language_from_header(accept_language: str | None, default: str = DEFAULT_LANGUAGE) -> str:
    """The supported language an Accept-Language header prefers most ("pt-BR" is "pt"); ties
    keep the header's order."""
    parts = [part for part in (accept_language or "").split(",")[:20] if part.strip()]
    for part in sorted(parts, key=_weight, reverse=True):
        code = part.split(";")[0].strip().lower().partition("-")[0]
        if code in LANGUAGE_NAMES and _weight(part) > 0:
            return code
    return default


def shown_language(*preferences: str) -> str:
    """The first of `preferences` the console offers, else English."""
    return next((code for code in preferences if code in LANGUAGE_NAMES), DEFAULT_LANGUAGE)


@functools.cache
def plural_categories(language: str) -> frozenset[str]:
    """The CLDR plural categories of a language's cardinal numbers: {"one", "other"} in English,
    {"one", "few", "many", "other"} in Russian, {"other"} in Japanese."""
    return frozenset(_rule(language).tags | {"other"})


def _rule(language: str):
    try:
        return Locale.parse(language or DEFAULT_LANGUAGE).plural_form
    except (ValueError, TypeError, UnknownLocaleError):
        return Locale.parse(DEFAULT_LANGUAGE).plural_form


def plural_form(forms: dict[str, str], count: object, language: str) -> str:
    """The form of a counted message that `count` takes in `language` (CLDR's rules, by Babel):
    Russian's 1 пользователь, 2 пользователя, 5 пользователей; "other" when the catalog lacks the
    category or the count is not a number."""
    try:
        category = _rule(language)(count)
    except (TypeError, ValueError, ArithmeticError):
        category = "other"
    return forms.get(category) or forms.get("other") or next(iter(forms.values()), "")


def _count_position(text: str) -> int | None:
    """Which argument of a counted message is its count: the one its %d stands for."""
    placeholders = re.findall("%[sd]", text)
    return placeholders.index(COUNT) if COUNT in placeholders else None


def language_from_locales(ui_locales: str) -> str:
    """The first supported language of an OpenID Connect `ui_locales` (BCP 47 tags, preferred
    first: "zh-CN en"); "" when none is."""
    for tag in ui_locales.split()[:20]:
        code = tag.split("-")[0].lower()
        if code in LANGUAGE_NAMES:
            return code
    return ""


def translate(text: str, language: str, *args: object) -> str:
    """`text` in `language`, filled with `args`. For a counted message the count picks the plural
    form and is written as the language groups digits (formats.py count_text)."""
    entry = catalog(language).get(text, text)
    if isinstance(entry, dict):
        position = _count_position(text)
        count = args[position] if position is not None and position < len(args) else None
        entry = plural_form(entry, count, language)
        if count is not None and not isinstance(count, bool) and isinstance(count, int):
            args = (*args[:position], count_text(count, language), *args[position + 1:])
            entry = entry.replace(COUNT, "%s")
    return entry % args if args else entry
