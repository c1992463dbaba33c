"""Amounts of money as people read them: the currency's sign and at least its minor units
(ISO 4217: two decimals for USD, none for JPY, three for BHD), grouped and signed as the
reader's language writes them, by Babel (the CLDR data). An amount with more decimals than its
currency's minor units (money keeps six: models/base.py Money) shows them all: a page never
shows a rounded amount for one that was charged or is to be."""

from __future__ import annotations

from decimal import Decimal, InvalidOperation
from typing import Any

from babel import Locale, UnknownLocaleError
from babel.numbers import format_currency, format_decimal

DEFAULT_LANGUAGE = "en"


def _locale(language: str) -> Locale:
    try:
        return Locale.parse(language or DEFAULT_LANGUAGE, sep="-")
    except (ValueError, TypeError, UnknownLocaleError):
        return Locale.parse(DEFAULT_LANGUAGE)


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
