"""Every page module: importing this package imports each module in it, which
registers its pages (and its screens), so a new module cannot be left out."""

import importlib
import pkgutil

MODULES = tuple(importlib.import_module(f"{__name__}.{info.name}")
                for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name))
