"""An organization's theme as the console's Radix settings (ui/theme.py)."""

from __future__ import annotations

import pytest

from iam_console.core import builtin as b
from iam_console.ui.theme import CONSOLE_DEFAULT, ConsoleTheme, console_theme


@pytest.mark.parametrize("stored", [None, {}, "junk", {"isEnabled": False, "colorPrimary": "#E0282E"},
                                    {"isEnabled": "true", "colorPrimary": "#E0282E"}])
def test_an_organization_following_the_global_theme_keeps_the_default(stored):
    assert console_theme(stored) == CONSOLE_DEFAULT


def test_every_preset_colour_has_its_own_accent():
    accents = {console_theme({"isEnabled": True, "colorPrimary": color}).accent for color in b.THEME_COLORS}
    assert len(accents) == len(b.THEME_COLORS) and CONSOLE_DEFAULT.accent not in accents


@pytest.mark.parametrize(("radius", "step"), [(0, "none"), (4, "small"), (6, "medium"), (12, "large"),
                                               (16, "full"), (20, "full"), ("x", "medium"), (None, "medium")])
def test_the_radius_maps_onto_radix_steps(radius, step):
    assert console_theme({"isEnabled": True, "borderRadius": radius}).radius == step


def test_a_custom_theme():
    stored = {"isEnabled": True, "themeType": "lark", "colorPrimary": "#00b96b", "borderRadius": 4, "isCompact": True}
    assert console_theme(stored) == ConsoleTheme(accent="jade", radius="small", compact=True)


def test_an_unknown_colour_falls_back_to_the_default_accent():
    assert console_theme({"isEnabled": True, "colorPrimary": "#123456"}).accent == CONSOLE_DEFAULT.accent
