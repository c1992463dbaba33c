"""The translation catalog: English keys, one JSON file per other language.

Pages and API messages look strings up here instead of spelling them out in
each language, so a new language is one new file."""

from __future__ import annotations

import functools
import json
from pathlib import Path

from iam_console.extension import extensions

FOLDER = Path(__file__).parent  # the built-in features' catalogs
# every language the console offers (core/builtin.py LANGUAGES), each in its own name; one without
# a catalog file yet shows English
LANGUAGE_NAMES = {"en": "English", "es": "Español", "fr": "Français", "de": "Deutsch", "zh": "简体中文",
                  "id": "Bahasa Indonesia", "ja": "日本語", "ko": "한국어", "ru": "Русский", "vi": "Tiếng Việt",
                  "pt": "Português"}
DEFAULT_LANGUAGE = "en"


def _read(language: str) -> dict[str, str]:
    """A language's catalog: every extension's file of it, in their order (iam_console/extension.py;
    the built-in features' files are this folder's)."""
    merged: dict[str, str] = {}
    for extension in extensions():
        if extension.translations:
            path = Path(extension.translations) / f"{language}.json"
            if path.is_file():
                merged |= json.loads(path.read_text(encoding="utf-8"))
    return merged


@functools.cache
def catalog(language: str) -> dict[str, str]:
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


def language_from_locales(ui_locales: str) -> str:
    """The first supported language of an OpenID Connect `ui_locales` (BCP 47 tags, preferred
    first: "zh-CN en"); "" when none is."""
    for tag in ui_locales.split()[:20]:
        code = tag.split("-")[0].lower()
        if code in LANGUAGE_NAMES:
            return code
    return ""


def translate(text: str, language: str, *args: object) -> str:
    template = catalog(language).get(text, text)
    return template % args if args else template
