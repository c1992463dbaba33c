"""`python -m iam_console new-extension NAME` (iam_console/scaffold): the project it writes, read
back as the console reads an extension; the contract's rule for the name; and a target that exists,
or a name the console uses already, refused with exit status 2 and nothing written.

The generated package is imported in a subprocess: importing it here would add its table to this
process's models, which other tests compare with the product's migrations."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from iam_console.__main__ import main

PROJECT_DIR = Path(__file__).resolve().parents[2]
LONGEST = "a" * 30 + "_bcdefghi"  # 39 characters; with the trailing letter below, the contract's 40
FILES = {
    "pyproject.toml", "README.md", "iam_support_ticket/__init__.py", "iam_support_ticket/models.py",
    "iam_support_ticket/rules.py", "iam_support_ticket/pages.py",
    "iam_support_ticket/migrations/0001_support_ticket.py", "iam_support_ticket/translations/en.json",
    "iam_support_ticket/translations/zh.json", "tests/conftest.py", "tests/test_support_ticket_api.py",
}
# what the generated declaration and screen say, read in a process of its own
READ_BACK = """
import json, pathlib
from iam_support_ticket import EXTENSION as e
import iam_support_ticket.pages
from iam_console.core.resources import Ownership
from iam_console.ui.screens import SCREENS
kind = e.kinds[0]
screen = SCREENS["support_ticket"]
from iam_console.i18n import FOLDER
# a label missing from the merged English catalog stops the console's build (iam_console/ui/text.py)
own = pathlib.Path(e.translations)
keys = {*json.loads((FOLDER / "en.json").read_text()), *json.loads((own / "en.json").read_text())}
labels = {screen.title, screen.edit_title, *(c.label for c in screen.columns), *(f.label for f in screen.fields),
          *(m.label for m in e.menu)}
print(json.dumps({
    "name": e.name, "kinds": [k.name for k in e.kinds], "ownership": kind.ownership is Ownership.ORGANIZATION,
    "columns": sorted(kind.model.model_fields), "table": kind.model.__tablename__, "rules": sorted(e.rules),
    "validates": e.rules["support_ticket"].validate is not None, "pages": list(e.pages),
    "menu": [[m.group, m.route, m.label, m.seen_by] for m in e.menu], "migrations": e.migrations,
    "screen": [screen.list_route, screen.edit_route, screen.title, [f.key for f in screen.fields]],
    "missing labels": sorted(labels - keys), "zh": json.loads((own / "zh.json").read_text()),
}))
"""


def scaffold(*argv: str) -> int:
    return main(["new-extension", *argv])


def test_the_project_holds_an_extension_as_the_contract_declares_one(tmp_path, capsys):
    assert scaffold("support_ticket", "--into", str(tmp_path)) == 0
    target = tmp_path / "iam-support-ticket"
    assert str(target) in capsys.readouterr().out
    assert {str(p.relative_to(target)) for p in target.rglob("*") if p.is_file()} == FILES

    project = tomllib.loads((target / "pyproject.toml").read_text())
    assert project["project"]["name"] == "iam-support-ticket"
    assert project["project"]["entry-points"]["iam_console.extensions"] == {
        "support_ticket": "iam_support_ticket:EXTENSION"}  # the entry point carries the extension's name

    read = subprocess.run([sys.executable, "-c", READ_BACK], cwd=PROJECT_DIR, capture_output=True, text=True,
                          env={"PYTHONPATH": f"{target}:{PROJECT_DIR}", "PATH": "/usr/bin:/bin"}, timeout=120)
    assert read.returncode == 0, read.stderr
    declared = json.loads(read.stdout)
    assert declared == {
        "name": "support_ticket", "kinds": ["support_ticket"], "ownership": True,
        "columns": ["created_time", "display_name", "name", "owner", "pk", "text"], "table": "support_ticket",
        "rules": ["support_ticket"], "validates": True, "pages": ["iam_support_ticket.pages"],
        "menu": [["/admin", "/support-tickets", "Support tickets", "admins"]],
        "migrations": str(target / "iam_support_ticket" / "migrations"),
        "screen": ["/support-tickets", "/support-tickets/{owner}/{name}", "Support tickets", ["displayName", "text"]],
        "missing labels": [], "zh": {"Text": "文本", "The display name cannot be empty": "显示名称不能为空"},
    }

    revision = (target / "iam_support_ticket/migrations/0001_support_ticket.py").read_text()
    # the first revision of the extension's own branch (docs/extending.md, "Migrations")
    assert 'down_revision = None\nbranch_labels = ("support_ticket",)' in revision
    assert 'op.create_table(\n        "support_ticket",' in revision


@pytest.mark.parametrize("name", ["note", LONGEST + "j"])
def test_the_generated_code_is_ruff_clean(tmp_path, name):
    assert len(name) <= 40
    assert scaffold(name, "--into", str(tmp_path)) == 0
    ruff = str(PROJECT_DIR / ".venv" / "bin" / "ruff")
    # under the console's own configuration, and under the project's (as its authors will run it)
    for command, cwd in (([ruff, "check", "--config", str(PROJECT_DIR / "pyproject.toml"), str(tmp_path)], PROJECT_DIR),
                         ([ruff, "check", "."], next(tmp_path.iterdir()))):
        checked = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=60)
        assert checked.returncode == 0, checked.stdout + checked.stderr


@pytest.mark.parametrize("name", ["", "Tickets", "1st", "a-b", "x" * 41, "tickets!"])
def test_a_name_breaking_the_contracts_rule_is_refused(tmp_path, capsys, name):
    assert scaffold(name, "--into", str(tmp_path)) == 2
    assert "must be lowercase letters, digits and underscores, starting with a letter" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["user", "core", "auth_session"])  # a kind, the built-in extension, a table
def test_a_name_the_console_uses_is_refused(tmp_path, capsys, name):
    assert scaffold(name, "--into", str(tmp_path)) == 2
    assert f"The name {name} is already a kind, a table or an extension" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_an_existing_target_is_refused_and_left_alone(tmp_path, capsys):
    assert scaffold("note", "--into", str(tmp_path)) == 0
    models = tmp_path / "iam-note" / "iam_note" / "models.py"
    models.write_text("# edited by its author\n")
    assert scaffold("note", "--into", str(tmp_path)) == 2
    assert f"{tmp_path / 'iam-note'} already exists" in capsys.readouterr().err
    assert models.read_text() == "# edited by its author\n"

    (tmp_path / "iam-other").mkdir()  # even empty
    assert scaffold("other", "--into", str(tmp_path)) == 2
    assert list((tmp_path / "iam-other").iterdir()) == []


def test_the_command_line(tmp_path):
    """Through `python -m iam_console`, as its users run it: the status is the process's."""
    run = [sys.executable, "-m", "iam_console", "new-extension"]
    written = subprocess.run([*run, "note", "--into", str(tmp_path)], cwd=PROJECT_DIR, capture_output=True,
                             text=True, timeout=120)
    assert written.returncode == 0, written.stderr
    assert (tmp_path / "iam-note" / "iam_note" / "__init__.py").is_file()
    refused = subprocess.run([*run, "note", "--into", str(tmp_path)], cwd=PROJECT_DIR, capture_output=True,
                             text=True, timeout=120)
    assert refused.returncode == 2 and "already exists" in refused.stderr
