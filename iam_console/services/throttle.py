"""Failed sign-in checks counted per key over a sliding window, in the database so
that every worker sees the same counts.

The account's own limit is the application's failed sign-in limit (services/auth.py,
counted on the user row); this one is for what the account count cannot see: one
address trying many accounts. Keys are namespaced by the caller ("address:1.2.3.4").
"""

from __future__ import annotations

import math
from datetime import timedelta

from sqlmodel import Session, delete, func, select

from ..models import FailedAttempt
from ..models.base import utcnow
from .errors import ServiceError

ADDRESS_LIMIT = 20  # failed checks from one address...
ADDRESS_WINDOW = timedelta(minutes=15)  # ...within this window


def address_key(client_ip: str) -> str:
    return f"address:{client_ip[:100]}"


def check(db: Session, key: str, limit: int = ADDRESS_LIMIT, window: timedelta = ADDRESS_WINDOW) -> None:
    """Refuse (with the failed sign-in limit's message) while the key has `limit` failures in the window."""
    since = utcnow() - window
    count, oldest = db.exec(select(func.count(), func.min(FailedAttempt.created_time)).where(
        FailedAttempt.key == key, FailedAttempt.created_time > since)).one()
    if count >= limit:
        left = (oldest + window - utcnow()).total_seconds() / 60 if oldest else window.total_seconds() / 60
        raise ServiceError(
            "You have entered the wrong password or code too many times, please wait for %d minutes and try again",
            max(1, math.ceil(left)))


def record(db: Session, key: str, window: timedelta = ADDRESS_WINDOW) -> None:
    """Count one failure and commit it, whatever the caller does next (it usually raises).
    Failures older than the window go, whatever their key: the table holds one window's worth."""
    now = utcnow()
    db.exec(delete(FailedAttempt).where(FailedAttempt.created_time <= now - window))
    db.add(FailedAttempt(key=key, created_time=now))
    db.commit()
