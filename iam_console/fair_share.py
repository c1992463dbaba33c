"""Each organization's share of a server process's processor time.

Every piece of work on the worker pool (iam_console/workers.py) is charged, when it ends, with the
processor time its thread used, to the organization it served: the caller noted by
services/outbound.note_caller (an API caller's, a console viewer's, an OAuth client's). Long
computing is charged as it goes (workers.courtesy). What an organization used decays by half every
HALF_LIFE_SECONDS. When an organization has used more than SHARE_CORES of a core over the last
moments while another organization was served too:
- its next request waits before its work begins, until its use has decayed to its share (at most
  MAX_WAIT_SECONDS; the waiting thread holds no lock and no processor);
- its long computing pauses OVER_SHARE_PAUSES times as long as it computed.
Alone on the server, an organization may use all of it. docs/security.md, "Availability".
"""

from __future__ import annotations

import math
import threading
import time
from contextvars import ContextVar

# the organization the current request or console event serves ("" for the server's own work)
CALLER: ContextVar[str] = ContextVar("caller_organization", default="")
SHARE_CORES = 0.5
HALF_LIFE_SECONDS = 0.5
MAX_WAIT_SECONDS = 0.25
OVER_SHARE_PAUSES = 3
_TAU = HALF_LIFE_SECONDS / math.log(2)  # the decay's time constant: use / _TAU is the rate in cores
_NOTICED = 0.01  # seconds of use below which an organization counts as idle

_lock = threading.Lock()
_thread = threading.local()  # the organization the current worker thread's piece of work serves
_used: dict[str, tuple[float, float]] = {}  # organization -> (decayed seconds used, when)


def _decayed(organization: str, now: float) -> float:
    used, at = _used.get(organization, (0.0, now))
    return used * math.exp(-(now - at) / _TAU)


def charge(organization: str, seconds: float) -> None:
    if not organization or seconds <= 0:
        return
    now = time.monotonic()
    with _lock:
        _used[organization] = (_decayed(organization, now) + seconds, now)
        if len(_used) > 1000:  # forget the idle ones
            for name in [o for o in _used if _decayed(o, now) < _NOTICED]:
                del _used[name]


def _excess(organization: str) -> float:
    """How long the organization's use takes to decay to its share, when another organization
    was served meanwhile; else 0."""
    now = time.monotonic()
    with _lock:
        used = _decayed(organization, now)
        share = SHARE_CORES * _TAU
        if used <= share or not any(o != organization and _decayed(o, now) >= _NOTICED for o in _used):
            return 0.0
    return _TAU * math.log(used / share)


def over_share(organization: str) -> bool:
    return bool(organization) and _excess(organization) > 0


def serving(organization: str) -> None:
    """Where a request's organization becomes known, before its work: its processor time is
    charged to it, and when it is over its share, it waits here first."""
    CALLER.set(organization)
    _thread.organization = organization  # the route runs in a copy of the context: read back here
    wait_for_turn(organization)


def begin() -> None:
    """A piece of work starts on this thread (workers.py): it serves no organization yet."""
    _thread.organization = ""


def served() -> str:
    """The organization the piece of work on this thread served."""
    return getattr(_thread, "organization", "")


def wait_for_turn(organization: str) -> None:
    if organization:
        wait = _excess(organization)
        if wait > 0:
            time.sleep(min(wait, MAX_WAIT_SECONDS))


def forget() -> None:
    """Every organization's use back to none (tests)."""
    with _lock:
        _used.clear()
