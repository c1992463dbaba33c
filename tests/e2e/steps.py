"""Steps several browser tests take on an edit page."""

from __future__ import annotations

from playwright.sync_api import expect


def choose(page, trigger, option: str) -> None:
    """Open a select (its trigger, a locator) and pick the option of that name."""
    trigger.click()
    page.get_by_role("option", name=option, exact=True).click()


def save(page) -> None:
    """Save, and wait until the success toast has come and gone."""
    page.click("#edit-save")
    expect(page.get_by_text("Successfully saved")).to_be_visible()
    page.get_by_text("Successfully saved").wait_for(state="hidden")
