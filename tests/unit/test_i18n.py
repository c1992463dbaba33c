"""The catalog: the extensions' catalogs merge into one, English keys are their own text, and
Accept-Language picks a language (every language's keys: test_catalogs.py)."""

import json
from pathlib import Path

import pytest

from iam_console.extension import extensions
from iam_console.i18n import catalog, language_from_header, plural_form, translate

FOLDERS = {extension.name: Path(extension.translations) for extension in extensions() if extension.translations}


def test_the_catalogs_are_the_extensions():
    assert {"core", "commerce"} <= set(FOLDERS)
    merged = {key for folder in FOLDERS.values() for key in json.loads((folder / "en.json").read_text())}
    assert set(catalog("en")) == merged


def test_english_keys_are_their_own_text():
    assert all(key == (value["other"] if isinstance(value, dict) else value) for key, value in catalog("en").items())


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


def test_a_count_picks_the_languages_plural_form():
    """CLDR's rules (Babel): English one/other, Russian one/few/many, Japanese one form for all."""
    key = "Successfully synced %d users"
    assert [translate(key, "en", n) for n in (1, 2, 0)] == [
        "Successfully synced 1 user", "Successfully synced 2 users", "Successfully synced 0 users"]
    assert [translate(key, "ru", n) for n in (1, 2, 5, 21, 22, 111)] == [
        "Синхронизирован 1 пользователь", "Синхронизировано 2 пользователя", "Синхронизировано 5 пользователей",
        "Синхронизирован 21 пользователь", "Синхронизировано 22 пользователя", "Синхронизировано 111 пользователей"]
    assert translate(key, "ja", 1) == translate(key, "ja", 5).replace("5", "1")
    assert translate(key, "fr", 0) == "0 utilisateur synchronisé avec succès"  # French counts 0 as one


def test_the_count_is_the_percent_d_wherever_it_stands_and_is_grouped():
    message = "The field %s is too long (at most %d characters)"
    assert translate(message, "en", "name", 1) == "The field name is too long (at most 1 character)"
    assert translate(message, "en", "name", 12000) == "The field name is too long (at most 12,000 characters)"
    assert translate(message, "de", "Name", 12000) == "Das Feld Name ist zu lang (höchstens 12.000 Zeichen)"
    assert translate(message, "ru", "имя", 3) == "Поле имя слишком длинное (не более 3 символов)"
    assert translate(message, "ru", "имя", 1) == "Поле имя слишком длинное (не более 1 символа)"
    # French and Spanish say "de" before a noun counted in millions (CLDR's "many")
    assert translate("An order holds at most %d products", "es", 1_000_000) == \
        "Un pedido contiene como máximo 1.000.000 de productos"


def test_plural_form_falls_back_to_other():
    forms = {"one": "a", "other": "b"}
    assert plural_form(forms, 1, "en") == "a" and plural_form(forms, 3, "en") == "b"
    assert plural_form(forms, "not a number", "en") == "b"
    assert plural_form({"other": "b"}, 1, "en") == "b"


def test_a_page_cannot_show_a_counted_message_without_its_count():
    """t() gives a page a text as it is; a counted one is said with its count (Prefs.say)."""
    from iam_console.ui.text import t

    with pytest.raises(KeyError, match="counted message"):
        t("Successfully synced %d users")
    assert t("Save") is not None
