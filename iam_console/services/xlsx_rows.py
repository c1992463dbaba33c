"""Reads the first worksheet of an .xlsx file and writes its rows to stdout.

Run by services/uploads.py as a child process (`python -I xlsx_rows.py FILE [MEMORY]`)
so that parsing the workbook (openpyxl is pure Python: ~60-180 µs a row) runs
on another core while the server validates the rows already read, and so that
a hostile workbook meets a memory limit in a process of its own, never in the
server's. It imports nothing of the application.

Output: one JSON document a line; {"rows": [[cell, ...], ...]} in file order
(blank rows as [] so that numbering holds), then {"end": true}, or
{"error": CODE} (invalid, no-sheet, too-large) and nothing more. Cells are
JSON scalars; dates and times travel as {"$": type, "v": ISO text}.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from datetime import date, datetime, time, timedelta

CHUNK = 500
MEMORY_LIMIT = 1 << 30  # address space; a workbook needing more is refused as too large


def _tagged(value: object) -> object:
    if isinstance(value, datetime):
        return {"$": "datetime", "v": value.isoformat()}
    if isinstance(value, date):
        return {"$": "date", "v": value.isoformat()}
    if isinstance(value, time):
        return {"$": "time", "v": value.isoformat()}
    if isinstance(value, timedelta):
        return {"$": "timedelta", "v": value.total_seconds()}
    return str(value)


def decode(line: bytes) -> dict:
    """A line of the output, read back (used by the parent)."""
    return json.loads(line, object_hook=_untagged)


def _untagged(obj: dict) -> object:
    kind = obj.get("$")
    if kind == "datetime":
        return datetime.fromisoformat(obj["v"])
    if kind == "date":
        return date.fromisoformat(obj["v"])
    if kind == "time":
        return time.fromisoformat(obj["v"])
    if kind == "timedelta":
        return timedelta(seconds=obj["v"])
    return obj


def _write(out, message: dict) -> None:
    out.write(json.dumps(message, separators=(",", ":"), default=_tagged).encode() + b"\n")


def _limit_memory(limit: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ImportError, ValueError, OSError):
        pass  # not on this platform: the parent's size checks still hold


def main(path: str, memory_limit: int = MEMORY_LIMIT) -> int:
    _limit_memory(memory_limit)
    warnings.simplefilter("ignore")  # openpyxl's notes on styles and extensions are not the uploader's concern
    out = sys.stdout.buffer
    try:
        from openpyxl import load_workbook

        workbook = load_workbook(path, read_only=True, data_only=True)
    except MemoryError:
        _write(out, {"error": "too-large"})
        return 0
    except Exception:  # not a zip, not a workbook, encrypted, ...
        _write(out, {"error": "invalid"})
        return 0
    try:
        if not workbook.worksheets:
            _write(out, {"error": "no-sheet"})
            return 0
        sheet = workbook.worksheets[0]
        sheet.reset_dimensions()  # some writers record wrong dimensions: read what is there
        chunk: list[list] = []
        for values in sheet.iter_rows(values_only=True):
            last = len(values)
            while last and values[last - 1] is None:
                last -= 1
            chunk.append(list(values[:last]))
            if len(chunk) >= CHUNK:
                _write(out, {"rows": chunk})
                chunk = []
        if chunk:
            _write(out, {"rows": chunk})
    except MemoryError:
        _write(out, {"error": "too-large"})
        return 0
    except BrokenPipeError:
        raise
    except Exception:  # a damaged part of the archive
        _write(out, {"error": "invalid"})
        return 0
    finally:
        workbook.close()
    _write(out, {"end": True})
    out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1], *(int(arg) for arg in sys.argv[2:3])))
    except BrokenPipeError:  # the parent stopped reading: a bad row refused the file
        sys.stderr.close()
        os._exit(0)
