"""Workbooks for the upload tests, built with openpyxl in write-only mode."""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any

from fastapi.testclient import TestClient
from openpyxl import Workbook

XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


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
