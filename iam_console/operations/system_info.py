"""The host and the release, as the System Info page shows them (get-system-info,
get-version-info; docs/operations.md, "System info")."""

from __future__ import annotations

import functools
import shutil
import subprocess
import threading
import time
from pathlib import Path

import psutil

from iam_console import __version__
from iam_console.core.errors import ServiceError
from iam_console.settings import settings

PROJECT = Path(__file__).resolve().parents[2]
VERSION_FILE = "iam_console/__init__.py"  # the commit that last changed it made the release
MIN_CPU_SAMPLE_SECONDS = 1.0


class CpuSampler:
    """Usage per core since the previous sample. psutil measures between two calls, so the
    samples are shared: viewers polling at once neither block for a second nor shorten
    each other's interval below MIN_CPU_SAMPLE_SECONDS."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.at = 0.0
        self.last: list[float] = []

    def usage(self) -> list[float]:
        with self.lock:
            now = time.monotonic()
            if not self.last or now - self.at >= MIN_CPU_SAMPLE_SECONDS:
                if not self.last:  # the first call only sets psutil's baseline
                    psutil.cpu_percent(percpu=True)
                    time.sleep(0.1)
                self.last, self.at = psutil.cpu_percent(percpu=True), now
            return list(self.last)


CPU = CpuSampler()


def _data_dir() -> Path:
    """Where the server keeps its files: the uploaded files' directory, else the project."""
    path = Path(settings.files_dir)
    while not path.exists() and path != path.parent:
        path = path.parent
    return path


def system_info() -> dict:
    """CPU usage per core (%), this worker's resident memory and the machine's total (bytes),
    the data disk's used and total bytes, and this process's bytes written and read."""
    try:
        process = psutil.Process()
        disk = shutil.disk_usage(_data_dir())
        try:
            io = process.io_counters()
            sent, received = io.write_bytes, io.read_bytes
        except (AttributeError, psutil.AccessDenied):  # not every platform counts a process's I/O
            sent = received = 0
        return {"cpuUsage": [round(value, 1) for value in CPU.usage()],
                "memoryUsed": process.memory_info().rss, "memoryTotal": psutil.virtual_memory().total,
                "diskUsed": disk.used, "diskTotal": disk.total,
                "networkSent": sent, "networkRecv": received, "networkTotal": sent + received}
    except (psutil.Error, OSError) as exc:  # the page and the API show why: 'System info failed to get: ...'
        raise ServiceError("%s", str(exc) or type(exc).__name__) from exc


def _git(*args: str) -> str:
    git = shutil.which("git")
    if git is None or not (PROJECT / ".git").exists():
        return ""
    try:
        done = subprocess.run([git, "-C", str(PROJECT), *args], capture_output=True, text=True, timeout=5,
                              check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout.strip() if done.returncode == 0 else ""


@functools.cache
def version_info() -> dict:
    """The release (`__version__`), the commit running, and how many commits it is ahead of
    the release: of the newest tag when the checkout has tags, else of the commit that set
    `__version__`. Without git (an installed copy): the release alone."""
    commit = _git("rev-parse", "HEAD")
    described = _git("describe", "--tags", "--long", "--abbrev=40")
    if described:  # <tag>-<ahead>-g<commit>
        tag, ahead, _ = described.rsplit("-", 2)
        return {"version": tag, "commitId": commit, "commitOffset": int(ahead)}
    release = _git("log", "-1", "--format=%H", "--", VERSION_FILE)
    ahead = _git("rev-list", "--count", f"{release}..HEAD") if release else ""
    return {"version": __version__, "commitId": commit, "commitOffset": int(ahead or 0)}
