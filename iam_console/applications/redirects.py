"""Which redirect URIs an application may send codes and tokens to.

A URI is accepted only when it equals a registered entry, or when a registered
entry written as a regular expression matches the whole URI. Before either,
the URI itself must be plain: an http(s) or a native app's scheme (never
javascript:, data:, file:, ...), no user-info ('@') in the authority, no
fragment, no backslashes, dot segments or control characters that browsers
and servers read differently.

Anyone can send a redirect URI (get-app-login is anonymous), so the regular
expressions run on RE2, whose matching time is linear in the URI's length
whatever the pattern: a backtracking engine takes exponential time on a pattern
such as `http://(a+)+b`. RE2 has no backreferences or lookaround (Casdoor's Go
regexps have none either), so an entry it cannot compile is refused when the
application is saved (`check_entries`), and both the URI and each entry are
bounded in length."""

from __future__ import annotations

import re
from urllib.parse import unquote, urlencode, urlsplit

from iam_console.core import patterns
from iam_console.core.errors import ServiceError

MAX_LENGTH = 1000  # of a redirect URI, and of a registered entry
FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "vbscript", "file", "blob", "about", "filesystem"})
# characters that make a registered entry a regular expression rather than a URL
REGEX_MARKERS = re.compile(r"[\^$*+()\[\]{}|\\]")


def is_plain(uri: str) -> bool:
    if not uri or len(uri) > MAX_LENGTH or any(ord(c) < 33 or ord(c) == 127 for c in uri):
        return False
    if "\\" in uri or "#" in uri:
        return False
    try:
        parts = urlsplit(uri)
    except ValueError:
        return False
    scheme = parts.scheme.lower()
    if not scheme or scheme in FORBIDDEN_SCHEMES:
        return False
    if scheme in ("http", "https"):
        if not parts.hostname or "@" in parts.netloc:
            return False
    elif "@" in parts.netloc:  # a native app's private-use scheme (com.example.app:/cb, RFC 8252)
        return False
    segments = unquote(unquote(parts.path)).split("/")
    return ".." not in segments and "." not in segments


def is_pattern(entry: str) -> bool:
    return REGEX_MARKERS.search(entry) is not None


def _matches_pattern(entry: str, uri: str) -> bool:
    """A regular-expression entry over the whole URI; an entry saved before `check_entries`
    existed that RE2 cannot take matches nothing."""
    if len(entry) > MAX_LENGTH or not is_pattern(entry):
        return False
    try:
        return patterns.fullmatch(entry, uri)
    except patterns.PatternError:
        return False


def check_entries(registered: list) -> None:
    """An application's redirect URIs, when it is saved: each at most MAX_LENGTH characters,
    and each regular expression one that RE2 compiles (core/patterns.py)."""
    for entry in registered:
        if not isinstance(entry, str):
            continue
        if len(entry) > MAX_LENGTH:
            raise ServiceError("The redirect URI %s... is longer than %d characters", entry[:50], MAX_LENGTH)
        if is_pattern(entry):
            try:
                patterns.compiled(entry)
            except patterns.PatternError as exc:
                raise ServiceError("The redirect URI %s is not a regular expression RE2 can match "
                                   "(no backreferences or lookaround): %s", entry[:200], str(exc)) from None


def matches(uri: str, registered: list) -> bool:
    """Whether `uri` may receive a code or token of an application with these entries."""
    if not is_plain(uri):
        return False
    entries = [e for e in registered if isinstance(e, str) and e]
    if uri in entries:
        return True
    return any(_matches_pattern(e, uri) for e in entries)


def with_parameters(uri: str, parameters: dict[str, str], *, fragment: bool = False) -> str:
    """The URI with the response parameters added to its query (or as its fragment)."""
    encoded = urlencode({k: v for k, v in parameters.items() if v not in (None, "")})
    if fragment:
        return f"{uri}#{encoded}"
    return f"{uri}{'&' if '?' in uri else '?'}{encoded}"
