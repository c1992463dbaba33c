"""Wallet sign-in nonces (federation/wallet.py)."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import Row, UTCDateTime, long_text, text


class Web3Nonce(Row, table=True):
    """A nonce issued for one wallet sign-in: for one application, one of its Web3 providers and
    one address, with the EIP-712 typed data the wallet is to sign. Found by the SHA-256 of the
    nonce; used once (the first sign-in that presents it marks it used), void after expires_at
    (5 minutes), deleted once expired."""

    __tablename__ = "web3_nonce"
    __table_args__ = (
        sa.UniqueConstraint("nonce_hash", name="uq_web3_nonce_nonce_hash"),
        sa.Index("ix_web3_nonce_expires", "expires_at"),
    )

    nonce_hash: str = text(64)
    application: str = text(100)
    provider: str = text(100)
    address: str = text(42)  # 0x and 40 hex digits, lower-cased
    typed_data: str = long_text()  # the JSON the wallet signs
    client_ip: str = text(100)
    created_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
    used: bool = False
