"""The scale-out test's fixtures: Chromium as the browser tests have it."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import browser  # noqa: F401  (the fixture)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call":
        item.rep_call = report
