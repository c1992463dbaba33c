"""The code editor (ui/components/code_editor.py) in the browser, on the tests' own page
/_test/code-editor (tests/e2e/widget_pages.py), where four editors are bound to a state as a screen
binds them: typing reaches the state and the state's echoes never undo typing, a text set by the
state replaces the editor's, the editor answers when asked for its text, announces that it is ready,
read-only refuses typing, each language is highlighted, the sizes are fixed, Tab leaves it, it has
an accessible name, and its text meets WCAG AA contrast in the light and dark themes."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.e2e.widget_pages import OTHER_MODEL, SAMPLES

LANGUAGES = ("casbin", "html", "css", "json")

TEXT_OF = """(id) => Array.from(document.querySelectorAll(`#${id} .cm-line`)).map((l) => l.textContent).join("\\n")"""

# WCAG 2 contrast of every piece of text in the editors (code, line numbers) against the
# background it is drawn on: the first opaque background among its ancestors.
LOW_CONTRAST = """() => {
  const rgba = (text) => (text.match(/[\\d.]+/g) || []).map(Number);
  const channel = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const luminance = ([r, g, b]) => 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
  const background = (el) => {
    for (let node = el; node; node = node.parentElement) {
      const c = rgba(getComputedStyle(node).backgroundColor);
      if (c.length >= 3 && (c.length < 4 || c[3] >= 1)) return c;
    }
    return [255, 255, 255];
  };
  const found = [];
  const pieces = document.querySelectorAll(
    ".cm-editor .cm-line, .cm-editor .cm-line span, .cm-editor .cm-gutterElement");
  for (const el of pieces) {
    if (!el.textContent.trim()) continue;
    const [l1, l2] = [luminance(rgba(getComputedStyle(el).color)), luminance(background(el))];
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    if (ratio < 4.5) found.push(`${el.className} '${el.textContent.slice(0, 20)}' ${ratio.toFixed(2)}`);
  }
  return {checked: pieces.length, found};
}"""


def _open(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/_test/code-editor")
    for language in LANGUAGES:
        expect(page.locator(f"#editor-{language} .cm-content")).to_be_visible()
    return page


def _text(page, language: str) -> str:
    return page.evaluate(TEXT_OF, f"editor-{language}")


def _content(page, language: str):
    return page.locator(f"#editor-{language} .cm-content")


def test_typing_reaches_the_state_and_its_echoes_never_undo_it(visit, page, api_login, accounts):
    _open(visit, page, api_login, accounts)
    expect(page.locator("#ready")).to_have_text("casbin,css,html,json")  # each announced it is ready
    assert _text(page, "casbin") == SAMPLES["casbin"]

    _content(page, "casbin").click()
    page.keyboard.press("Control+End")
    # chunks with pauses just over the editor's 250 ms: each update goes out during the pause and
    # its echo, late by ECHO_DELAY, comes back while the next chunk is being typed
    chunks = ("# one", " two", " three", " four", " five", " six", " seven", " eight")
    for chunk in chunks:
        page.keyboard.type(chunk, delay=25)
        page.wait_for_timeout(260)
    expected = SAMPLES["casbin"] + "".join(chunks)
    expect(page.locator("#state-casbin")).to_have_text(expected)
    assert _text(page, "casbin") == expected

    # a click on a button right after typing (Save) finds the typed text in the state: leaving
    # the editor sends it before the click's own event
    page.keyboard.type(" nine", delay=5)
    page.click("#save")
    expect(page.locator("#saved")).to_have_text(expected + " nine")
    expected += " nine"

    # asked for its text, it answers with what was typed a moment ago, and the state gets it too
    _content(page, "casbin").click()
    page.keyboard.press("Control+End")
    page.keyboard.type(" ten", delay=5)
    page.click("#ask")
    expect(page.locator("#answer")).to_have_text(expected + " ten")
    expect(page.locator("#state-casbin")).to_have_text(expected + " ten")
    page.click("#ask-missing")
    expect(page.locator("#answer")).to_have_text("(none)")

    # a text the state sets replaces the editor's
    page.click("#load-other")
    expect(page.locator("#state-casbin")).to_have_text(OTHER_MODEL)
    page.wait_for_function(f"(expected) => ({TEXT_OF})('editor-casbin') === expected", arg=OTHER_MODEL)
    # and typing goes on from there
    _content(page, "casbin").click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("# edited\n")
    expect(page.locator("#state-casbin")).to_have_text("# edited\n" + OTHER_MODEL)

    # leaving the editor sends what was typed at once, without waiting for the pause
    _content(page, "html").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("<p>x")  # the closing tag comes by itself
    page.keyboard.press("Tab")
    expect(page.locator("#state-html")).to_have_text(SAMPLES["html"] + "<p>x</p>", timeout=200)


def test_read_only_refuses_typing_and_can_be_made_editable(visit, page, api_login, accounts):
    _open(visit, page, api_login, accounts)
    preview = _content(page, "json")
    expect(preview).to_have_attribute("aria-readonly", "true")
    preview.click()
    expect(preview).to_be_focused()  # focusable, so its text can be selected and copied by keyboard
    page.keyboard.press("Control+End")
    page.keyboard.type("typed")
    page.keyboard.press("Enter")
    page.wait_for_timeout(400)
    assert _text(page, "json") == SAMPLES["json"]
    expect(page.locator("#state-json")).to_have_text(SAMPLES["json"])

    page.click("#toggle-lock")
    expect(preview).not_to_have_attribute("aria-readonly", "true")
    preview.click()
    page.keyboard.press("Control+Home")
    page.keyboard.type("  ")
    expect(page.locator("#state-json")).to_have_text("  " + SAMPLES["json"])
    page.click("#toggle-lock")
    expect(preview).to_have_attribute("aria-readonly", "true")


def test_each_language_is_highlighted(visit, page, api_login, accounts):
    _open(visit, page, api_login, accounts)

    def has(language: str, token: str, text: str) -> None:
        expect(page.locator(f"#editor-{language} .{token}").filter(has_text=text).first).to_be_visible()

    for section in ("[request_definition]", "[policy_definition]", "[role_definition]", "[policy_effect]",
                    "[matchers]"):
        # a section's name is one heading (bracket matching may split its brackets into spans of their own)
        line = page.locator("#editor-casbin .cm-line").filter(has_text=section)
        assert "".join(line.locator(".tok-heading").all_text_contents()) == section
    has("casbin", "tok-comment", "# allow when one policy allows")
    has("casbin", "tok-keyword", "some")
    has("casbin", "tok-keyword", "where")
    has("casbin", "tok-atom", "allow")
    has("casbin", "tok-definition", "m")
    has("casbin", "tok-propertyName", "eft")
    has("casbin", "tok-operator", "&&")

    has("html", "tok-comment", "<!-- signup -->")
    has("html", "tok-typeName", "div")
    has("html", "tok-propertyName", "href")
    has("html", "tok-string", '"/login"')

    has("css", "tok-comment", "/* the form */")
    has("css", "tok-className", "form")
    has("css", "tok-propertyName", "margin")
    has("css", "tok-number", "4")

    has("json", "tok-propertyName", '"action"')
    has("json", "tok-string", '"login"')
    has("json", "tok-number", "42")
    has("json", "tok-bool", "true")

    # plain text stays plain: a word of the model that is no keyword
    expect(page.locator("#editor-casbin .tok-keyword").filter(has_text="sub")).to_have_count(0)


def test_fixed_sizes_keyboard_and_accessible_names(visit, page, api_login, accounts):
    _open(visit, page, api_login, accounts)
    for language, (width, height) in {"html": (900, 300), "css": (900, 300), "json": (900, 300)}.items():
        box = page.locator(f"#editor-{language}").bounding_box()
        assert (round(box["width"]), round(box["height"])) == (width, height), (language, box)
    assert round(page.locator("#editor-casbin").bounding_box()["height"]) == 500
    # a long text scrolls inside the box rather than growing it
    _content(page, "css").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n" * 40 + "/* end */")
    expect(page.locator("#editor-css .tok-comment").filter(has_text="/* end */")).to_be_visible()
    assert round(page.locator("#editor-css").bounding_box()["height"]) == 300

    for language in LANGUAGES:
        expect(page.get_by_role("textbox", name=f"{language} text", exact=True)).to_have_count(1)

    _content(page, "casbin").focus()
    page.keyboard.press("Tab")  # Tab leaves the editor instead of indenting
    expect(_content(page, "html")).to_be_focused()
    page.keyboard.press("Shift+Tab")
    expect(_content(page, "casbin")).to_be_focused()
    assert _text(page, "casbin") == SAMPLES["casbin"]


def test_text_contrast_meets_wcag_aa_in_light_and_dark(visit, page, api_login, accounts):
    _open(visit, page, api_login, accounts)
    for mode in ("theme-default", "theme-dark"):
        page.click("#theme-menu")
        page.click(f"#{mode}")
        expect(page.locator(f"#{mode}")).to_have_count(0)
        page.wait_for_timeout(200)
        background = page.locator("#editor-casbin .cm-editor").evaluate("e => getComputedStyle(e).backgroundColor")
        assert (background == "rgb(255, 255, 255)") == (mode == "theme-default"), background  # it follows the theme
        result = page.evaluate(LOW_CONTRAST)
        assert result["checked"] > 50, result
        assert result["found"] == [], (mode, result["found"])
