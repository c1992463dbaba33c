"""Every page of the console: importing this package imports each module in it (the built-in
features' pages, until they move into packages of their own) and every page module an extension
declares (`Extension.pages`, iam_console/extension.py); each registers its own pages and declares
its screens. Then every declared screen's pages are registered (ui/components/screen_pages.py). A
new module or screen cannot be left out."""

import importlib
import pkgutil

from iam_console.extension import extensions, imported
from iam_console.ui.components.screen_pages import register
from iam_console.ui.screens import SCREENS

MODULES = tuple(importlib.import_module(f"{__name__}.{info.name}")
                for info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name))
EXTENSION_MODULES = tuple(imported(path, extension.name) for extension in extensions() for path in extension.pages)
for _declared in SCREENS.values():
    register(_declared)
