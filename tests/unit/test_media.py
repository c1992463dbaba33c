"""What the resources list accepts, judged by content: each accepted kind, and look-alikes refused."""

from __future__ import annotations

import io
import zipfile

import pytest

from iam_console.core.errors import ServiceError
from iam_console.files.media import OLE2, REFUSED, sniff


def _zip(*names: str) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name in names:
            archive.writestr(name, "x")
    return out.getvalue()


@pytest.mark.parametrize(("content", "name", "expected"), [
    (b"\x89PNG\r\n\x1a\n....", "a.txt", ("image", "png")),
    (b"\xff\xd8\xff\xe0JFIF", "a", ("image", "jpg")),
    (b"RIFF\x00\x00\x00\x00WEBPVP8 ", "a.png", ("image", "webp")),
    (b"\x00\x00\x00\x18ftypmp42", "a.pdf", ("video", "mp4")),
    (b"\x1aE\xdf\xa3\x9fB\x86", "a", ("video", "webm")),
    (b"ID3\x04\x00", "a", ("audio", "mp3")),
    (b"RIFF\x00\x00\x00\x00WAVEfmt ", "a", ("audio", "wav")),
    (b"%PDF-1.7\n", "a.docx", ("application", "pdf")),
    (OLE2 + b"\x00" * 8, "report.doc", ("application", "doc")),
    (OLE2 + b"\x00" * 8, "sheet.xls", ("application", "xls")),
    (_zip("[Content_Types].xml", "word/document.xml"), "a.xlsx", ("application", "docx")),
    (_zip("[Content_Types].xml", "xl/workbook.xml"), "a", ("application", "xlsx")),
    (b"name,score\nalice,3\n", "a.bin", ("text", "csv")),
])
def test_accepted_by_content(content, name, expected):
    assert sniff(content, name)[:2] == expected


@pytest.mark.parametrize(("content", "name"), [
    (b"MZ\x90\x00", "setup.pdf"),  # a program named as a PDF
    (b"<svg onload=alert(1)></svg>", "a.csv"),  # markup is no CSV
    (b"<html><body>hi</body></html>", "a.csv"),
    (_zip("evil.sh"), "a.docx"),  # a zip that is no Office document
    (OLE2 + b"\x00" * 8, "a.msi"),  # an OLE2 file that is neither .doc nor .xls
    (b"a,b\nc\n", "a.csv"),  # rows of different widths
    (b"\x00\x01\x02binary", "a.csv"),
])
def test_refused_whatever_the_name(content, name):
    with pytest.raises(ServiceError) as refused:
        sniff(content, name)
    assert str(refused.value) == REFUSED
