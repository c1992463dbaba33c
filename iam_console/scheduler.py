"""Scheduled work, run by every worker as a Reflex lifespan task.

Each tick runs every extension's jobs (iam_console/extension.py), which ask the services for what
is due; a job is claimed in the database before it runs (see core/scheduled.claim), so with
several workers (or several servers on one database) each run happens once. The work itself runs
in a thread: the event loop keeps serving pages and the API meanwhile."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from iam_console.db import session_scope
from iam_console.extension import Job, extensions
from iam_console.oauth import logout  # noqa: F401  its back-channel notices are outbox events the worker sends
from iam_console.operations import webhooks
from iam_console.settings import settings

log = logging.getLogger("iam_console.scheduler")
# once a minute (IAM_SCHEDULER_TICK_SECONDS, shorter in tests): the auto syncs' unit is the minute
TICK_SECONDS = settings.scheduler_tick_seconds


async def _run(job: Job) -> None:
    try:
        await asyncio.to_thread(job.run)
    except Exception:  # a bad run is logged; the next tick tries again
        log.exception("scheduled %s failed", job.name)


async def run_scheduled_work() -> None:
    while True:
        # on the clock's whole ticks, the same instants in every worker and server: runs that fall due
        # are claimed by all of them at once, and the claim alone keeps each run single
        await asyncio.sleep(TICK_SECONDS - time.time() % TICK_SECONDS)
        for job in [job for extension in extensions() for job in extension.jobs]:
            await _run(job)


async def run_webhook_delivery() -> None:
    """The webhook delivery worker (operations/webhooks.py run) on a thread of its own: it wakes
    when this process commits a record with webhook events, and every second for the others'."""
    stop = threading.Event()
    worker = threading.Thread(target=webhooks.run, args=(stop, session_scope), name="webhook-delivery",
                              daemon=True)
    worker.start()
    try:
        await asyncio.Event().wait()  # until the server stops
    finally:
        stop.set()
        webhooks.WAKE.set()
