"""An organization's theme (themeData, edited on its page) as the
Radix theme settings of its members' console: the accent colour, the corner
radius and compact scaling. Dark stays the viewer's own choice (the switcher)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from iam_console.core import builtin as b

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


# Contrast the Radix defaults miss, for every accent an organization may choose (WCAG AA asks
# 4.5:1 for text): white on an accent's 9th step is 1.6:1 (amber) to 3.3:1 (blue), so solid
# buttons take the 11th step (4.5:1 or more); soft buttons and badges write in the 12th step;
# a select's placeholder takes the readable gray. A disabled switch that is on keeps a muted
# accent track, so a read-only "on" does not look like "off". In the dark theme solid buttons take
# the 8th step (white on it: 4.9:1 or more); the rest of Radix's dark colours pass as they are.
# A ghost button (a menu's trigger) hovered, focused or open sits on the accent's 3rd step, where
# its 11th step reads 4.25:1: it writes in the 12th. The toasts' rich colours in the light theme
# (sonner's text on its pale backgrounds: 3.1:1 to 4.4:1 at 13 px) take darker text of the same
# hues: 5.2:1 (success), 5.7:1 (info), 5.5:1 (warning), 5.3:1 (error); the dark theme's pass.
# No ">" or "<": the rules travel as the text of a <style> element.
READABLE_CSS = """
:root:not(.dark) .rt-BaseButton.rt-variant-solid:not(.rt-high-contrast):not([data-disabled]) {
  background-color: var(--accent-11); color: #fff;
}
:root:not(.dark) .rt-BaseButton.rt-variant-soft:not([data-disabled]),
:root:not(.dark) .rt-BaseButton.rt-variant-outline:not([data-disabled]),
:root:not(.dark) .rt-Badge.rt-variant-soft { color: var(--accent-12); }
.dark .rt-BaseButton.rt-variant-solid:not(.rt-high-contrast):not([data-disabled]) {
  background-color: var(--accent-8); color: #fff;
}
:root:not(.dark) .rt-BaseButton.rt-variant-ghost:not([data-disabled]):is(:hover, :focus, [data-state=open])
{
  color: var(--accent-12);
}
:root [data-sonner-toaster][data-sonner-theme=light] {
  --success-text: hsl(140, 100%, 24%); --info-text: hsl(210, 92%, 38%);
  --warning-text: hsl(31, 92%, 32%); --error-text: hsl(360, 100%, 40%);
}
.rt-SelectTrigger[data-placeholder] .rt-SelectTriggerInner { color: var(--gray-11); }
.rt-SwitchRoot[data-disabled][data-state="checked"]::before {
  background-color: var(--accent-a8); box-shadow: inset 0 0 0 1px var(--accent-a9);
}
"""
