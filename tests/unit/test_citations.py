"""Comments, docstrings and documents cite only what the repository holds: a reader has this
repository and the public standards (RFCs), nothing else. A rule is stated where it applies or
in docs/, never by a section number of a document the reader cannot open."""

from __future__ import annotations

import ast
import io
import os
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FOLDERS = ("iam_console", "tests", "bench", "alembic", "docs", "assets", ".ci")
FILES = ("README.md", "Makefile", "rxconfig.py", "alembic.ini", "pyproject.toml")
SUFFIXES = {".py", ".md", ".js", ".jsx", ".css", ".ini", ".toml", ""}
SKIPPED_FOLDERS = {"node_modules", ".web", "__pycache__", "i18n"}  # i18n: the catalog's texts are not comments

RFC_SECTION = re.compile(r"RFC ?\d+,? ?§ ?[\d.]+")
OUTSIDE = [
    (re.compile(r"§"), "a section of a document outside the repository"),
    (re.compile(r"\bDESIGN\b"), "the design notes outside the repository"),
    (re.compile(r"\b[Ss]pec(?:'s)?\b(?![.=(\[])"), "the specification outside the repository"),
    (re.compile(r"(?:\.\./|/work/)shared\b|\breference/"), "the shared material outside the repository"),
]
MARKDOWN_NAME = re.compile(r"[\w./-]*\b[\w-]+\.md\b")


def _files() -> list[Path]:
    found = [ROOT / name for name in FILES if (ROOT / name).is_file()]
    for folder in FOLDERS:
        for directory, subfolders, names in os.walk(ROOT / folder):
            subfolders[:] = [s for s in subfolders if s not in SKIPPED_FOLDERS]
            found += [Path(directory) / n for n in names if Path(n).suffix in SUFFIXES]
    return sorted(found)


def _python_prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every comment and docstring."""
    prose = [(token.start[0], token.string) for token in tokenize.generate_tokens(io.StringIO(source).readline)
             if token.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                prose += [(first.lineno + i, line) for i, line in enumerate(first.value.value.splitlines())]
    return prose


def _prose(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".py":
        return _python_prose(text)
    return list(enumerate(text.splitlines(), start=1))


def citations(path: Path, markdown_names: set[str]) -> list[str]:
    found = []
    for line, text in _prose(path):
        bare = RFC_SECTION.sub("", text)
        found += [f"{line}: {why}: {text.strip()}" for pattern, why in OUTSIDE if pattern.search(bare)]
        found += [f"{line}: {name}, not a file of the repository: {text.strip()}"
                  for name in MARKDOWN_NAME.findall(text) if Path(name).name not in markdown_names]
    return found


def test_comments_cite_only_what_the_repository_holds():
    files = _files()
    assert len(files) > 150 and ROOT / "docs" / "architecture.md" in files
    markdown_names = {path.name for path in files if path.suffix == ".md"}
    found = {str(path.relative_to(ROOT)): hits for path in files if (hits := citations(path, markdown_names))}
    assert not found, "\n".join(f"{path}:{hit}" for path, hits in found.items() for hit in hits)


@pytest.mark.parametrize(("text", "cited"), [
    ('"""The dashboard (spec part 1 §2.3): the user cards."""', True),
    ("x = 1  # argon2id, not the spec's 'plain' (DESIGN.md, 'Passwords')", True),
    ('"""Paging (casdoor-api.md §2)."""', True),
    ("# see ../shared/reference/reflex.md", True),
    ('"""Scopes (RFC 6749 §3.3): see docs/api.md, "Callers"."""', False),
    ("for spec in PAGES:  # a page's declaration\n    spec.route = ''", False),
])
def test_a_citation_of_outside_material_is_found(tmp_path, text, cited):
    path = tmp_path / "module.py"
    path.write_text(text + "\n")
    assert bool(citations(path, {"api.md"})) is cited
