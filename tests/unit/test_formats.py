"""Dates, counts and money as each language writes them (iam_console/i18n/formats.py, by Babel),
and which language the console shows (i18n shown_language)."""

from decimal import Decimal

from iam_console.i18n import shown_language
from iam_console.i18n.formats import count_text, direction, money_text, time_text


def test_counts_are_grouped_as_each_language_groups_digits():
    assert count_text(1234567, "en") == "1,234,567"
    assert count_text(1234567, "de") == "1.234.567"
    assert count_text(1234567, "fr") == "1\u202f234\u202f567"
    assert count_text("not a count", "de") == "not a count"


def test_times_are_written_as_each_language_writes_them():
    stored = "2026-11-22T16:05:09Z"
    assert time_text(stored, "en") == "Nov 22, 2026, 4:05:09\u202fPM"
    assert time_text(stored, "de") == "22.11.2026, 16:05:09"
    assert time_text(stored, "fr") == "22 nov. 2026, 16:05:09"
    assert time_text(stored, "es") == "22 nov 2026, 16:05:09"
    assert time_text("2026-11-22T17:05:09+01:00", "de") == "22.11.2026, 16:05:09"  # shown in UTC, as stored
    assert time_text("", "de") == "" and time_text("soon", "de") == "soon"


def test_money_keeps_every_decimal_and_the_languages_signs():
    assert money_text(4.2, "USD", "en") == "$4.20"
    assert money_text(Decimal("1234.5"), "EUR", "de") == "1.234,50\xa0€"
    assert money_text("1234.5", "EUR", "fr") == "1\u202f234,50\xa0€"
    assert money_text(300, "JPY", "en") == "¥300"
    assert money_text(0.123456, "USD", "en") == "$0.123456"
    assert money_text(None, "USD", "en") == "" and money_text(True, "USD", "en") == ""
    assert money_text(3, "", "de") == "3"
    assert money_text(3, "usd", "xx-not-a-locale") == "$3.00"  # an unknown language is English


def test_direction_is_the_languages_own():
    assert direction("en") == "ltr" and direction("de") == "ltr"
    assert direction("ar") == "rtl"  # none offered yet: nothing assumes left to right


def test_the_account_comes_first_then_the_browser_the_organization_and_the_header():
    assert shown_language("fr", "de", "es", "ja") == "fr"
    assert shown_language("", "de", "es", "ja") == "de"
    assert shown_language("", "", "es", "ja") == "es"
    assert shown_language("", "", "", "ja") == "ja"
    assert shown_language("xx", "", "", "") == "en"
