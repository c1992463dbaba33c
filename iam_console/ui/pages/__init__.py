"""Every page of the console: each extension's page modules (`Extension.pages`,
iam_console/extension.py; the built-in features' are declared in iam_console/features.py), each of
which registers its own pages and declares its screens; then every declared screen's pages
(ui/components/screen_pages.py). A page module no extension declares is not part of the console."""

from iam_console.extension import extensions, imported
from iam_console.ui.components.screen_pages import register
from iam_console.ui.screens import SCREENS

MODULES = tuple(imported(path, extension.name) for extension in extensions() for path in extension.pages)
for _declared in SCREENS.values():
    register(_declared)
