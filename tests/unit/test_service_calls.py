"""The console's one way of calling the service from an event (ui/state/service.py):
a session, the viewer, and a refusal turned into a toast or /403."""

from __future__ import annotations

import asyncio
import contextlib
from types import SimpleNamespace

import pytest

from iam_console.core import policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.ui.state import service
from iam_console.ui.state.prefs import Prefs

VIEWER = Actor()  # a viewer of its own, told apart by identity


class _Prefs:
    lang = "en"

    def say(self, key: str, *args: object) -> str:
        return key % args if args else key


class _State:
    router = SimpleNamespace(headers=SimpleNamespace(raw_headers={}), session=SimpleNamespace(client_ip="192.0.2.1"))

    async def get_state(self, cls):
        assert cls is Prefs
        return _Prefs()


@pytest.fixture
def sessions(monkeypatch):
    """A stand-in session scope that records commits and rollbacks."""
    seen: list[str] = []

    @contextlib.contextmanager
    def scope():
        try:
            yield "db"
            seen.append("commit")
        except BaseException:
            seen.append("rollback")
            raise

    monkeypatch.setattr(service, "session_scope", scope)
    monkeypatch.setattr(service, "viewer", lambda db, router: VIEWER)
    return seen


def _call(work, **options):
    return asyncio.run(service.call(_State(), work, **options))


def _message(event) -> str:
    return str(event)


def test_the_work_gets_the_session_and_the_viewer_and_its_value_comes_back(sessions):
    outcome = _call(lambda db, actor: (db, actor))
    assert not outcome.failed and outcome.value == ("db", VIEWER) and outcome.event is None
    assert sessions == ["commit"]


def test_a_service_error_is_a_toast_with_the_message_inside_the_template(sessions):
    def refuse(db, actor):
        raise ServiceError("The %s %s/%s already exists", "organization", "admin", "built-in")

    outcome = _call(refuse, failed="Failed to save: %s")
    assert outcome.failed and outcome.value is None and sessions == ["rollback"]
    assert "Failed to save: The organization admin/built-in already exists" in _message(outcome.event)
    # a message of its own (no %s) is shown as it is
    assert "Add LDAP server failed" in _message(_call(refuse, failed="Add LDAP server failed").event)


@pytest.mark.parametrize("template", [policy.UNAUTHORIZED, "Please login first"])
def test_a_refused_viewer_goes_to_403_only_where_the_page_asks(sessions, template):
    def refuse(db, actor):
        raise ServiceError(template)

    assert "/403" in _message(_call(refuse, forbidden_page=True).event)
    toast = _message(_call(refuse).event)
    assert "/403" not in toast and template in toast


def test_other_errors_pass_through(sessions):
    with pytest.raises(ZeroDivisionError):
        _call(lambda db, actor: 1 / 0)
    assert sessions == ["rollback"]
