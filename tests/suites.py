"""`make test`: every suite, in two lanes that run at once, so that the whole run takes about as
long as the browser suites alone.

- The service lane: the unit and HTTP tests, then each extension's of extensions/ (its tests/
  but its browser tests), then the schema fuzzing. They use the shared PostgreSQL, MariaDB and
  Redis databases, and no front end.
- The browser lane: the browser tests, then the scaffold's, then each extension's (tests/e2e of
  its tests/): each builds the front end into the project's .web/ and serves it, one after the
  other.
- Then, once both lanes are done, the scale tests: they serve .web/ too, and use the shared
  databases.

Each lane's output is kept in a temporary file and printed whole when the lane ends, so that the
log reads suite by suite. The exit status is the first failure's, 0 when every suite passed.
Arguments are pytest options given to every suite (`make test PYTEST_ARGS=-x`)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[1]
EXTENSION_TESTS = tuple(sorted(str(path.relative_to(PROJECT)) for path in PROJECT.glob("extensions/*/tests")))
LANES = {
    "service": (("tests/unit", "tests/api"),
                *((tests, f"--ignore={tests}/e2e") for tests in EXTENSION_TESTS), ("tests/fuzz",)),
    "browser": (("tests/e2e",), ("tests/e2e_scaffold",),
                *((f"{tests}/e2e",) for tests in EXTENSION_TESTS if (PROJECT / tests / "e2e").is_dir())),
}
AFTER_BOTH = (("tests/scale",),)


def _command(paths: tuple[str, ...], options: list[str]) -> list[str]:
    return [sys.executable, "-m", "pytest", "-q", *options, *paths]


def _lane(suites: tuple[tuple[str, ...], ...], options: list[str], log: Path) -> subprocess.Popen:
    """The suites one after the other in a shell of their own, each whatever the one before did;
    the lane fails if one of them did."""
    steps = (f"{subprocess.list2cmdline(_command(paths, options))} || failed=1" for paths in suites)
    script = "failed=0; " + "; ".join(steps) + "; exit $failed"
    with log.open("wb") as out:
        return subprocess.Popen(["bash", "-c", script], cwd=PROJECT, stdout=out, stderr=subprocess.STDOUT)


def main(options: list[str]) -> int:
    started = time.monotonic()
    status = 0
    with tempfile.TemporaryDirectory(prefix="iam-suites-") as folder:
        logs = {name: Path(folder) / f"{name}.log" for name in LANES}
        running = {name: _lane(suites, options, logs[name]) for name, suites in LANES.items()}
        for name, process in running.items():
            code = process.wait()
            suites = " then ".join(" ".join(paths) for paths in LANES[name])
            outcome = "passed" if code == 0 else f"failed ({code})"
            print(f"==== the {name} lane ({suites}): {outcome}, {time.monotonic() - started:.0f} s in", flush=True)
            sys.stdout.write(logs[name].read_text(errors="replace"))
            sys.stdout.flush()
            status = status or code
    for paths in AFTER_BOTH:
        code = subprocess.run(_command(paths, options), cwd=PROJECT).returncode
        status = status or code
    print(f"==== every suite: {'passed' if status == 0 else 'failed'} in {time.monotonic() - started:.0f} s",
          flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
