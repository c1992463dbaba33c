"""What a file uploaded from the resources list is, read from its content, never from its name:
an image, a video, an audio file, a PDF, a Word document (.doc, .docx), a spreadsheet (.xls,
.xlsx) or a CSV text. Anything else is refused. The name only tells apart what the content
cannot: .doc and .xls are both OLE2 compound files."""

from __future__ import annotations

import csv
import io
import zipfile

from iam_console.core.errors import ServiceError

REFUSED = "The file must be an image, video, audio, PDF, Word, Excel or CSV file"
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"
# first bytes -> (file type, format, content type)
MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ("image", "png", "image/png")),
    (b"\xff\xd8\xff", ("image", "jpg", "image/jpeg")),
    (b"GIF87a", ("image", "gif", "image/gif")),
    (b"GIF89a", ("image", "gif", "image/gif")),
    (b"BM", ("image", "bmp", "image/bmp")),
    (b"\x1aE\xdf\xa3", ("video", "webm", "video/webm")),
    (b"OggS", ("audio", "ogg", "audio/ogg")),
    (b"fLaC", ("audio", "flac", "audio/flac")),
    (b"ID3", ("audio", "mp3", "audio/mpeg")),
    (b"%PDF-", ("application", "pdf", "application/pdf")),
)
RIFF = {b"WEBP": ("image", "webp", "image/webp"), b"WAVE": ("audio", "wav", "audio/wav"),
        b"AVI ": ("video", "avi", "video/x-msvideo")}
AUDIO_BRANDS = (b"M4A ", b"M4B ")
OFFICE = {"word/": ("application", "docx", "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
          "xl/": ("application", "xlsx", "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")}
LEGACY_OFFICE = {"doc": ("application", "doc", "application/msword"),
                 "xls": ("application", "xls", "application/vnd.ms-excel")}
CONTENT_TYPES = {fmt: kind for _, (_, fmt, kind) in MAGIC} | {fmt: kind for _, fmt, kind in RIFF.values()} | {
    "mp4": "video/mp4", "mov": "video/quicktime", "m4a": "audio/mp4", "csv": "text/csv"}


def _extension(file_name: str) -> str:
    return file_name.rpartition(".")[2].lower() if "." in file_name else ""


def _office(content: bytes) -> tuple[str, str, str] | None:
    try:
        names = zipfile.ZipFile(io.BytesIO(content)).namelist()
    except (zipfile.BadZipFile, ValueError, OSError):
        return None
    return next((found for folder, found in OFFICE.items() if any(n.startswith(folder) for n in names)), None)


def _csv(content: bytes) -> bool:
    """Text (UTF-8, no control characters but tabs and line ends, no markup) of rows that agree on their width."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError:
        return False
    if any(ord(c) < 32 and c not in "\t\r\n" for c in text) or text.lstrip().startswith("<"):
        return False  # binary, or markup (a page or an SVG is no CSV)
    rows = [row for row in csv.reader(io.StringIO(text)) if row]
    return bool(rows) and len({len(row) for row in rows}) == 1


def sniff(content: bytes, file_name: str) -> tuple[str, str, str]:
    """(file type, format, content type) of an accepted file; a ServiceError for anything else."""
    for magic, found in MAGIC:
        if content.startswith(magic):
            return found
    if content[:4] == b"RIFF" and content[8:12] in RIFF:
        return RIFF[content[8:12]]
    if content[4:8] == b"ftyp":
        brand = content[8:12]
        if brand in AUDIO_BRANDS:
            return "audio", "m4a", "audio/mp4"
        return ("video", "mov", "video/quicktime") if brand == b"qt  " else ("video", "mp4", "video/mp4")
    if content[:2] in (b"\xff\xfb", b"\xff\xf3", b"\xff\xf2"):  # an MPEG audio frame without ID3 tags
        return "audio", "mp3", "audio/mpeg"
    if content.startswith(OLE2) and _extension(file_name) in LEGACY_OFFICE:
        return LEGACY_OFFICE[_extension(file_name)]
    if content.startswith(b"PK\x03\x04") and (found := _office(content)):
        return found
    if _csv(content):
        return "text", "csv", "text/csv"
    raise ServiceError(REFUSED)

# the stored files served with their own type (a <video> or <audio> element plays them)
SERVED_TYPES = {fmt: kind for fmt, kind in CONTENT_TYPES.items() if kind.startswith(("video/", "audio/"))}
