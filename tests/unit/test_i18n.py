"""The catalog: Chinese covers every English key; formats keep their placeholders."""

import json
import re
from pathlib import Path

from iam_console.i18n import catalog, language_from_header, translate

HERE = Path(__file__).resolve().parents[2] / "iam_console" / "i18n"


def test_chinese_translates_every_key_with_the_same_placeholders():
    english = json.loads((HERE / "en.json").read_text())
    chinese = json.loads((HERE / "zh.json").read_text())
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
