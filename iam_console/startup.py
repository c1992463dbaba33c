"""What the server does before it answers: migrate, create the first-start data, then add what
Casdoor's init data file (IAM_INIT_DATA) holds that is not there yet."""

from __future__ import annotations

import gc
import sys

from iam_console.core import init_data
from iam_console.core.seed import announce_generated_password, ensure_first_start_data
from iam_console.db import migrate, session_scope
from iam_console.settings import settings

SWITCH_INTERVAL_SECONDS = 0.0005
GC_THRESHOLDS = (50_000, 50, 100)  # young objects before a collection; collections before the next generation's


def prepare_database() -> None:
    migrate()
    with session_scope() as db:
        generated = ensure_first_start_data(db, settings.admin_password)
    announce_generated_password(generated)
    load_init_data()


def settle_the_interpreter() -> None:
    """Once started: the objects the start made (modules, the app, its pages and states: a few
    hundred thousand) leave the garbage collector's watch, as they live as long as the process.
    Its full collections then look at what requests make, not at them: they took 150-200 ms
    during a 20,000-row import (every thread waits for a collection), about 20 ms after. And the
    interpreter switches threads sooner (docs/performance.md, "Noisy neighbour")."""
    gc.collect()
    gc.freeze()
    # fewer collections: with the start frozen, few objects count as long-lived, so a full
    # collection came every half second under load (20-50 ms each, every thread waiting)
    gc.set_threshold(*GC_THRESHOLDS)
    # a thread that computes lets go of the interpreter lock after this long when another thread
    # waits for it (5 ms by default): a request that waits on the database between its steps waits
    # up to this long again at each step while another thread computes
    sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)


def load_init_data() -> init_data.Loaded | None:
    if not settings.init_data:
        return None
    loaded = init_data.load_file(settings.init_data)
    print(f"IAM_INIT_DATA {settings.init_data}: {loaded.summary()}", flush=True)
    for record, reason in loaded.refused:
        print(f"  refused {record}: {reason}", flush=True)
    return loaded


if __name__ == "__main__":
    prepare_database()
