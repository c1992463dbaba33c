"""Steps several browser tests take: on an edit page, and arranging records in the server's
database directly."""

from __future__ import annotations

import contextlib
import re
import urllib.parse
from collections.abc import Iterator

from playwright.sync_api import expect


@contextlib.contextmanager
def server_db(server) -> Iterator:
    """A session on the browser tests' server's database, committed on leaving."""
    from sqlmodel import Session

    from iam_console.db import make_engine

    engine = make_engine(server.database_url)
    try:
        with Session(engine) as db:
            yield db
            db.commit()
    finally:
        engine.dispose()


def as_page(page, headers: dict[str, str] | None = None) -> dict[str, str]:
    """Headers for a write through Playwright's API requests (page.request) with the Origin a
    console page sends: unlike a page's fetch they send none, and the CSRF guard refuses a write
    the session cookie authenticates without it. The origin is where the context's relative URLs
    lead, which the answer to /ping tells."""
    url = urllib.parse.urlsplit(page.request.get("/ping").url)
    return {"Origin": f"{url.scheme}://{url.netloc}", **(headers or {})}


def choose(page, trigger, option: str) -> None:
    """Open a select (its trigger, a locator) and pick the option of that name."""
    trigger.click()
    page.get_by_role("option", name=option, exact=True).click()


def save(page) -> None:
    """Save, and wait until the success toast has come and gone."""
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    page.get_by_text("Successfully saved").wait_for(state="hidden")


def pick(page, field: str, option: str, typed: str = "") -> None:
    """Open the picker of `field`, search for `typed` (if given) and choose the option of that
    name; then wait until its popover has closed, so that the next step (another picker, axe) sees
    the page."""
    page.click(f"#field-{field}")
    if typed:
        page.locator("input.pick-search, .pick-search input").first.fill(typed)
    chosen = page.locator(".pick-option").filter(has_text=re.compile(f"^{re.escape(option)}$"))
    expect(chosen).to_have_count(1)
    chosen.click()
    expect(page.locator(".pick-option")).to_have_count(0)
