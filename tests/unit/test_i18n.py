"""The catalog: in every extension's catalogs (the built-in features' too), Chinese covers every
English key, and formats keep their placeholders."""

import json
import re
from pathlib import Path

import pytest

from iam_console.extension import extensions
from iam_console.i18n import catalog, language_from_header, translate

FOLDERS = {extension.name: Path(extension.translations) for extension in extensions() if extension.translations}


def test_the_catalogs_are_the_extensions():
    assert {"core", "commerce"} <= set(FOLDERS)
    merged = {key for folder in FOLDERS.values() for key in json.loads((folder / "en.json").read_text())}
    assert set(catalog("en")) == merged


@pytest.mark.parametrize("name", sorted(FOLDERS))
def test_chinese_translates_every_key_with_the_same_placeholders(name):
    english = json.loads((FOLDERS[name] / "en.json").read_text())
    chinese = json.loads((FOLDERS[name] / "zh.json").read_text())
    assert set(chinese) == set(english)
    for key, text in chinese.items():
        assert re.findall(r"%[sd]", key) == re.findall(r"%[sd]", text), key


def test_english_keys_are_their_own_text():
    assert all(key == value for key, value in catalog("en").items())


def test_language_from_header():
    assert language_from_header("zh-CN,zh;q=0.9,en;q=0.8") == "zh"
    assert language_from_header("fr-FR,en;q=0.5") == "en"
    assert language_from_header(None) == "en"


def test_unknown_keys_pass_through():
    assert translate("Not in the catalog %s", "zh", "x") == "Not in the catalog x"
