"""Pages that exist only on the browser tests' server (IAM_EXTRA_PAGES=tests.e2e.widget_pages, set
by conftest.py): they host widgets that no screen shows yet, bound to a state as a screen would
bind them. They are guarded like every console page and have no menu entry."""

from __future__ import annotations

import asyncio

import reflex as rx

from iam_console.core.seed import USER_MODEL_TEXT
from iam_console.ui.components.code_editor import ask_text, code_editor
from iam_console.ui.routes import page

# the seeded user model with a comment, whose highlighting the tests check
MODEL = USER_MODEL_TEXT.replace("[policy_effect]", "# allow when one policy allows\n[policy_effect]")
OTHER_MODEL = """[request_definition]
r = sub, obj

[policy_definition]
p = sub, obj

[policy_effect]
e = !some(where (p.eft == deny))

[matchers]
m = r.sub == p.sub && keyMatch(r.obj, p.obj)
"""
SAMPLES = {
    "casbin": MODEL,
    "html": '<!-- signup -->\n<div class="form" id="signup">\n  <a href="/login">Sign in</a>\n</div>\n',
    "css": "/* the form */\n.form {\n  color: #333;\n  margin: 4px 0;\n}\n",
    "json": '{\n  "id": 42,\n  "action": "login",\n  "ok": true,\n  "user": null\n}\n',
}
# the Casbin editor's updates come back late, as over a slow connection, so that the tests can
# type while an echo of an older text is on its way
ECHO_DELAY = 0.15
SIZES = {"casbin": ("100%", "500px"), "html": ("900px", "300px"), "css": ("900px", "300px"),
         "json": ("900px", "300px")}


class EditorCheck(rx.State):
    texts: dict[str, str] = dict(SAMPLES)
    ready: list[str] = []
    answer: str = ""  # what the Casbin editor answered when asked for its text
    saved: str = ""  # the Casbin text as the state held it when Save was clicked
    locked: bool = True  # the JSON editor is a read-only preview

    @rx.event
    async def set_text(self, language: str, text: str):
        if language == "casbin":
            await asyncio.sleep(ECHO_DELAY)
        self.texts[language] = text

    @rx.event
    def mark_ready(self, language: str):
        self.ready = sorted({*self.ready, language})

    @rx.event
    def save(self):
        self.saved = self.texts["casbin"]

    @rx.event
    def load_other_model(self):
        self.texts["casbin"] = OTHER_MODEL

    @rx.event
    def ask(self):
        return ask_text("editor-casbin", EditorCheck.receive)

    @rx.event
    def receive(self, text: str | None):
        self.answer = "(none)" if text is None else text

    @rx.event
    def ask_missing(self):
        return ask_text("editor-nowhere", EditorCheck.receive)

    @rx.event
    def toggle_lock(self):
        self.locked = not self.locked


def _editor(language: str) -> rx.Component:
    width, height = SIZES[language]
    return rx.vstack(
        code_editor(EditorCheck.texts[language], lambda text: EditorCheck.set_text(language, text),
                    language=language, label=f"{language} text", id=f"editor-{language}", width=width,
                    height=height, read_only=EditorCheck.locked if language == "json" else False,
                    on_ready=EditorCheck.mark_ready(language)),
        rx.el.pre(EditorCheck.texts[language], id=f"state-{language}"),
        width="100%",
    )


@page("/_test/code-editor", "Code editor")
def code_editor_check() -> rx.Component:
    return rx.vstack(
        rx.hstack(
            rx.button("Save", on_click=EditorCheck.save, id="save"),
            rx.button("Ask", on_click=EditorCheck.ask, id="ask"),
            rx.button("Ask missing", on_click=EditorCheck.ask_missing, id="ask-missing"),
            rx.button("Load other model", on_click=EditorCheck.load_other_model, id="load-other"),
            rx.button("Toggle lock", on_click=EditorCheck.toggle_lock, id="toggle-lock"),
            rx.input(id="after-editor", aria_label="after"),
        ),
        rx.el.pre(EditorCheck.answer, id="answer"),
        rx.el.pre(EditorCheck.saved, id="saved"),
        rx.text(EditorCheck.ready.join(","), id="ready"),
        *[_editor(language) for language in SAMPLES],
        width="100%",
    )
