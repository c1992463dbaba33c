"""Redirect URI patterns: the time one check of a redirect URI takes against the
registered entry `http://(a+)+b`, for a URI of n a's and a final 'c' (no match), on
Python's backtracking `re` (what the server used before) and on RE2 through
applications/redirects.matches (what it uses now). Python's time doubles with every
character, so its column stops at 24 a's; RE2's grows linearly up to the longest
URI accepted (1000 characters).

    .venv/bin/python bench/redirect_patterns.py
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from iam_console.applications import redirects

PATTERN = "http://(a+)+b"


def seconds(check, uri: str, repeat: int) -> float:
    start = time.perf_counter()
    for _ in range(repeat):
        check(uri)
    return (time.perf_counter() - start) / repeat


def main() -> None:
    backtracking = re.compile(PATTERN)
    print(f"{'n':>5}  {'Python re':>12}  {'RE2':>12}")
    for n in (8, 12, 16, 18, 20, 22, 24, 100, 500, 992):
        uri = "http://" + "a" * n + "c"
        python = f"{seconds(backtracking.fullmatch, uri, 1) * 1000:10.1f}ms" if n <= 24 else f"{'-':>12}"
        matched = seconds(lambda u: redirects.matches(u, [PATTERN]), uri, 1000)
        assert not redirects.matches(uri, [PATTERN])
        print(f"{n:>5}  {python}  {matched * 1e6:10.1f}µs")


if __name__ == "__main__":
    main()
