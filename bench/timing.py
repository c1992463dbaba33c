"""Timing one call, shared by the bench scripts: its median and 95th percentile."""

from __future__ import annotations

import statistics
import time


def percentiles(samples: list[float]) -> tuple[float, float]:
    """(median, 95th percentile) of milliseconds."""
    samples = sorted(samples)
    return statistics.median(samples), samples[max(0, int(len(samples) * 0.95) - 1)]


def timed(call, runs: int) -> tuple[float, float]:
    """(median, 95th percentile) wall-clock milliseconds of `call()` over `runs` runs, after one
    to warm up."""
    call()
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return percentiles(samples)
