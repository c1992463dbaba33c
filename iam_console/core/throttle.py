"""Counters and one-time marks in the database, shared by every worker.

- `hit`: count an attempt under a key within a fixed window; past the limit the
  attempt is refused before anything is compared, with the caller's message (what was
  limited). The count is committed at once, so a request that fails afterwards (a wrong
  code) still counts, and parallel requests cannot slip past the limit: the database
  increments atomically.
- `claim`: mark a key once; a second claim of the same key is refused (a TOTP code
  already used in its time step).
- `take`: remove a key that is still alive, once: two requests racing for the same mark
  cannot both have it (a password-recovery grant).
- `add_failure` / `failures` / `clear`: a count of failures under a key that lives on
  for a while after the last one, with that last one's time (the failed sign-ins of a
  name no account answers to, kept as an account keeps its own).

Rows live until their `expires`; each call sweeps the expired ones (an indexed
delete). No module-level state: several workers share the table.
"""

from __future__ import annotations

import math
import time

import sqlalchemy as sa
from sqlmodel import Session

from iam_console.core.errors import ServiceError
from iam_console.models import Throttle

# What a refused `hit` says: what was limited, and in how many minutes to try again. The password
# lockout's words are for checks of a password or code only; a limit on sending or asking says so.
FROZEN = "You have entered the wrong password or code too many times, please wait for %d minutes and try again"
TOO_MANY_SENT = "Too many messages were sent, please wait for %d minutes and try again"
TOO_MANY_CODES = "Too many codes were asked for from this address, please wait for %d minutes and try again"
TOO_MANY_REQUESTS = "Too many requests from this address, please wait for %d minutes and try again"
TABLE = Throttle.__table__


def _now() -> int:
    return int(time.time())


def _upsert(db: Session, key: str, expires: int, *, increment: bool, extend: bool = False) -> int:
    """Insert the key with count 1, or (increment) add one to its count, and (extend) move
    its expiry to `expires`; the rows changed."""
    dialect = db.get_bind().dialect.name
    values = {"key": key, "count": 1, "expires": expires}
    changes = {"count": TABLE.c.count + 1, **({"expires": expires} if extend else {})}
    if dialect == "mysql":
        from sqlalchemy.dialects.mysql import insert
        statement = insert(TABLE).values(**values)
        statement = statement.on_duplicate_key_update(**changes) if increment else statement.prefix_with("IGNORE")
    else:
        if dialect == "postgresql":
            from sqlalchemy.dialects.postgresql import insert
        else:
            from sqlalchemy.dialects.sqlite import insert
        statement = insert(TABLE).values(**values)
        statement = statement.on_conflict_do_update(index_elements=["key"], set_=changes) \
            if increment else statement.on_conflict_do_nothing(index_elements=["key"])
    return db.execute(statement).rowcount


def _sweep(db: Session, now: int) -> None:
    db.execute(sa.delete(TABLE).where(TABLE.c.expires < now))


def hit(db: Session, key: str, limit: int, window_seconds: int, message: str) -> None:
    """Count one attempt under `key`; refuse it (ServiceError `message`, with the minutes left in
    the window; nothing compared) when the window already holds `limit` attempts. Commits."""
    now = _now()
    window = now // window_seconds
    expires = (window + 1) * window_seconds
    full_key = f"{key[:180]}@{window}"
    _sweep(db, now)
    _upsert(db, full_key, expires, increment=True)
    db.commit()
    count = db.execute(sa.select(TABLE.c.count).where(TABLE.c.key == full_key)).scalar_one()
    if count > limit:
        raise ServiceError(message, max(1, math.ceil((expires - now) / 60)))


def claim(db: Session, key: str, ttl_seconds: int) -> bool:
    """Mark `key` for `ttl_seconds`; False when it was already marked. Commits."""
    now = _now()
    _sweep(db, now)
    claimed = _upsert(db, key[:200], now + ttl_seconds, increment=False) == 1
    db.commit()
    return claimed


def take(db: Session, key: str) -> bool:
    """Remove `key` if it is marked and alive; False when it is not (or another request took
    it first). Commits."""
    taken = db.execute(sa.delete(TABLE).where(TABLE.c.key == key[:200], TABLE.c.expires >= _now())).rowcount == 1
    db.commit()
    return taken


def add_failure(db: Session, key: str, kept_seconds: int) -> int:
    """Count a failure under `key`, kept `kept_seconds` after this one; the count. Commits."""
    now = _now()
    _sweep(db, now)
    _upsert(db, key[:200], now + kept_seconds, increment=True, extend=True)
    db.commit()
    return db.execute(sa.select(TABLE.c.count).where(TABLE.c.key == key[:200])).scalar_one()


def failures(db: Session, key: str, kept_seconds: int) -> tuple[int, int]:
    """(count, Unix time of the last failure) under `key`; (0, 0) when none is kept."""
    row = db.execute(sa.select(TABLE.c.count, TABLE.c.expires).where(
        TABLE.c.key == key[:200], TABLE.c.expires >= _now())).first()
    return (row.count, row.expires - kept_seconds) if row is not None else (0, 0)


def clear(db: Session, key: str) -> None:
    db.execute(sa.delete(TABLE).where(TABLE.c.key == key[:200]))
