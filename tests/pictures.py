"""Small valid pictures for the upload tests, written without an imaging library."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 4, height: int = 4, rgb: tuple[int, int, int] = (200, 40, 40)) -> bytes:
    """A solid-colour RGB PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")
