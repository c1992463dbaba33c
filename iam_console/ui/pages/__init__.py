"""Every page module: importing this package imports each module in it, which
registers its own pages and declares its screens; then every declared screen's
pages are registered (ui/components/screen_pages.py). A new module or screen
cannot be left out."""

import importlib
import pkgutil

from ..components.screen_pages import register
from ..screens import SCREENS

MODULES = tuple(importlib.import_module(f"{__name__}.{info.name}")
                for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name))
for _declared in SCREENS.values():
    register(_declared)
