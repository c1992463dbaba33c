"""Each organization's share of a server process's processor time.

Every piece of work on the worker pool (iam_console/workers.py) is charged, when it ends, with the
processor time its thread used, to the organization it served: the caller noted by
core/outbound.note_caller (an API caller's, an OAuth client's). Long computing is charged as
it goes (workers.courtesy), and so is the time a child process computed for the organization
(cpu_work.run). A console viewer's calls are neither charged nor counted, nor do they wait: a
person at the console is no flood, a page's event makes several calls whose waits would add up,
and an administrator at work would otherwise make their own organization's API calls wait. What
an organization used decays by half every HALF_LIFE_SECONDS. When an organization has used more
than SHARE_CORES of a core over the last moments while another organization was served too:
- its long computing pauses OVER_SHARE_PAUSES times as long as it computed;
- if it also used more than any other organization and has other requests in progress, its
  next API request or OAuth client call waits before its work begins, until its use has decayed
  to theirs or to its share (once a request, at most MAX_WAIT_SECONDS; the waiting thread holds
  its database connection, but no lock of the server's and no processor). A caller with one
  request at a time never waits: it cannot take more than its one thread (sign-ins one after
  another take about half a core), and what it computes at length pauses all the same.
Alone on the server, an organization may use all of it. docs/security.md, "Availability".
"""

from __future__ import annotations

import math
import threading
import time
from collections import Counter
from contextvars import ContextVar

# the organization the current request or console event serves ("" for the server's own work)
CALLER: ContextVar[str] = ContextVar("caller_organization", default="")
SHARE_CORES = 0.25
HALF_LIFE_SECONDS = 0.5
MAX_WAIT_SECONDS = 1.0
OVER_SHARE_PAUSES = 16
_TAU = HALF_LIFE_SECONDS / math.log(2)  # the decay's time constant: use / _TAU is the rate in cores
_NOTICED = 0.01  # seconds of use below which an organization counts as idle

_lock = threading.Lock()
_thread = threading.local()  # the organization the current worker thread's piece of work serves
_used: dict[str, tuple[float, float]] = {}  # organization -> (decayed seconds used, when)
_in_progress: Counter[str] = Counter()  # organization -> pieces of work serving it now


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


def _uses(organization: str) -> tuple[float, float]:
    """The organization's recent use and the busiest other organization's."""
    now = time.monotonic()
    with _lock:
        return (_decayed(organization, now),
                max((_decayed(o, now) for o in _used if o != organization), default=0.0))


def _excess(organization: str) -> float:
    """How long the organization's use takes to decay to what its next request may start with
    while another organization is served: its share, or the busiest other organization's use if
    that is more (the lighter of two busy organizations never waits for the heavier). 0 when
    within it."""
    used, others = _uses(organization)
    if others < _NOTICED:
        return 0.0
    allowed = max(SHARE_CORES * _TAU, others)
    return _TAU * math.log(used / allowed) if used > allowed else 0.0


def over_share(organization: str) -> bool:
    """Whether the organization's long computing pauses longer: over its share while another
    organization is served, whoever uses more (the others' use may be time out of the
    interpreter's way, a password hash or a child's signature, while this computing holds it)."""
    if not organization:
        return False
    used, others = _uses(organization)
    return others >= _NOTICED and used > SHARE_CORES * _TAU


def serving(organization: str, *, charged: bool = True) -> None:
    """Where a request's organization becomes known, before its work: its processor time is
    charged to it, and it counts as in progress (not a console viewer's: `charged` off)."""
    CALLER.set(organization)
    if not charged:
        return
    before = getattr(_thread, "organization", "")
    if getattr(_thread, "counting", False) and before != organization:  # on the pool: begin() .. finished()
        with _lock:
            _count(before, -1)
            _count(organization, +1)
    _thread.organization = organization  # the route runs in a copy of the context: read back here


def begin() -> None:
    """A piece of work starts on this thread (workers.py): it serves no organization yet and has
    not waited its turn."""
    _thread.organization, _thread.waited, _thread.counting = "", False, True


def charged_to() -> str:
    """The organization the piece of work on this thread is charged to ("" for none)."""
    return getattr(_thread, "organization", "")


def finished() -> str:
    """The piece of work on this thread has ended: the organization it served (workers.py charges
    it), no longer in progress."""
    organization = getattr(_thread, "organization", "")
    if getattr(_thread, "counting", False):
        with _lock:
            _count(organization, -1)
    _thread.organization, _thread.counting = "", False
    return organization


def _count(organization: str, step: int) -> None:
    if organization:
        _in_progress[organization] += step
        if _in_progress[organization] <= 0:
            del _in_progress[organization]


def wait_for_turn(organization: str) -> None:
    """An organization over its share, with other requests in progress, waits here, once a piece
    of work, at most MAX_WAIT_SECONDS."""
    if organization and not getattr(_thread, "waited", False):
        _thread.waited = True
        with _lock:
            alone = _in_progress[organization] <= 1  # this request is its only one
        wait = 0.0 if alone else _excess(organization)
        if wait > 0:
            time.sleep(min(wait, MAX_WAIT_SECONDS))


def forget() -> None:
    """Every organization's use back to none (tests)."""
    with _lock:
        _used.clear()
        _in_progress.clear()
