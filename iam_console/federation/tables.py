"""Wallet sign-in nonces (federation/wallet.py) and the state of sign-ins at upstream providers."""

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


class UpstreamState(Row, table=True):
    """A sign-in at an upstream identity provider under way (federation/upstream.py): found by the
    SHA-256 of the `state` sent to the provider, bound to the SHA-256 of the browser's cookie,
    the application, the provider, the target (signin, signup, link; the user for a link),
    the authorization request the sign-in answers and the invitation code a sign-up spends.
    Consumed by the first callback; kept, with the error a refused callback met, until expires_at."""

    __tablename__ = "upstream_state"
    __table_args__ = (
        sa.UniqueConstraint("state_hash", name="uq_upstream_state_state_hash"),
        sa.Index("ix_upstream_state_expires", "expires_at"),
        sa.Index("ix_upstream_state_error_id", "error_id"),
    )

    state_hash: str = text(64)
    browser_hash: str = text(64)
    application: str = text(100)
    provider: str = text(100)
    method: str = text(20)  # signin | signup | link
    user: str = text(201)  # owner/name of the account a link is for
    code_verifier: str = text(128)  # PKCE (RFC 7636): sent once, with the code
    nonce: str = text(64)
    authorize_query: str = long_text()  # the OAuth authorize request answered after the sign-in
    return_to: str = text(500)  # a path of this server: where a plain sign-in goes on to
    invitation_code: str = text(100)  # the sign-up page's invitationCode, for a sign-up the flow opens
    used: bool = False
    error_id: str = text(64)  # a refused callback's error, shown once on the sign-in page
    error: str = text(500)
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
