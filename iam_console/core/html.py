"""HTML that administrators write for public pages (an application's side panel on the sign-in
page, the labels of custom signin and signup items): shown to visitors who are not signed in, so
it is cleaned first (nh3, an allow-list: no script, no event handler attribute, no javascript:
URL; links open with rel="noopener noreferrer")."""

from __future__ import annotations

import nh3

MAX_LENGTH = 100_000


def safe(html: str) -> str:
    """`html` with only harmless tags and attributes kept; text beyond MAX_LENGTH is dropped."""
    return nh3.clean((html or "")[:MAX_LENGTH], link_rel="noopener noreferrer")
