"""The worker pool: where the server's blocking work runs, so that the event loop never waits.

The event loop accepts connections, reads requests and writes answers; everything an API route
or a console event does with the database, the network or the CPU (password hashing, signing,
workbooks, PDFs, outbound calls) runs on one of these threads (docs/security.md,
"Availability"). A thread parked on a slow receiver costs a little memory and nothing else, so
the pool is large (IAM_WORKER_THREADS, 64 by default); what keeps one organization from parking
all of them is the outbound guard's cap per organization (core/outbound.py).

- `run(fn, *args)`: a blocking call, awaited from the loop.
- `run_async(factory)`: a coroutine made by `factory()`, run to its end on the worker thread's
  own event loop (one per thread, kept between calls): an ASGI app (api/offload.py) is async
  code that blocks in places; on its own loop, its blocking stalls no one else.

- `courtesy()`: called between the small steps of long computing (an import's rows, a batch's
  enforcements): a thread that has computed for SLICE_SECONDS since its first step or last
  pause, while other requests are being served, pauses as long, so that it never holds the
  interpreter lock from them for more than half of the time (a seventeenth, for an organization
  over its share: iam_console/fair_share.py). Without the pauses, a request that waits on the
  database between its steps would wait for the lock again at every step, a switch interval each
  time (startup.settle_the_interpreter).

Both carry the caller's context variables (the audit trail's current call, for one) to the
thread. A thread runs one piece of work at a time; work beyond the pool waits in its queue,
in order, without holding the loop. Called from a worker thread, both run in place.
"""

from __future__ import annotations

import asyncio
import contextvars
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import ParamSpec, TypeVar

from iam_console import fair_share
from iam_console.settings import settings

T = TypeVar("T")
P = ParamSpec("P")
THREAD_PREFIX = "iam-worker"

_local = threading.local()
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_serving = 0  # pieces of work running on the pool (requests, console events)
SLICE_SECONDS = 0.002
PAUSE_LIMIT = 0.01


def _mark_worker() -> None:
    _local.worker = True


def pool() -> ThreadPoolExecutor:
    """The process's pool, made on first use (a granian worker makes its own after it starts)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=settings.worker_threads, thread_name_prefix=THREAD_PREFIX,
                                       initializer=_mark_worker)
        return _pool


def on_worker() -> bool:
    """Whether the current thread is one of the pool's."""
    return getattr(_local, "worker", False)


async def run(fn: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """fn(*args, **kwargs) on a worker thread, in a copy of the caller's context."""
    if on_worker():
        return fn(*args, **kwargs)
    context = contextvars.copy_context()
    return await asyncio.wrap_future(pool().submit(_counted, context, fn, *args, **kwargs))


async def run_async(factory: Callable[[], Awaitable[T]]) -> T:
    """The coroutine `factory()` run to its end on a worker thread's own event loop."""
    if on_worker():
        return await factory()
    context = contextvars.copy_context()
    return await asyncio.wrap_future(pool().submit(_counted, context, _complete, factory))


def _counted(context: contextvars.Context, fn: Callable[..., T], *args, **kwargs) -> T:
    """fn run in the caller's context, counted as served, and its processor time charged to the
    organization it served (fair_share; what courtesy charged as it went is not charged twice)."""
    global _serving
    with _pool_lock:
        _serving += 1
    _local.computing_since, _local.charged = None, 0.0  # a new piece of work
    fair_share.begin()
    started = time.thread_time()
    try:
        return context.run(fn, *args, **kwargs)
    finally:
        with _pool_lock:
            _serving -= 1
        fair_share.charge(fair_share.finished(), time.thread_time() - started - _local.charged)


def courtesy() -> float:
    """A pause, as long as the computing before it, once a thread has computed for SLICE_SECONDS
    since its first step or last pause, while another request is being served (one besides the
    caller's own); the seconds it paused (a time budget does not count them). Measured on the
    wall clock: the steps are computing, and reading the clock of a thread's processor time is a
    system call, a point where the kernel may set aside the thread that holds the interpreter
    lock, stalling the others."""
    now = time.perf_counter()
    since = getattr(_local, "computing_since", None)
    if since is None:  # the work's first step
        _local.computing_since = now
        return 0.0
    worked = now - since
    if worked < SLICE_SECONDS:
        return 0.0
    organization = fair_share.charged_to()
    fair_share.charge(organization, worked)
    _local.charged = getattr(_local, "charged", 0.0) + worked
    paused = 0.0
    if _serving > 1:
        times = fair_share.OVER_SHARE_PAUSES if fair_share.over_share(organization) else 1
        time.sleep(min(worked * times, PAUSE_LIMIT * times))
        paused = time.perf_counter() - now
    _local.computing_since = time.perf_counter()
    return paused


def _own_loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_local, "loop", None)
    if loop is None or loop.is_closed():
        loop = _local.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
    return loop


def _complete(factory: Callable[[], Awaitable[T]]) -> T:
    # the task the loop makes for the coroutine copies this thread's current context: the caller's
    return _own_loop().run_until_complete(factory())


def back_on(loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[T]]) -> Awaitable[T]:
    """Awaited on a worker's loop: the coroutine `make()` run on `loop` (the main one, which owns
    the connection's receive and send). Cancelling the wait cancels it there too."""
    async def there() -> T:
        return await make()
    return asyncio.wrap_future(asyncio.run_coroutine_threadsafe(there(), loop))
