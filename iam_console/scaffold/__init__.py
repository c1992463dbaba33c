"""`python -m iam_console new-extension NAME`: a new extension's project, written from the
templates beside this module (docs/extending.md, "Start from the scaffold").

The templates are string.Template texts: `$name` and the other values of `values()` are
replaced, nothing else. What they write follows the contract of iam_console/extension.py as the
walk-through of docs/extending.md builds it by hand: an entry point named after the extension, one
kind with its rules and screen, an entry in the built-in Admin menu group, the kind's table on the
extension's own Alembic branch, and tests of the kind through the HTTP API.
"""

from __future__ import annotations

from pathlib import Path
from string import Template

from iam_console.extension import Extension, ExtensionError, installed

TEMPLATES = Path(__file__).resolve().parent / "template"
# (the file written, under the project's folder: a Template over values(); its template)
FILES = (
    ("pyproject.toml", "pyproject.toml.tmpl"),
    ("README.md", "README.md.tmpl"),
    ("$package/__init__.py", "package/__init__.py.tmpl"),
    ("$package/models.py", "package/models.py.tmpl"),
    ("$package/rules.py", "package/rules.py.tmpl"),
    ("$package/pages.py", "package/pages.py.tmpl"),
    ("$package/migrations/${revision}_$table.py", "package/migrations/revision.py.tmpl"),
    ("$package/translations/en.json", "package/translations/en.json.tmpl"),
    ("$package/translations/zh.json", "package/translations/zh.json.tmpl"),
    ("tests/conftest.py", "tests/conftest.py.tmpl"),
    ("tests/test_${name}_api.py", "tests/test_api.py.tmpl"),
)


class ScaffoldError(Exception):
    """A project that cannot be written: the message says why."""


def values(name: str) -> dict[str, str]:
    """What the templates name, from the extension's name ("support_ticket"): the kind has the
    extension's name; its list is at /support-tickets, titled "Support tickets"."""
    words = name.replace("_", " ")
    return {
        "name": name,  # the extension, its entry point, its migrations' branch, its kind
        "package": f"iam_{name}",
        "distribution": f"iam-{name.replace('_', '-')}",
        "model": "".join(part.capitalize() for part in name.split("_")),
        "table": name,
        "title": words.capitalize(),
        "titles": f"{words.capitalize()}s",
        "route": f"/{name.replace('_', '-')}s",
        "revision": "0001",
    }


def taken() -> set[str]:
    """The names a new extension's kind and table may not take: the built-in kinds and tables,
    and the installed extensions' names (read from their entry points, without loading them)."""
    from sqlmodel import SQLModel

    import iam_console.models  # noqa: F401  (registers every table)
    from iam_console.core.resources import built_in_kinds

    return ({kind.name for kind in built_in_kinds()} | set(SQLModel.metadata.tables)
            | {point for point, _ in installed()} | {"core"})


def check_name(name: str) -> None:
    """The contract's rule for an extension's name (iam_console/extension.py), and no name the
    product or an installed extension already uses."""
    try:
        Extension(name)
    except ExtensionError as exc:
        raise ScaffoldError(str(exc)) from None
    if name in taken():
        raise ScaffoldError(f"The name {name} is already a kind, a table or an extension of this console: "
                            "choose another")


def write(name: str, into: Path) -> Path:
    """Write the project of the extension `name` into a new folder under `into`; its path."""
    check_name(name)
    filled = values(name)
    target = Path(into) / filled["distribution"]
    if target.exists():
        raise ScaffoldError(f"{target} already exists: remove it or choose another folder with --into")
    texts = {Template(path).substitute(filled): Template((TEMPLATES / template).read_text()).substitute(filled)
             for path, template in FILES}
    for path, text in texts.items():
        written = target / path
        written.parent.mkdir(parents=True, exist_ok=True)
        written.write_text(text)
    return target
