"""Helpers of the API tests: signed-in clients."""

from __future__ import annotations

import pytest
import sqlalchemy as sa
from fastapi.testclient import TestClient

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from tests.conftest import ADMIN_PASSWORD
from tests.mail_world import SMTP_PASSWORD, SMTP_USER
from tests.sinks import SmtpSink

ENVELOPE = {"status", "msg", "sub", "name", "data", "data2", "data3"}


def ok_body(answer) -> dict:
    """The envelope of an answer that must be ok."""
    body = answer.json()
    assert body["status"] == "ok", body
    return body


def sign_in(org: str, name: str, password: str) -> TestClient:
    """A client holding the session cookie of that user."""
    client = TestClient(api)
    body = client.post("/api/login", json={"organization": org, "username": name, "password": password}).json()
    assert body["status"] == "ok", body
    return client


@pytest.fixture(scope="module", autouse=True)
def fresh_upstream_starts(database):
    """Upstream sign-ins started from the test client's one address count against its limit
    (60 per 10 minutes, federation/upstream.STARTS_PER_ADDRESS): each module starts with the whole
    budget, whatever the modules before it spent."""
    with session_scope() as db:
        db.execute(sa.delete(m.Throttle).where(m.Throttle.key.like("upstream-start:%")))


@pytest.fixture(scope="module")
def admin(database) -> TestClient:
    """The built-in admin, signed in."""
    return sign_in("built-in", "admin", ADMIN_PASSWORD)


@pytest.fixture(scope="module")
def smtp():
    """A local SMTP server taking the mail_world organizations' login (a module may define its own)."""
    with SmtpSink(SMTP_USER, SMTP_PASSWORD) as sink:
        yield sink
