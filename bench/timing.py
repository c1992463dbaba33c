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


def measured(call) -> tuple[object, dict]:
    """`call()`'s result and what it cost this process: wall-clock seconds, CPU seconds, and the
    resident memory before and at its peak (sampled every 20 ms), in MiB."""
    import os
    import threading

    import psutil

    process = psutil.Process()
    baseline = peak = process.memory_info().rss
    done = threading.Event()

    def sample() -> None:
        nonlocal peak
        while not done.wait(0.02):
            peak = max(peak, process.memory_info().rss)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    cpu_before, started = os.times(), time.perf_counter()
    try:
        result = call()
    finally:
        elapsed, cpu_after = time.perf_counter() - started, os.times()
        done.set()
        sampler.join()
    return result, {"seconds": elapsed, "baseline_mb": baseline / 2**20,
                    "peak_mb": max(peak, process.memory_info().rss) / 2**20,
                    "cpu_seconds": (cpu_after.user - cpu_before.user) + (cpu_after.system - cpu_before.system)}
