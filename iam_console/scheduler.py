"""Scheduled work, run by every worker as a Reflex lifespan task.

Each tick asks the services for what is due; a job is claimed in the database
before it runs (see services/scheduled.claim), so with several workers (or several
servers on one database) each run happens once. The work itself runs in a
thread: the event loop keeps serving pages and the API meanwhile."""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from .db import session_scope
from .services import commerce, ldap, syncers, trail, webhooks
from .settings import settings

log = logging.getLogger("iam_console.scheduler")
# once a minute (IAM_SCHEDULER_TICK_SECONDS, shorter in tests): the auto syncs' unit is the minute
TICK_SECONDS = settings.scheduler_tick_seconds


def _ldap_auto_sync() -> None:
    with session_scope() as db:
        ldap.auto_sync(db)


def _syncer_auto_sync() -> None:
    with session_scope() as db:
        syncers.auto_sync(db)


def _expire_subscriptions() -> None:
    """Subscriptions past their end: Expired, their plan's role taken back (services/commerce.py);
    each is claimed by its own conditional UPDATE (Active -> Expired), so one worker ends it."""
    with session_scope() as db:
        while commerce.expire_subscriptions(db) == commerce.EXPIRY_BATCH:
            pass


def _purge_records() -> None:
    """Records older than IAM_RECORD_RETENTION_DAYS, in batches (services/trail.py)."""
    removed = trail.purge(session_scope, settings.record_retention_days)
    if removed:
        log.info("purged %d records older than %d days", removed, settings.record_retention_days)


async def _run(job, failed: str) -> None:
    try:
        await asyncio.to_thread(job)
    except Exception:  # a bad run is logged; the next tick tries again
        log.exception(failed)


async def run_scheduled_work() -> None:
    while True:
        # on the clock's whole ticks, the same instants in every worker and server: runs that fall due
        # are claimed by all of them at once, and the claim alone keeps each run single
        await asyncio.sleep(TICK_SECONDS - time.time() % TICK_SECONDS)
        await _run(_ldap_auto_sync, "scheduled LDAP auto sync failed")
        await _run(_syncer_auto_sync, "scheduled syncer run failed")
        await _run(_expire_subscriptions, "scheduled subscription expiry failed")
        await _run(_purge_records, "scheduled record purge failed")


async def run_webhook_delivery() -> None:
    """The webhook delivery worker (services/webhooks.py run) on a thread of its own: it wakes
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
