"""Workbooks for the upload tests, built with openpyxl in write-only mode (or rewritten
by hand where a hostile one is wanted)."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterable, Sequence
from typing import Any

from fastapi.testclient import TestClient
from openpyxl import Workbook

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
SHEET = "xl/worksheets/sheet1.xml"


def workbook(header: Sequence[str], *rows: Sequence[Any]) -> bytes:
    book = Workbook(write_only=True)
    sheet = book.create_sheet("Sheet1")
    sheet.append(list(header))
    for row in rows:
        sheet.append(list(row))
    out = io.BytesIO()
    book.save(out)
    return out.getvalue()


def of_records(*records: dict[str, Any]) -> bytes:
    """One column per key of the records, in order of first appearance."""
    header: list[str] = []
    for record in records:
        header.extend(key for key in record if key not in header)
    return workbook(header, *[[record.get(key) for key in header] for record in records])


def upload(client: TestClient, path: str, content: bytes, filename: str = "upload.xlsx",
           content_type: str = XLSX):
    return client.post(path, files={"file": (filename, content, content_type)})


def with_sheet_data(content: bytes, sheet_data: bytes | Iterable[bytes], dimension: str = "") -> bytes:
    """The workbook `content` with the first sheet's rows replaced by raw <sheetData> XML
    (written in pieces when an iterable: a hostile sheet may be far larger than memory
    should hold at once), and the size the sheet declares (<dimension ref=...>, as Excel
    writes it) when given."""
    pieces = [sheet_data] if isinstance(sheet_data, bytes) else sheet_data
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(content)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename != SHEET:
                target.writestr(item, data)
                continue
            if dimension:
                data = data.replace(b"<sheetViews>", b'<dimension ref="%s"/><sheetViews>' % dimension.encode(), 1)
            head, rest = data.split(b"<sheetData>", 1)
            tail = rest.split(b"</sheetData>", 1)[1]
            with target.open(SHEET, "w") as sheet:
                sheet.write(head + b"<sheetData>")
                for piece in pieces:
                    sheet.write(piece)
                sheet.write(b"</sheetData>" + tail)
    return out.getvalue()
