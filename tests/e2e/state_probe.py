"""A route that exists only on the browser tests' server (IAM_EXTRA_PAGES, set by conftest.py):
every console state the server holds, each state serialized as the Redis state manager would
write it, so that a test can look for what must never be kept there: a typed password
(docs/security.md, "Where typed secrets travel"). The server runs one worker with the in-memory
state manager, so this is all of it."""

from __future__ import annotations

import sys
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

from fastapi.responses import Response

from iam_console.api.app import api

PATH = "/_test/states"


def _tree(state: Any) -> Iterator[Any]:
    yield state
    for substate in getattr(state, "substates", {}).values():
        yield from _tree(substate)


def _serialized(state: Any) -> bytes:
    try:
        return state._serialize()
    except Exception:  # a state Redis would refuse: its fields as text, still searched
        return repr(vars(state)).encode()


@api.get(PATH)
async def states() -> Response:
    app = sys.modules["iam_console.iam_console"].app
    roots = list(getattr(app.state_manager, "states", {}).values())
    return Response(b"\n".join(_serialized(state) for root in roots for state in _tree(root)),
                    media_type="application/octet-stream")



# --- the tests' side ---

def _states(server) -> bytes:
    with urllib.request.urlopen(server.url(PATH), timeout=30) as answer:
        return answer.read()


def _until(check, seconds: float) -> bool:
    """check() asked again (the websocket's events may still be on their way) until it holds or
    `seconds` pass."""
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.25)
    return True


def held(server, text: str, seconds: float = 10.0) -> bool:
    """Whether a console state of the server holds `text` (soon)."""
    return _until(lambda: text.encode() in _states(server), seconds)


def gone(server, text: str, seconds: float = 10.0) -> bool:
    """Whether no console state of the server holds `text` (soon)."""
    return _until(lambda: text.encode() not in _states(server), seconds)
