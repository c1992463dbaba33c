"""An organization's theme (themeData, edited on its page) as the
Radix theme settings of its members' console: the accent colour, the corner
radius and compact scaling. Dark stays the viewer's own choice (the switcher)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..services import builtin as b

# the 8 preset colours of the theme editor, each to the Radix accent closest to it
ACCENTS = dict(zip((color.upper() for color in b.THEME_COLORS),
                   ("violet", "iris", "plum", "pink", "red", "orange", "amber", "jade"), strict=True))
# Radix's radius steps for the editor's 0..20 px
RADIUS_STEPS = ((0, "none"), (4, "small"), (9, "medium"), (15, "large"), (b.THEME_RADIUS_MAX, "full"))


@dataclass(frozen=True)
class ConsoleTheme:
    accent: str = "blue"
    radius: str = "medium"
    compact: bool = False


CONSOLE_DEFAULT = ConsoleTheme()


def console_theme(theme_data: Any) -> ConsoleTheme:
    """The console's look for an organization: its own theme when it customizes one, else the default."""
    stored = theme_data if isinstance(theme_data, dict) else {}
    if stored.get("isEnabled") is not True:
        return CONSOLE_DEFAULT
    theme = {**b.THEME_DEFAULT, **stored}
    try:
        radius = int(theme["borderRadius"])
    except (TypeError, ValueError):
        radius = b.THEME_DEFAULT["borderRadius"]
    step = next((name for bound, name in RADIUS_STEPS if radius <= bound), "full")
    accent = ACCENTS.get(str(theme["colorPrimary"]).upper(), CONSOLE_DEFAULT.accent)
    return ConsoleTheme(accent=accent, radius=step, compact=theme["isCompact"] is True)
