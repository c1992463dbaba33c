"""axe-core in the browser tests: the npm package (tests/node, installed by
`make node-sdk`), injected into the page from disk, never from a CDN.

`serious(page)` runs the WCAG 2 A/AA rules and answers the critical and serious
violations, each as "rule: target" lines, so that a failing assertion names the
elements to fix. Toasts on screen are checked first, held while fully shown (a toast
fading in or out reads as faint text), then the page once they have gone."""

from __future__ import annotations

from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

AXE_SCRIPT = Path(__file__).resolve().parents[1] / "node" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("critical", "serious")

RUN_AXE = """async ([tags, only]) => {
  const context = only ? {include: [[only]]} : document;
  const result = await axe.run(context, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact,
                                      targets: v.nodes.map(n => n.target.join(" "))}));
}"""


TOAST = "[data-sonner-toast]"
# every toast on screen has finished coming in (fully opaque) and none is leaving
TOASTS_SHOWN = """(selector) => {
  const toasts = [...document.querySelectorAll(selector)];
  return toasts.length > 0 && toasts.every(t => t.dataset.mounted === "true" && t.dataset.removed !== "true"
                                              && getComputedStyle(t).opacity === "1");
}"""


def serious(page) -> list[str]:
    """The critical and serious WCAG 2 A/AA violations of the page as it is now, one line per element:
    the toasts on screen while they are shown, then the page once they have gone."""
    if not AXE_SCRIPT.exists():
        pytest.fail(f"{AXE_SCRIPT} is missing: run `make node-sdk` (npm ci --prefix tests/node)")
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_SCRIPT))
    found = _shown_toasts(page) or []
    page.locator(TOAST).first.wait_for(state="detached", timeout=15_000)
    found += page.evaluate(RUN_AXE, [WCAG_TAGS, ""])
    return [f"{v['id']}: {target}" for v in found if v["impact"] in BLOCKING for target in v["targets"]]


def shown_toasts(page) -> list[str]:
    """The critical and serious violations of the toasts on screen (there must be one)."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_SCRIPT))
    page.locator(TOAST).first.wait_for(state="attached")
    found = _shown_toasts(page)
    assert found is not None, "the toast went before it could be checked"
    return [f"{v['id']}: {target}" for v in found if v["impact"] in BLOCKING for target in v["targets"]]


def _shown_toasts(page) -> list | None:
    """axe over the toasts, held on screen by the pointer resting on them (a toast's timer stops while
    the pointer is over the toaster); None when none is on screen."""
    if page.locator(TOAST).count() == 0:
        return None
    try:
        page.locator(TOAST).first.hover(timeout=2_000)
        page.wait_for_function(TOASTS_SHOWN, arg=TOAST, timeout=3_000)
    except PlaywrightError:
        return None  # it left meanwhile: nothing to check
    try:
        return page.evaluate(RUN_AXE, [WCAG_TAGS, TOAST])
    finally:
        page.mouse.move(0, 0)
