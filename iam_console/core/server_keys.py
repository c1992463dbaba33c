"""Keys only the server knows, derived per purpose from the built-in cert's private key,
which every worker shares: HMACs that must look the same on every worker and can be
neither forged nor checked by a client (the WebAuthn decoy, captcha answers)."""

from __future__ import annotations

import hashlib

from sqlmodel import Session

from iam_console.core import builtin as b
from iam_console.core import lookup


def derived_key(db: Session, purpose: str) -> bytes:
    cert = lookup.signing_cert(db, b.ADMIN_OWNER, b.BUILT_IN_CERT)
    return hashlib.sha256(f"iam-console {purpose}\0".encode() + (cert.private_key if cert else "").encode()).digest()
