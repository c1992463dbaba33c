"""Which redirect URIs an application may send codes and tokens to.

A URI is accepted only when it equals a registered entry, or when a registered
entry written as a regular expression matches the whole URI. Before either,
the URI itself must be plain: an http(s) or a native app's scheme (never
javascript:, data:, file:, ...), no user-info ('@') in the authority, no
fragment, no backslashes, dot segments or control characters that browsers
and servers read differently."""

from __future__ import annotations

import functools
import re
from urllib.parse import unquote, urlencode, urlsplit

MAX_LENGTH = 1000
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


@functools.lru_cache(maxsize=1024)
def _pattern(entry: str) -> re.Pattern | None:
    if not REGEX_MARKERS.search(entry):
        return None
    try:
        return re.compile(entry)
    except re.error:
        return None


def matches(uri: str, registered: list) -> bool:
    """Whether `uri` may receive a code or token of an application with these entries."""
    if not is_plain(uri):
        return False
    entries = [e for e in registered if isinstance(e, str) and e]
    if uri in entries:
        return True
    return any((pattern := _pattern(e)) is not None and pattern.fullmatch(uri) for e in entries)


def with_parameters(uri: str, parameters: dict[str, str], *, fragment: bool = False) -> str:
    """The URI with the response parameters added to its query (or as its fragment)."""
    encoded = urlencode({k: v for k, v in parameters.items() if v not in (None, "")})
    if fragment:
        return f"{uri}#{encoded}"
    return f"{uri}{'&' if '?' in uri else '?'}{encoded}"
