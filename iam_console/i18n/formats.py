"""Dates, counts and amounts of money as the reader's language writes them, by Babel (the CLDR
data): the one place the console formats them (docs/extending.md, "Languages").

Money shows the currency's sign and at least its minor units (ISO 4217: two decimals for USD,
none for JPY, three for BHD). An amount with more decimals than its currency's minor units
(money keeps six: models/base.py Money) shows them all: a page never shows a rounded amount for
one that was charged or is to be."""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.dates import format_datetime, format_skeleton, format_time
from babel.numbers import format_currency, format_decimal, format_percent
from babel.units import format_unit

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


def decimal_text(number: float, language: str = DEFAULT_LANGUAGE, places: int = 1) -> str:
    """A measure with a fixed number of decimals, in the language's signs: 1,234.5 in English,
    1.234,5 in German."""
    return format_decimal(number, format="#,##0." + "0" * places, locale=_locale(language))


def percent_text(percent: float, language: str = DEFAULT_LANGUAGE) -> str:
    """A percentage (12.5 for 12.5 %), rounded to one decimal, as the language writes it: "12.5%"
    in English, "12,5 %" in French."""
    share = Decimal(str(round(float(percent), 1))) / 100  # the language's own pattern, one decimal kept
    return format_percent(share, locale=_locale(language), decimal_quantization=False)


BINARY_UNITS = ("byte", "kilobyte", "megabyte", "gigabyte", "terabyte")


def size_text(size: int, language: str = DEFAULT_LANGUAGE) -> str:
    """A size in bytes in binary steps (1,024) with the language's unit names: "268.4 MB",
    "268,4 Mo" in French."""
    amount, unit = float(size), BINARY_UNITS[0]
    for unit in BINARY_UNITS:
        if amount < 1024 or unit == BINARY_UNITS[-1]:
            break
        amount /= 1024
    pattern = "#,##0" if unit == "byte" else "#,##0.0"
    return format_unit(amount, f"digital-{unit}", length="short", format=pattern, locale=_locale(language))


def clock_text(moment: datetime, language: str = DEFAULT_LANGUAGE) -> str:
    """A time of day in UTC as the language writes it: "2:21:54 PM" in English, "14:21:54" in
    German."""
    return format_time(moment, "medium", tzinfo=UTC, locale=_locale(language))


def day_text(day: date, language: str = DEFAULT_LANGUAGE) -> str:
    """A day of the year without the year, short: "11/29" in English, "29.11." in German."""
    return format_skeleton("Md", day, locale=_locale(language))
