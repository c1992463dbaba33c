"""The production command (`python -m iam_console.serve`, docs/deployment.md) on a free port,
started and stopped by a benchmark, as tests/e2e/conftest.py starts it for the browser tests:
first start (`iam_console.startup`), the front end's build, then the server in its own process
group, waited for until it answers /ping and serves the console's HTML."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PYTHON = str(ROOT / ".venv" / "bin" / "python")


def free_port() -> int:
    with contextlib.closing(socket.socket(socket.AF_INET, socket.SOCK_STREAM)) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def get(url: str) -> tuple[int, str]:
    """(status, body) of a GET; status 0 when nothing answers."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, ""
    except OSError:
        return 0, ""


class OwnServer:
    """The production command on a free port, its files and log under `workdir`; its database
    is `database_url`, else a scratch SQLite file there. With `reuse_build`, a front end already
    built in .web is served as it is, IAM_ORIGIN being the origin it was built for (as behind a
    proxy): for a benchmark of the API alone."""

    def __init__(self, workdir: Path, admin_password: str, *, database_url: str = "", workers: int = 1,
                 reuse_build: bool = False) -> None:
        self.port = free_port()
        self.base = f"http://localhost:{self.port}"
        self.log_path = workdir / "server.log"
        bins = [str(ROOT / "bunpkg" / "node_modules" / ".bin"), str(ROOT / ".venv" / "bin")]
        self.env = dict(os.environ, PATH=os.pathsep.join([*bins, os.environ.get("PATH", "")]),
                        REFLEX_TELEMETRY_ENABLED="false", IAM_PORT=str(self.port), IAM_ORIGIN=self.base,
                        IAM_DATABASE_URL=database_url or f"sqlite:///{workdir / 'iam.db'}",
                        IAM_ADMIN_PASSWORD=admin_password, IAM_FILES_DIR=str(workdir / "files"),
                        IAM_WORKERS=str(workers))
        self.process: subprocess.Popen | None = None
        self.reuse_build = reuse_build

    def start(self, timeout: float = 600) -> None:
        """First start and build (each within `timeout`), then serve; `timeout` again to answer."""
        steps = [["-m", "iam_console.startup"], ["-m", "iam_console.serve", "build"]]
        if self.reuse_build:
            from iam_console.serve import built_origin

            origin = built_origin(ROOT / ".web")
            if origin:
                self.env["IAM_ORIGIN"] = origin
                steps.pop()
        for step in steps:
            done = subprocess.run([PYTHON, *step], cwd=ROOT, env=self.env, capture_output=True, text=True,
                                  timeout=timeout)
            if done.returncode != 0:
                raise SystemExit(f"{' '.join(step)} failed:\n{(done.stdout + done.stderr)[-3000:]}")
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen([PYTHON, "-m", "iam_console.serve"], cwd=ROOT, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                            start_new_session=True)
        deadline = time.monotonic() + timeout
        while not (get(self.base + "/ping")[0] == 200 and "<html" in get(self.base + "/")[1].lower()):
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the server did not start:\n{self.tail()}")
            time.sleep(0.5)

    def tail(self, lines: int = 40) -> str:
        with contextlib.suppress(OSError):
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        return ""

    def stop(self) -> None:
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)  # a worker left in the group
