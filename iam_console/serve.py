"""The production server without `reflex run` (docs/deployment.md, "The production command").

    python -m iam_console.serve build   # compile the pages, build the front end for IAM_ORIGIN
    python -m iam_console.serve         # serve it and the backend on IAM_PORT

`reflex run --env prod` keeps a parent process that compiled the whole app (about 450 MB) beside
the worker that serves. Here the front end is built once (the `build` step, `reflex export` of the
front end alone, which then exits) and the server is the ASGI app itself under granian: a small
supervisor and IAM_WORKERS workers (1 by default; more need REDIS_URL, the console's state being
shared through Redis), each serving the built pages, the websocket and /api/*. The serving step
never compiles: it refuses to start when the built front end is missing or was built for another
origin, since the bundle bakes the websocket's URL. Figures: docs/performance.md, "Memory".
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from iam_console.settings import PROJECT_ROOT

WEB_DIR = PROJECT_ROOT / ".web"


class ServeError(Exception):
    pass


def event_url(origin: str) -> str:
    """The websocket URL the bundle must hold for this public origin."""
    scheme, _, rest = origin.rstrip("/").partition("://")
    return f"{'wss' if scheme == 'https' else 'ws'}://{rest}/_event"


def built_origin(web_dir: Path = WEB_DIR) -> str:
    """The public origin the front end in `web_dir` was built for, or "" without a complete build
    (event_url's inverse)."""
    try:
        event = json.loads((web_dir / "env.json").read_text()).get("EVENT", "")
    except (OSError, ValueError):
        return ""
    if not (web_dir / "build" / "client" / "index.html").is_file() or not event.endswith("/_event"):
        return ""
    scheme, _, rest = event.removesuffix("/_event").partition("://")
    return f"{'https' if scheme == 'wss' else 'http'}://{rest}"


def check_build(origin: str, web_dir: Path = WEB_DIR) -> None:
    """Raise ServeError unless a front end built for `origin` is in `web_dir`."""
    if not (web_dir / "build" / "client" / "index.html").is_file():
        raise ServeError(f"no built front end in {web_dir / 'build' / 'client'}: run `make build` "
                         "(python -m iam_console.serve build) first")
    try:
        built_for = json.loads((web_dir / "env.json").read_text()).get("EVENT", "")
    except (OSError, ValueError):
        built_for = ""
    if built_for != event_url(origin):
        raise ServeError(f"the front end was built for {built_for or 'an unknown origin'}, not {event_url(origin)}:"
                         " run `make build` again with this IAM_ORIGIN")


def workers(environ: dict[str, str]) -> int:
    """IAM_WORKERS (1 by default); more than one needs REDIS_URL."""
    raw = environ.get("IAM_WORKERS", "").strip() or "1"
    try:
        count = int(raw)
    except ValueError:
        raise ServeError(f"IAM_WORKERS must be a whole number, not {raw!r}") from None
    if count < 1:
        raise ServeError(f"IAM_WORKERS must be at least 1, not {count}")
    if count > 1 and not environ.get("REDIS_URL"):
        raise ServeError("IAM_WORKERS above 1 needs REDIS_URL: each worker would otherwise keep its own console state")
    return count


def _production_environment() -> None:
    # Reflex's own switches: production mode, no compile at start, the built pages mounted on the
    # backend (the internal ones are what `reflex run --env prod` sets for its workers)
    os.environ["REFLEX_ENV_MODE"] = "prod"
    os.environ["__REFLEX_SKIP_COMPILE"] = "true"
    os.environ["__REFLEX_MOUNT_FRONTEND_COMPILED_APP"] = "true"
    os.environ.setdefault("REFLEX_TELEMETRY_ENABLED", "false")


# What Reflex prints during the build that misleads here: its own next step (`make run` is this
# project's), its version checks (the README's Node 20 is enough; the pinned packages are the
# ones to use), and its compile counter, which counts a step more than its total ("149/148").
MISLEADING = (re.compile(r"reflex run\W? to start the app", re.IGNORECASE),
              re.compile(r"Your version \(.*\) of .* is out of date"))
COUNTER = re.compile(r"\b(\d+)/(\d+)\b")


def build_line(line: str) -> str | None:
    """A line of the front end's build as `make build` shows it: None to leave it out."""
    if any(pattern.search(line) for pattern in MISLEADING):
        return None
    return COUNTER.sub(lambda found: f"{min(int(found[1]), int(found[2]))}/{found[2]}", line)


def build(out: TextIO = sys.stdout) -> int:
    """Compile and build the front end for IAM_ORIGIN into .web/build/client, showing its
    progress without the lines that mislead (`build_line`)."""
    reflex = Path(sys.executable).with_name("reflex")
    command = [str(reflex), "export", "--frontend-only", "--no-zip", "--env", "prod"]
    # wide lines: piped, Reflex's console wraps at 80 columns, and a wrapped warning's rest would show
    environment = {**os.environ, "REFLEX_TELEMETRY_ENABLED": "false", "COLUMNS": "1000"}
    with subprocess.Popen(command, cwd=PROJECT_ROOT, env=environment,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace") as process:
        for line in process.stdout:
            shown = build_line(line.rstrip("\n"))
            if shown is not None:
                print(shown, file=out, flush=True)
    return process.returncode


def serving_line(origin: str) -> str:
    """The one line the serving step prints: where to sign in."""
    return f"Serving the IAM console on {origin.rstrip('/')}: sign in at {origin.rstrip('/')}/login"


def serve() -> None:
    from iam_console.settings import settings

    count = workers(dict(os.environ))
    check_build(settings.origin)
    _production_environment()
    os.chdir(PROJECT_ROOT)  # Reflex finds .web and rxconfig.py from the working directory
    if str(PROJECT_ROOT) not in sys.path:
        sys.path.insert(0, str(PROJECT_ROOT))
    if not os.environ.get("REDIS_URL"):  # the previous run's console states on disk go, as `reflex run`'s do
        for stale in (PROJECT_ROOT / ".states").glob("*"):
            if stale.is_file():
                stale.unlink()
    from granian.constants import Interfaces
    from granian.log import LogLevels
    from granian.server import Server

    # granian's supervisor imports nothing of the app (about 30 MB); each worker imports it on its
    # own. It does not read X-Forwarded-* headers: the client's address is decided by
    # IAM_TRUSTED_PROXIES alone (core/addresses.py).
    print(serving_line(settings.origin), flush=True)
    # granian's own start-up lines (its PID, "Listening at: http://0.0.0.0:...", each worker spawned) say
    # nothing a newcomer acts on: the line above says where to go; its warnings and errors still show
    Server(target="iam_console.iam_console:app", factory=True, address="0.0.0.0", port=settings.port,
           interface=Interfaces.ASGI, workers=count, log_access=False, log_level=LogLevels.warning).serve()


def _check_extensions() -> None:
    """Every extension joins whole, or the server does not start (iam_console/extension.py)."""
    from iam_console.extension import ExtensionError, check

    try:
        check()
    except ExtensionError as exc:
        raise ServeError(str(exc)) from None


def main(argv: list[str]) -> int:
    try:
        _check_extensions()
        if argv[:1] == ["build"]:
            return build()
        if argv:
            raise ServeError(f"unknown arguments {argv}: `python -m iam_console.serve [build]`")
        serve()
    except ServeError as exc:
        print(f"iam_console.serve: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
