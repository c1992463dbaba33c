"""JSON from outside: the one parser every request body (and every JSON cell of an
uploaded workbook) goes through, so that what it refuses is refused everywhere.

Python's json module takes more than RFC 8259 allows and more than the server can
keep: it reads NaN, Infinity and -Infinity, turns 1e400 into inf (a row holding one
breaks every list that includes it, since a response cannot carry it), and it
recurses once per level of nesting (a document nested a thousand levels deep
exhausts the interpreter's stack). Here all three are a clear error instead."""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import ServiceError

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


def _too_deep(value: Any, limit: int) -> bool:
    """Whether containers nest more than `limit` levels (iterative: the walk itself
    must not recurse)."""
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def parse_json(raw: bytes | str) -> Any:
    """The JSON document in `raw` (UTF-8 bytes or text); JsonRefused when it is not
    JSON, holds a non-finite number or nests deeper than MAX_DEPTH."""
    brackets = (b"[", b"{") if isinstance(raw, bytes) else ("[", "{")
    opening = raw.count(brackets[0]) + raw.count(brackets[1])
    try:
        value = json.loads(raw, parse_constant=_refuse_constant, parse_float=_finite_float)
    except JsonRefused:
        raise
    except RecursionError:
        raise JsonRefused(TOO_DEEP, MAX_DEPTH) from None
    except (ValueError, UnicodeDecodeError):
        raise JsonRefused(INVALID) from None
    # fewer brackets than the limit cannot nest past it: the walk is for the rare rest
    if opening > MAX_DEPTH and isinstance(value, dict | list) and _too_deep(value, MAX_DEPTH):
        raise JsonRefused(TOO_DEEP, MAX_DEPTH)
    return value
