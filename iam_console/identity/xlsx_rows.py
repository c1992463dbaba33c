"""Reads the first worksheet of an .xlsx file and writes its rows to stdout.

Run by identity/uploads.py as a child process
(`python -I xlsx_rows.py FILE [MEMORY [ROWS [CPU_SECONDS [NICE]]]]`) so that parsing the
workbook (openpyxl is pure Python: ~60-180 µs a row) runs on another core while
the server validates the rows already read, and so that a hostile workbook meets
its limits in a process of its own, never in the server's: an address space of
MEMORY bytes, at most ROWS rows after the header (blank rows count: reading them
costs time too), and CPU_SECONDS of processor time (time spent waiting for the
server to take rows does not count). It runs NICE steps below the server's scheduling
priority (IAM_CPU_NICE): an import is background work. It imports nothing of the application.

Output: one JSON document a line; {"rows": [[cell, ...], ...]} in file order
(blank rows as [] so that numbering holds), then {"end": true}, or
{"error": CODE} (invalid, no-sheet, too-large, too-many-rows, too-slow) and
nothing more. Cells are JSON scalars; dates and times travel as {"$": type, "v": ISO text}.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import warnings
from datetime import date, datetime, time, timedelta

CHUNK = 500
MEMORY_LIMIT = 1 << 30  # address space; a workbook needing more is refused as too large
ROW_LIMIT = 200_000  # rows after the header
CPU_SECONDS = 120


class OutOfTime(Exception):
    """The processor time allowed is spent (SIGXCPU, from RLIMIT_CPU)."""


def _out_of_time(_signum: int, _frame: object) -> None:
    raise OutOfTime


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


# the time limit's signal, where the platform has one (POSIX)
TIME_LIMIT_SIGNALS = {signal.SIGXCPU} if hasattr(signal, "SIGXCPU") else set()


def _write(out, message: dict) -> None:
    """One whole line: the time limit's signal waits until it is written."""
    line = json.dumps(message, separators=(",", ":"), default=_tagged).encode() + b"\n"
    if not TIME_LIMIT_SIGNALS:
        out.write(line)
        return
    signal.pthread_sigmask(signal.SIG_BLOCK, TIME_LIMIT_SIGNALS)
    try:
        out.write(line)
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, TIME_LIMIT_SIGNALS)


def _set_limits(memory: int, cpu_seconds: int) -> None:
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
        # the soft limit raises OutOfTime; the hard one, a second later, kills a reader stuck in C code
        signal.signal(signal.SIGXCPU, _out_of_time)
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds + 1))
    except (ImportError, AttributeError, ValueError, OSError):
        pass  # not on this platform: the parent's size checks still hold


def _size_from_the_start(sheet) -> None:
    """openpyxl's ReadOnlyWorksheet._get_size (run when a workbook is loaded), stopping
    where the rows begin. openpyxl looks for <dimension> among iterparse's end events,
    and <sheetData> ends after its last row: on a sheet without <dimension> (openpyxl's
    own write-only output) it parsed every row once before the first was read, a
    third of a 100,000-row import's reading, and all 8 million rows of a 75 KB sheet
    before the row limit could stop them."""
    from openpyxl.worksheet._reader import DATA_TAG, DIMENSION_TAG, iterparse
    from openpyxl.worksheet.dimensions import SheetDimension

    with sheet._get_source() as source:
        for _event, element in iterparse(source, events=("start",)):
            if element.tag == DIMENSION_TAG:
                found = SheetDimension.from_tree(element).boundaries
                sheet._min_column, sheet._min_row, sheet._max_column, sheet._max_row = found
                return
            if element.tag == DATA_TAG:
                return


class RowLimit(Exception):
    """More rows than allowed."""


def _rows(sheet, row_limit: int):
    """The sheet's rows as lists without trailing blanks; RowLimit past the header and
    row_limit more (openpyxl yields a blank row for every row number a sheet skips)."""
    if (sheet.max_row or 0) > row_limit + 1:  # the declared size (<dimension>), when a writer records it
        raise RowLimit
    sheet.reset_dimensions()  # some writers record wrong dimensions: read what is there
    for number, values in enumerate(sheet.iter_rows(values_only=True)):
        if number > row_limit:
            raise RowLimit
        last = len(values)
        while last and values[last - 1] is None:
            last -= 1
        yield list(values[:last])


def main(path: str, memory_limit: int = MEMORY_LIMIT, row_limit: int = ROW_LIMIT,
         cpu_seconds: int = CPU_SECONDS, nice: int = 0) -> int:
    _set_limits(memory_limit, cpu_seconds)
    if nice > 0:
        os.nice(nice)
    warnings.simplefilter("ignore")  # openpyxl's notes on styles and extensions are not the uploader's concern
    out = sys.stdout.buffer
    try:
        from openpyxl import load_workbook
        from openpyxl.worksheet._read_only import ReadOnlyWorksheet

        ReadOnlyWorksheet._get_size = _size_from_the_start
        workbook = load_workbook(path, read_only=True, data_only=True)
    except MemoryError:
        _write(out, {"error": "too-large"})
        return 0
    except OutOfTime:
        _write(out, {"error": "too-slow"})
        return 0
    except Exception:  # not a zip, not a workbook, encrypted, ...
        _write(out, {"error": "invalid"})
        return 0
    try:
        if not workbook.worksheets:
            _write(out, {"error": "no-sheet"})
            return 0
        chunk: list[list] = []
        for row in _rows(workbook.worksheets[0], row_limit):
            chunk.append(row)
            if len(chunk) >= CHUNK:
                _write(out, {"rows": chunk})
                chunk = []
        if chunk:
            _write(out, {"rows": chunk})
        _write(out, {"end": True})
    except MemoryError:
        _write(out, {"error": "too-large"})
    except RowLimit:
        _write(out, {"error": "too-many-rows"})
    except OutOfTime:
        _write(out, {"error": "too-slow"})
    except BrokenPipeError:
        raise
    except Exception:  # a damaged part of the archive
        _write(out, {"error": "invalid"})
    finally:
        workbook.close()
    out.flush()
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1], *(int(arg) for arg in sys.argv[2:6])))
    except BrokenPipeError:  # the parent stopped reading: a bad row refused the file
        sys.stderr.close()
        os._exit(0)
