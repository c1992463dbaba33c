"""What every OAuth module raises and hashes with (oauth/oauth.py re-exports both)."""

from __future__ import annotations

import hashlib


class OAuthError(Exception):
    """An RFC 6749 error: `error`, `error_description`, and the HTTP status."""

    def __init__(self, error: str, description: str, status: int = 400) -> None:
        super().__init__(description)
        self.error, self.description, self.status = error, description, status
        self.headers: dict[str, str] = {}  # more of the answer's headers (DPoP's challenge and nonce)


def digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()
