"""System Info: the host's CPU and memory and the API's latency and throughput, read every
2 seconds while the page is shown (components/ticker.py), and the release, read once. Global
admins only: the figures are the whole server's, no single organization's."""

from __future__ import annotations

from typing import ClassVar

import reflex as rx

from iam_console.core import lookup, policy
from iam_console.i18n.formats import clock_text, count_text, decimal_text, percent_text, size_text
from iam_console.models.base import utcnow
from iam_console.operations import metrics, system_info
from iam_console.ui.state.prefs import Prefs
from iam_console.ui.state.service import call, message, say
from iam_console.ui.state.tour import Tour

POLL_MS = 2000
HISTORY_POINTS = 30  # the chart's last minute


def percent(part: int, whole: int) -> float:
    return round(part * 100 / whole, 1) if whole else 0.0


class SystemInfo(Tour, rx.State):
    TOUR_STEPS: ClassVar[int] = 5  # operations/ui/sysinfo.py's SYSINFO_TOUR
    tour_done: str = rx.LocalStorage("0", name="iam_sysinfo_tour_done", sync=True)
    ready: bool = False
    error: str = ""
    cpu: list[float] = []  # per core, %
    cpu_text: list[str] = []  # the same, as the viewer's language writes a percentage
    memory_used: int = 0  # this worker's resident memory, bytes
    memory_total: int = 0
    memory_text: str = ""  # "268.4 MB / 23.5 GB" in the viewer's language
    latency: list[dict[str, str]] = []  # name, method, count, latency (ms)
    throughput: list[dict[str, str]] = []  # name, method, throughput (requests a second)
    total_throughput: str = "0"
    history: list[dict[str, str | float]] = []  # time, cpu %, memory %
    version: str = ""  # '0.1.0 (ahead+3)'
    commit: str = ""

    @rx.var
    def memory_percent(self) -> float:
        return percent(self.memory_used, self.memory_total)

    @rx.event
    async def load(self):
        """on_load: the release (it does not change while the server runs) and the tour's switch."""
        def read(db, actor):
            policy.require_global_admin(actor)
            organization = lookup.organization(db, actor.organization)
            return system_info.version_info(), bool(organization and organization.enable_tour)

        found = await call(self, read, forbidden_page=True)
        if found.failed:
            return found.event
        info, self.tour_enabled = found.value
        ahead = f" (ahead+{info['commitOffset']})" if info["commitOffset"] else ""
        self.version, self.commit = f"{info['version']}{ahead}", info["commitId"][:12]
        return None

    @rx.event
    async def tick(self):
        """Every POLL_MS: the host's figures and the API's tables."""
        def read(db, actor):
            policy.require_global_admin(actor)
            return system_info.system_info(), metrics.prometheus_info()

        found = await call(self, read, forbidden_page=True, quiet=True)
        if found.failed:
            if found.event is not None:
                return found.event
            self.error = await say(self, "System info failed to get: %s", await message(self, found.error))
            return None
        host, api = found.value
        language = (await self.get_state(Prefs)).lang  # figures as the viewer writes them (i18n/formats.py)
        self.error = ""
        self.cpu = host["cpuUsage"]
        self.cpu_text = [percent_text(usage, language) for usage in self.cpu]
        self.memory_used, self.memory_total = host["memoryUsed"], host["memoryTotal"]
        self.memory_text = f"{size_text(self.memory_used, language)} / {size_text(self.memory_total, language)}"
        self.latency = [{**row, "count": count_text(row["count"], language)} for row in api["apiLatency"]]
        self.throughput = [{**row, "throughput": decimal_text(row["throughput"], language)}
                           for row in api["apiThroughput"]]
        self.total_throughput = decimal_text(api["totalThroughput"], language)
        point = {"time": clock_text(utcnow(), language),
                 "cpu": round(sum(self.cpu) / len(self.cpu), 1) if self.cpu else 0.0,
                 "memory": percent(self.memory_used, self.memory_total)}
        self.history = [*self.history, point][-HISTORY_POINTS:]
        self.ready = True
        return None
