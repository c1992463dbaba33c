"""Dates, counts and amounts of money as the reader's language writes them, by Babel (the CLDR
data): the one place the console formats them (docs/extending.md, "Languages").

Money shows the currency's sign and at least its minor units (ISO 4217: two decimals for USD,
none for JPY, three for BHD). An amount with more decimals than its currency's minor units
(money keeps six: models/base.py Money) shows them all: a page never shows a rounded amount for
one that was charged or is to be."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime
from babel.numbers import format_currency, format_decimal

DEFAULT_LANGUAGE = "en"


def _locale(language: str) -> Locale:
    try:
        return Locale.parse(language or DEFAULT_LANGUAGE, sep="-")
    except (ValueError, TypeError, UnknownLocaleError):
        return Locale.parse(DEFAULT_LANGUAGE)


def direction(language: str) -> str:
    """"rtl" for a language written right to left (<html dir>), else "ltr"."""
    return "rtl" if _locale(language).character_order == "right-to-left" else "ltr"


def count_text(number: Any, language: str = DEFAULT_LANGUAGE) -> str:
    """A whole count grouped as the language groups digits: 1,234 in English, 1.234 in German."""
    try:
        return format_decimal(int(number), locale=_locale(language))
    except (TypeError, ValueError):
        return str(number)


def time_text(value: Any, language: str = DEFAULT_LANGUAGE) -> str:
    """A stored time (RFC 3339, models/base.py) in the language's medium date and time, in UTC as
    stored: "Nov 29, 2026, 2:21:54 PM" in English, "29.11.2026, 14:21:54" in German. What is not
    a time is shown as is."""
    text = str(value or "")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    moment = moment.astimezone(UTC) if moment.tzinfo else moment
    return format_datetime(moment, "medium", tzinfo=UTC if moment.tzinfo else None, locale=_locale(language))


def money_text(amount: Any, currency: str, language: str = DEFAULT_LANGUAGE) -> str:
    """"$4.20" for (4.2, "USD") in English, "¥300" for (300, "JPY"); "" for what is not an amount
    (an absent price). Without a currency, the number alone."""
    if isinstance(amount, bool) or not isinstance(amount, int | float | str | Decimal):
        return ""
    try:
        value = Decimal(str(amount))
    except InvalidOperation:
        return ""
    if not value.is_finite():
        return ""
    locale = _locale(language)
    if not currency:
        return format_decimal(value, locale=locale, decimal_quantization=False)
    return format_currency(value, currency.upper(), locale=locale, decimal_quantization=False)
