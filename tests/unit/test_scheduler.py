"""The scheduled-work loop: it runs every extension's jobs every tick, in a thread, and a
failing run does not stop the next one."""

from __future__ import annotations

import asyncio
import threading

from iam_console import scheduler
from iam_console.audit import trail
from iam_console.extension import Extension, Job


def test_each_tick_runs_the_auto_sync_and_survives_a_failure(monkeypatch):
    calls: list[str] = []

    def run() -> None:
        calls.append(threading.current_thread().name)
        if len(calls) == 1:
            raise RuntimeError("directory down")

    monkeypatch.setattr(scheduler, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(scheduler, "extensions", lambda: (Extension("probe", jobs=(Job("probe", run),)),))

    async def main() -> None:
        task = asyncio.create_task(scheduler.run_scheduled_work())
        while len(calls) < 3:
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(asyncio.wait_for(main(), 10))
    assert len(calls) >= 3 and threading.main_thread().name not in calls


def test_each_tick_purges_the_records_past_their_retention(monkeypatch):
    purged: list[int] = []
    monkeypatch.setattr(scheduler, "TICK_SECONDS", 0.01)
    monkeypatch.setattr(trail, "purge", lambda factory, days: purged.append(days) or 0)  # the built-in job's

    async def main() -> None:
        task = asyncio.create_task(scheduler.run_scheduled_work())
        while len(purged) < 2:
            await asyncio.sleep(0.01)
        task.cancel()

    asyncio.run(asyncio.wait_for(main(), 10))
    assert purged[0] == scheduler.settings.record_retention_days
