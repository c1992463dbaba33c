"""Regular expressions that an admin writes and anyone's input is matched against (redirect
URI patterns, account items' regexes) run on RE2: its matching time is linear in the input's
length whatever the pattern, where a backtracking engine takes exponential time on a pattern
such as `(a+)+b`, so that one admin's pattern cannot stall the server for everyone. RE2 has no
backreferences or lookaround; a pattern it cannot compile (or one whose compiled program would
exceed PATTERN_MEMORY) is refused when it is saved, with RE2's reason."""

from __future__ import annotations

import functools

import re2

PATTERN_MEMORY = 1 << 20  # bounds the compiled program, and with it the work per input character
MAX_PATTERN_LENGTH = 1000


class PatternError(ValueError):
    """A pattern RE2 cannot take; the message is RE2's reason."""


def _options() -> re2.Options:
    options = re2.Options()
    options.max_mem = PATTERN_MEMORY
    options.log_errors = False  # a refused pattern is the caller's error, not the server's
    return options


OPTIONS = _options()


@functools.lru_cache(maxsize=1024)
def compiled(pattern: str):
    """The pattern compiled by RE2 (remembered); PatternError when RE2 refuses it."""
    if len(pattern) > MAX_PATTERN_LENGTH:
        raise PatternError(f"longer than {MAX_PATTERN_LENGTH} characters")
    try:
        return re2.compile(pattern, OPTIONS)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else ""
        raise PatternError(reason.decode(errors="replace") if isinstance(reason, bytes) else str(reason)) from None


def fullmatch(pattern: str, text: str) -> bool:
    """Whether the whole text matches; PatternError when RE2 refuses the pattern."""
    return compiled(pattern).fullmatch(text) is not None
