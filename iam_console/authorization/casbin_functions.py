"""Casbin's matcher functions that compile a pattern, on RE2 (docs/security.md, "Tenant patterns
and matchers").

pycasbin's `regexMatch`, `keyMatch2` to `keyMatch5` and `globMatch` hand a policy's (or a
request's) text to Python's backtracking `re` or to a recursive glob matcher: `regexMatch(r.obj,
p.obj)` with the policy `^(a+)+$` takes seconds on 27 characters, and each `*` of a glob
multiplies the work by the text's length. These replacements answer as pycasbin's do on the
patterns both accept, in time linear in the text: every pattern runs on RE2 (core/patterns.py:
compiled programs bounded in memory, at most MAX_PATTERN_LENGTH characters), a pattern RE2
refuses (a backreference, a lookaround) is refused with RE2's reason, and a text longer than
MAX_TEXT is refused rather than matched. `FUNCTIONS` is what the engine registers over pycasbin's
own; `ROLE_MATCHING` maps pycasbin's functions to these wherever one is installed as a role
manager's matching function.

Where RE2 and pycasbin differ on purpose (docs/api.md, "Deliberate differences"): `$` matches
only at the end of the text (as in Go's Casbin, which Casdoor runs), not also before a final
newline; and in `globMatch` a `*` stands for any run of characters other than `/` (Go's
`path.Match`, which pycasbin's glob follows), where pycasbin 1.43 also skips the character after
it (`a*c` matching `abd`)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import re2
from casbin import util as casbin_util

from iam_console.core import patterns
from iam_console.core.errors import ServiceError

MAX_TEXT = 10_000  # characters a pattern is matched against: RE2's time is linear in it

_KEY2_PARAMETER = re2.compile(r":[^/]+")  # keyMatch2's `:name`
_KEY3_PARAMETER = re2.compile(r"\{[^/]+?\}")  # keyMatch3's `{name}`
_KEY4_PARAMETER = re2.compile(r"\{([^/]+)\}")  # keyMatch4's `{name}`, kept for the repeat check
_KEY5_PARAMETER = re2.compile(r"\{[^/]+\}")  # keyMatch5's `{name}`
NEVER = r"[^\x00-\x{10FFFF}]"  # a class no character is in


def _pattern(pattern: Any):
    if not isinstance(pattern, str):
        raise ServiceError("A Casbin pattern must be a text, not %s", type(pattern).__name__)
    try:
        return patterns.compiled(pattern)
    except patterns.PatternError as exc:
        raise ServiceError("The pattern %s cannot be used: %s", pattern[:100], str(exc)) from None


def _text(text: Any) -> str:
    if not isinstance(text, str):
        raise ServiceError("A text matched against a Casbin pattern must be a text, not %s", type(text).__name__)
    if len(text) > MAX_TEXT:
        raise ServiceError("A text matched against a Casbin pattern has more than %d characters", MAX_TEXT)
    return text


def _key_pattern(key: Any) -> str:
    """A keyMatch pattern before its rewriting (bounded first: the rewriting's work grows with it)."""
    if not isinstance(key, str):
        raise ServiceError("A Casbin pattern must be a text, not %s", type(key).__name__)
    if len(key) > patterns.MAX_PATTERN_LENGTH:
        raise ServiceError("The pattern %s cannot be used: %s", key[:100],
                           f"longer than {patterns.MAX_PATTERN_LENGTH} characters")
    return key.replace("/*", "/.*")


def regex_match(key1: Any, key2: Any) -> bool:
    """pycasbin's regexMatch: whether the text starts with a match of the pattern."""
    return _pattern(key2).match(_text(key1)) is not None


def _whole(key1: Any, regex: str):
    return _pattern("^" + regex + "$").match(_text(key1))


def key_match2(key1: Any, key2: Any) -> bool:
    """`/resource1` matches `/:resource`; `/*` is any rest."""
    regex = _KEY2_PARAMETER.sub(r"[^\\/]+", _key_pattern(key2))
    return _whole(key1, "(.*)" if regex == "*" else regex) is not None


def key_match3(key1: Any, key2: Any) -> bool:
    """`/resource1` matches `/{resource}`."""
    return _whole(key1, _KEY3_PARAMETER.sub(r"[^\\/]+", _key_pattern(key2))) is not None


def key_match4(key1: Any, key2: Any) -> bool:
    """keyMatch3, where a name repeated must stand for the same value each time."""
    tokens: list[str] = []

    def parameter(found) -> str:
        tokens.append(found.group(1))
        return "([^/]+)"

    found = _whole(key1, _KEY4_PARAMETER.sub(parameter, _key_pattern(key2)))
    if found is None:
        return False
    values = found.groups()
    if len(tokens) != len(values):
        raise ServiceError("KeyMatch4: number of tokens is not equal to number of values")
    seen: dict[str, str] = {}
    return all(seen.setdefault(token, value) == value for token, value in zip(tokens, values, strict=True))


def key_match5(key1: Any, key2: Any) -> bool:
    """keyMatch3 on the path alone: the query string (from `?`) is ignored."""
    path = _text(key1).partition("?")[0]
    return _whole(path, _KEY5_PARAMETER.sub(r"[^/]+", _key_pattern(key2))) is not None


# --- globMatch ---

def _class_char(code: int) -> str:
    return f"\\x{{{code:X}}}"


def _glob_class(pattern: str, i: int) -> tuple[str, int]:
    """The RE2 class of the glob class opening before `i`, read as pycasbin reads it (`!` or `^`
    negates, `\\` escapes, `a-z` ranges, an unterminated class runs to the end), and where it
    ends; never `/`. A class pycasbin can never match (`[` last, a trailing `\\`) is NEVER."""
    n = len(pattern)
    if i == n:
        return NEVER, n
    negate = pattern[i] in "!^"
    i += 1 if negate else 0
    ranges: list[tuple[int, int]] = []
    while i < n:
        c = pattern[i]
        i += 1
        if c == "]":
            break
        if c == "\\":
            if i == n:
                return NEVER, n
            c, i = pattern[i], i + 1
        if i != n and pattern[i] == "-" and i + 1 != n and pattern[i + 1] != "]":
            high, i = pattern[i + 1], i + 2
            if high == "\\":
                if i == n:
                    return NEVER, n
                high, i = pattern[i], i + 1
            ranges.append((ord(c), ord(high)))
        else:
            ranges.append((ord(c), ord(c)))
    parts = []
    for low, high in ranges:
        # RE2 text is UTF-8: no surrogates; and `/` is never in a glob class
        for start, end in ((low, min(high, 0x2E)), (max(low, 0x30), min(high, 0xD7FF)),
                           (max(low, 0xE000), high)):
            if start <= end:
                parts.append(_class_char(start) if start == end else f"{_class_char(start)}-{_class_char(end)}")
    if negate:
        return "[^" + "".join(parts) + "/]", i
    return ("[" + "".join(parts) + "]" if parts else NEVER), i


def glob_regex(pattern: str) -> str:
    """The RE2 regex (matched whole) of a glob: `*` any run of characters but `/`, `?` one
    such character, `[...]` a class of them, `\\` escapes the next character."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        i += 1
        if c == "*":
            while i < n and pattern[i] == "*":
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            piece, i = _glob_class(pattern, i)
            out.append(piece)
        else:
            if c == "\\" and i < n:
                c, i = pattern[i], i + 1
            out.append(re2.escape(c))
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str):
    try:
        return re2.compile(glob_regex(pattern), patterns.OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        reason = reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)
        raise ServiceError("The pattern %s cannot be used: %s", pattern[:100], reason) from None


def glob_match(string: Any, pattern: Any) -> bool:
    if not isinstance(pattern, str):
        raise ServiceError("A Casbin pattern must be a text, not %s", type(pattern).__name__)
    if len(pattern) > patterns.MAX_PATTERN_LENGTH:
        raise ServiceError("The pattern %s cannot be used: %s", pattern[:100],
                           f"longer than {patterns.MAX_PATTERN_LENGTH} characters")
    return _glob(pattern).fullmatch(_text(string)) is not None


def _two(function: Callable[[Any, Any], bool]) -> Callable[..., bool]:
    """As pycasbin's wrappers: the first two arguments."""
    def wrapper(*args: Any) -> bool:
        return function(args[0], args[1])
    wrapper.__name__ = function.__name__
    return wrapper


FUNCTIONS: dict[str, Callable[..., bool]] = {
    "regexMatch": _two(regex_match), "keyMatch2": _two(key_match2), "keyMatch3": _two(key_match3),
    "keyMatch4": _two(key_match4), "keyMatch5": _two(key_match5), "globMatch": _two(glob_match)}

# pycasbin's own functions, as code may hand them to a role manager, and their replacements
ROLE_MATCHING: dict[Callable[..., Any], Callable[..., Any]] = {
    casbin_util.regex_match: regex_match, casbin_util.regex_match_func: FUNCTIONS["regexMatch"],
    casbin_util.key_match2: key_match2, casbin_util.key_match2_func: FUNCTIONS["keyMatch2"],
    casbin_util.key_match3: key_match3, casbin_util.key_match3_func: FUNCTIONS["keyMatch3"],
    casbin_util.key_match4: key_match4, casbin_util.key_match4_func: FUNCTIONS["keyMatch4"],
    casbin_util.key_match5: key_match5, casbin_util.key_match5_func: FUNCTIONS["keyMatch5"],
    casbin_util.glob_match: glob_match, casbin_util.glob_match_func: FUNCTIONS["globMatch"]}
