"""Calls of assets/iam.js's functions from the pages' events. The page's scripts load after the
page itself, so an event (on_load, or a click soon after the page shows) may come first: the call
waits for its function, 10 seconds at most, then runs it; a function still missing then fails
as a call of it would."""

from __future__ import annotations

import json

WAIT_STEPS, STEP_MS = 200, 50


def call(function: str, *arguments: object, raw: str = "") -> str:
    """`window.<function>(arguments...)` once assets/iam.js has defined it; `raw`: arguments
    already written as JavaScript (after the JSON ones)."""
    given = ", ".join([json.dumps(a) for a in arguments] + ([raw] if raw else []))
    return (f"(async () => {{ for (let i = 0; i < {WAIT_STEPS} && !window.{function}; i++) "
            f"await new Promise((done) => setTimeout(done, {STEP_MS})); return await window.{function}({given}); }})()")
