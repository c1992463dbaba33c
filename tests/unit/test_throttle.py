"""The database counters behind the code-check limits, and the one-time marks (core/throttle.py)."""

from __future__ import annotations

import pytest
from sqlmodel import select

from iam_console import models as m
from iam_console.core import throttle
from iam_console.core.errors import ServiceError
from tests.conftest import unique


def test_hit_refuses_past_the_limit_and_keeps_counting_committed(db):
    key = unique("k")
    for _ in range(3):
        throttle.hit(db, key, 3, 600, throttle.FROZEN)
    with pytest.raises(ServiceError, match="too many times, please wait for"):
        throttle.hit(db, key, 3, 600, throttle.FROZEN)
    db.rollback()  # the request failed: its count stays
    row = db.exec(select(m.Throttle).where(m.Throttle.key.startswith(key))).one()
    assert row.count == 4
    throttle.hit(db, unique("other"), 3, 600, throttle.FROZEN)  # another key is counted apart
    # a refusal says what was limited
    sends = unique("sends")
    throttle.hit(db, sends, 1, 600, throttle.TOO_MANY_SENT)
    with pytest.raises(ServiceError, match=r"^Too many messages were sent, please wait for \d+ minutes"):
        throttle.hit(db, sends, 1, 600, throttle.TOO_MANY_SENT)


def test_claim_works_once_and_expired_marks_are_swept(db):
    key = unique("mark")
    assert throttle.claim(db, key, 60)
    assert not throttle.claim(db, key, 60)
    db.add(m.Throttle(key=unique("old"), count=1, expires=1))
    db.commit()
    throttle.claim(db, unique("new"), 60)
    assert db.exec(select(m.Throttle).where(m.Throttle.expires < 1000)).first() is None
