"""`t("...")`: a catalog string in the viewer's language, as a Var.

Keys are checked when the pages compile: a string missing from the catalog
fails the build instead of showing up untranslated."""

from __future__ import annotations

import reflex as rx

from iam_console.i18n import DEFAULT_LANGUAGE, catalog
from iam_console.ui.state.prefs import Prefs


def t(key: str) -> rx.Var:
    if key not in catalog(DEFAULT_LANGUAGE):
        raise KeyError(f"missing from iam_console/i18n/en.json: {key!r}")
    if not isinstance(catalog(DEFAULT_LANGUAGE)[key], str):
        raise KeyError(f"a counted message is said with its count (Prefs.say), not t(): {key!r}")
    return Prefs.tr[key]
