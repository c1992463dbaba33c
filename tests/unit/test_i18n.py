"""The catalog: the extensions' catalogs merge into one, English keys are their own text, and
Accept-Language picks a language (every language's keys: test_catalogs.py)."""

import json
from pathlib import Path

from iam_console.extension import extensions
from iam_console.i18n import catalog, language_from_header, translate

FOLDERS = {extension.name: Path(extension.translations) for extension in extensions() if extension.translations}


def test_the_catalogs_are_the_extensions():
    assert {"core", "commerce"} <= set(FOLDERS)
    merged = {key for folder in FOLDERS.values() for key in json.loads((folder / "en.json").read_text())}
    assert set(catalog("en")) == merged


def test_english_keys_are_their_own_text():
    assert all(key == value for key, value in catalog("en").items())


def test_language_from_header():
    assert language_from_header("zh-CN,zh;q=0.9,en;q=0.8") == "zh"
    assert language_from_header("fr-FR,en;q=0.5") == "fr"
    assert language_from_header("pt-BR") == "pt"
    assert language_from_header("en;q=0.4, de;q=0.9") == "de"  # the weights, not the order
    assert language_from_header("xx-YY,de;q=0") == "en"  # q=0: not acceptable
    assert language_from_header("xx-YY", default="") == ""
    assert language_from_header(None) == "en"


def test_unknown_keys_pass_through():
    assert translate("Not in the catalog %s", "zh", "x") == "Not in the catalog x"
