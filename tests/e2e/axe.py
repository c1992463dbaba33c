"""axe-core in the browser tests: the npm package (tests/node, installed by
`make node-sdk`), injected into the page from disk, never from a CDN.

`serious(page)` runs the WCAG 2 A/AA rules and answers the critical and serious
violations, each as "rule: target" lines, so that a failing assertion names the
elements to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

AXE_SCRIPT = Path(__file__).resolve().parents[1] / "node" / "node_modules" / "axe-core" / "axe.min.js"
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]
BLOCKING = ("critical", "serious")

RUN_AXE = """async (tags) => {
  const result = await axe.run(document, {runOnly: {type: "tag", values: tags}, resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact,
                                      targets: v.nodes.map(n => n.target.join(" "))}));
}"""


def serious(page) -> list[str]:
    """The critical and serious WCAG 2 A/AA violations of the page as it is now, one line per element."""
    if not AXE_SCRIPT.exists():
        pytest.fail(f"{AXE_SCRIPT} is missing: run `make node-sdk` (npm ci --prefix tests/node)")
    # toasts come and go: axe reads one that is fading in or out as faint text, so wait for them to go
    page.locator("[data-sonner-toast]").first.wait_for(state="detached", timeout=15_000)
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE_SCRIPT))
    found = page.evaluate(RUN_AXE, WCAG_TAGS)
    return [f"{v['id']}: {target}" for v in found if v["impact"] in BLOCKING for target in v["targets"]]
