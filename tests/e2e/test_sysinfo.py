"""System Info in the browser: the global admin sees every core and the memory, the API
tables fill and follow new requests without a reload (the page polls), the chart, the about
card and the page's own tour; an organization admin has no menu entry and is refused."""

from __future__ import annotations

import os
import re

from playwright.sync_api import expect

from tests.e2e.axe import serious

TOUR_STEPS = 5


def _row(page, route: str):
    return page.locator("#sysinfo-latency-table tr", has=page.get_by_role("cell", name=route, exact=True))


def test_the_global_admin_watches_the_server(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/sysinfo")
    expect(page.locator(".sysinfo-core")).to_have_count(os.cpu_count())  # the server runs on this machine
    expect(page.locator("#sysinfo-memory-text")).to_have_text(re.compile(r"^\d+\.\d MB / \d+\.\d GB$"))
    # what the figures are: this process, of the machine's total
    expect(page.locator("#sysinfo-memory-caption")).to_have_text(
        "This server process, of the machine's total memory")
    expect(page.locator("#sysinfo-version")).to_have_text(re.compile(r"^\S+( \(ahead\+\d+\))?$"))
    expect(page.locator("#sysinfo-commit")).to_have_text(re.compile(r"^([0-9a-f]{12})?$"))
    expect(page.get_by_role("progressbar", name="Memory usage")).to_be_visible()
    expect(page.get_by_role("progressbar", name="Core 1")).to_be_visible()

    # the tables follow the traffic without a reload: the page reads them every 2 seconds
    for _ in range(3):
        assert page.request.get("/api/get-version-info").json()["status"] == "ok"
    row = _row(page, "/api/get-version-info")
    expect(row).to_have_count(1, timeout=10_000)
    count = int(row.locator("td").nth(2).inner_text())
    assert count >= 3
    for _ in range(4):
        page.request.get("/api/get-version-info")
    expect(row.locator("td").nth(2)).to_have_text(str(count + 4), timeout=10_000)
    expect(page.locator("#sysinfo-total-throughput")).to_have_text(re.compile(r"^Total throughput: \d+\.\d$"))
    # the chart of the last minute has its two lines, and grows a point a reading
    expect(page.locator("#sysinfo-history .recharts-line")).to_have_count(2)
    assert serious(page) == []


def test_the_page_has_its_own_tour(visit, page, api_login, accounts):
    api_login(accounts.admin)  # the built-in organization has enableTour
    visit("/sysinfo")
    expect(page.locator("#tour-title")).to_have_text("CPU usage")
    for step in range(1, TOUR_STEPS):
        expect(page.locator("#tour-count")).to_have_text(f"{step} / {TOUR_STEPS}")
        page.click("#tour-next")
    expect(page.locator("#tour-next")).to_have_text("Done")
    page.click("#tour-next")
    expect(page.locator("#tour")).to_have_count(0)
    assert page.url.rstrip("/").endswith("/sysinfo")  # the last step closes the tour; the page stays
    visit.reload()
    expect(page.locator(".sysinfo-core").first).to_be_visible()
    expect(page.locator("#tour")).to_have_count(0)  # once per browser
    page.click("#tour-open")
    expect(page.locator("#tour-title")).to_have_text("CPU usage")
    page.click("#tour-skip")
    expect(page.locator("#tour")).to_have_count(0)
    # Escape closes it too, wherever the focus is
    page.click("#tour-open")
    expect(page.locator("#tour-title")).to_have_text("CPU usage")
    page.locator("#sysinfo-memory").click()
    page.keyboard.press("Escape")
    expect(page.locator("#tour")).to_have_count(0)


def test_an_organization_admin_is_refused(visit, page, api_login, accounts, server):
    api_login(accounts.boss)
    visit("/")
    expect(page.locator("#shell-header")).to_be_visible()
    expect(page.get_by_role("link", name="System Info")).to_have_count(0)
    visit("/sysinfo")
    page.wait_for_url(re.compile(r"/403$"))
