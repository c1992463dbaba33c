"""A record written by a console event carries the browser's address and the viewer's language,
as an API request's records do (ui/state/service.py binds audit/records.CURRENT_CALL)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from sqlmodel import select

from iam_console.audit.records import audit
from iam_console.db import session_scope
from iam_console.models import Record
from iam_console.ui.state.service import _run, in_thread
from tests.conftest import unique


def _router(address: str) -> SimpleNamespace:
    return SimpleNamespace(headers=SimpleNamespace(cookie="", raw_headers={"asgi-scope-client": address}),
                           session=SimpleNamespace(client_ip=address))


def _write(action: str):
    def work(db, actor):
        audit(db, organization="built-in", user="built-in/admin", action=action)
    return work


def _recorded(action: str) -> Record:
    with session_scope() as db:
        return db.exec(select(Record).where(Record.action == action)).one()


def test_an_event_and_a_worker_thread_record_the_browser_and_the_language(database):
    in_event, on_thread = unique("console-write"), unique("console-send")
    _run(_router("203.0.113.7"), _write(in_event), "zh")
    asyncio.run(in_thread(_router("198.51.100.9"), _write(on_thread)))
    first, second = _recorded(in_event), _recorded(on_thread)
    assert (first.client_ip, first.language) == ("203.0.113.7", "zh")
    assert second.client_ip == "198.51.100.9"
    # nothing leaks into what runs afterwards
    later = unique("no-call")
    with session_scope() as db:
        audit(db, organization="built-in", user="built-in/admin", action=later)
    assert _recorded(later).client_ip == ""
