"""The translation catalog: English keys, one JSON file per other language.

Pages and API messages look strings up here instead of spelling them out in
each language, so a new language is one new file."""

from __future__ import annotations

import functools
import json
from pathlib import Path

_HERE = Path(__file__).parent
LANGUAGE_NAMES = {"en": "English", "zh": "简体中文"}
DEFAULT_LANGUAGE = "en"


@functools.cache
def catalog(language: str) -> dict[str, str]:
    """Every key, translated where the language has it (English otherwise)."""
    keys = json.loads((_HERE / "en.json").read_text(encoding="utf-8"))
    if language == DEFAULT_LANGUAGE or language not in LANGUAGE_NAMES:
        return dict(keys)
    translated = json.loads((_HERE / f"{language}.json").read_text(encoding="utf-8"))
    return {**keys, **translated}


def language_from_header(accept_language: str | None) -> str:
    """The first supported language of an Accept-Language header."""
    for part in (accept_language or "").split(","):
        code = part.split(";")[0].strip().lower()[:2]
        if code in LANGUAGE_NAMES:
            return code
    return DEFAULT_LANGUAGE


def translate(text: str, language: str, *args: object) -> str:
    template = catalog(language).get(text, text)
    return template % args if args else template
