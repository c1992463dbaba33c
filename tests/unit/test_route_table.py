"""docs/api.md's table of Casdoor's routes stays true: a row says `served` exactly when the
server serves that path, and every row has a status."""

from __future__ import annotations

import re
from pathlib import Path

from iam_console.api.app import route_table
from iam_console.extension import extensions

DOC = Path(__file__).resolve().parents[2] / "docs" / "api.md"
ROW = re.compile(r"^\| `([^`]+)` \| ([A-Z/,* ]+) \| (.+) \|$")
STATUSES = ("served", "later: issue ", "not yet: ", "not served: ")


def _rows() -> list[tuple[str, str]]:
    section = DOC.read_text().split("## Casdoor's routes", 1)[1].split("\n## ", 1)[0]
    return [(m.group(1), m.group(3)) for line in section.splitlines() if (m := ROW.match(line))]


def _shape(path: str) -> str:
    """A path with its parameters blanked: Casdoor's :name and ?:name (an optional segment, served
    as one), FastAPI's {name}."""
    return re.sub(r"\??:[A-Za-z]+|\{[^}]+\}", "*", path)


def test_the_table_lists_casdoors_routes_each_with_a_status():
    rows = _rows()
    assert len(rows) > 300
    for path, status in rows:
        assert status.startswith(STATUSES), (path, status)


BY_EXTENSION = re.compile(r"^served by the (\w+) extension\b")


def test_served_means_served():
    """`served` rows are served; `served by the <name> extension` rows exactly when that extension
    is installed and enabled here."""
    served = {_shape(path) for _, path in route_table()} | {path for _, path in route_table()}
    present = {extension.name for extension in extensions()}
    for path, status in _rows():
        by = BY_EXTENSION.match(status)
        expected = status == "served" or (by is not None and by.group(1) in present)
        assert expected == (_shape(path) in served or path in served), (path, status)
