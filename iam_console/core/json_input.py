"""JSON from outside: the one parser every request body (and every JSON cell of an
uploaded workbook) goes through, so that what it refuses is refused everywhere.

Python's json module takes more than RFC 8259 allows and more than the server can
keep: it reads NaN, Infinity and -Infinity, turns 1e400 into inf (a row holding one
breaks every list that includes it, since a response cannot carry it), and it
recurses once per level of nesting (a document nested a thousand levels deep
exhausts the interpreter's stack, or with a raised recursion limit the C stack). Here all three
are a clear error instead, the nesting counted before parsing."""

from __future__ import annotations

import json
import math
import re
from typing import Any

from iam_console.core.errors import ServiceError

# Casdoor's objects nest a few levels (an application's providers hold a provider);
# this leaves room for free-form JSON fields (properties) while staying far from the
# interpreter's recursion limit (~1,000 frames, some taken by the server itself).
MAX_DEPTH = 64

INVALID = "The request body is not valid JSON"
TOO_DEEP = "The request body nests deeper than %d levels"
NOT_FINITE = "The request body holds a number that is not finite (NaN, Infinity or beyond ±1.8e308)"


class JsonRefused(ServiceError, ValueError):
    """Not JSON the server takes; a ValueError too, as json.loads would raise."""


def _refuse_constant(_name: str) -> float:
    raise JsonRefused(NOT_FINITE)


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise JsonRefused(NOT_FINITE)
    return value


# a JSON string (with its escapes), and a bracket: what nesting is counted on
STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
BRACKET = re.compile(r"[\[\]{}]")


def nests_deeper(raw: bytes | str, limit: int) -> bool:
    """Whether the text's brackets outside strings nest more than `limit` levels, counted before
    any parsing: json.loads recurses on the C stack once per level, so a document far deeper
    than the interpreter's recursion limit allows must never reach it (a library that raises
    that limit would turn the RecursionError into a crash of the worker)."""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    depth = 0
    for bracket in BRACKET.finditer(STRING.sub('""', text)):
        depth += 1 if bracket[0] in "[{" else -1
        if depth > limit:
            return True
    return False


def parse_json(raw: bytes | str) -> Any:
    """The JSON document in `raw` (UTF-8 bytes or text); JsonRefused when it is not
    JSON, holds a non-finite number or nests deeper than MAX_DEPTH."""
    brackets = (b"[", b"{") if isinstance(raw, bytes) else ("[", "{")
    # fewer brackets than the limit cannot nest past it: the count is for the rare rest
    if raw.count(brackets[0]) + raw.count(brackets[1]) > MAX_DEPTH and nests_deeper(raw, MAX_DEPTH):
        raise JsonRefused(TOO_DEEP, MAX_DEPTH)
    try:
        return json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except JsonRefused:
        raise
    except (ValueError, UnicodeDecodeError):
        raise JsonRefused(INVALID) from None
