"""The code editor: one React component (code_editor.jsx) over CodeMirror 6, whose packages bun
installs from the npm registry when the front end is built; the browser loads it on demand, with
the first page that shows an editor. Everything that talks to an editor goes through the two
functions here (docs/architecture.md, "The code editor"):

- `code_editor(...)` places one, bound to a state: it shows `value` in `language`, sends the
  text to `on_change` after a pause in typing and when it loses focus, and fires `on_ready`
  once it exists;
- `ask_text(editor_id, callback)` asks it for its current text, sent at once to `callback`.
"""

from __future__ import annotations

import json
from typing import Any

import reflex as rx
from reflex.event import no_args_event_spec

LANGUAGES = ("casbin", "html", "css", "json")


class CodeEditor(rx.NoSSRComponent):
    library = rx.asset("code_editor.jsx", shared=True).importable_path
    tag = "CodeEditor"
    # exact versions; lang-html brings lang-css, lang-javascript and autocomplete at the versions bun resolves
    lib_dependencies: list[str] = [
        "@codemirror/state@6.7.6",
        "@codemirror/view@6.43.15",
        "@codemirror/commands@6.11.1",
        "@codemirror/language@6.13.1",
        "@codemirror/lang-html@6.4.12",
        "@codemirror/lang-css@6.3.1",
        "@codemirror/lang-json@6.0.2",
        "@lezer/highlight@1.2.5",
    ]

    value: rx.Var[str]
    language: rx.Var[str]
    read_only: rx.Var[bool]
    label: rx.Var[str]  # the editor's accessible name
    width: rx.Var[str]
    height: rx.Var[str]
    on_ready: rx.EventHandler[no_args_event_spec]
    on_change: rx.EventHandler[lambda text: [text]]


def code_editor(value: rx.Var[str] | str, on_change: Any = None, *, language: rx.Var[str] | str,
                label: rx.Var[str] | str, id: str, height: str = "300px", width: str = "100%",
                read_only: rx.Var[bool] | bool = False, on_ready: Any = None) -> rx.Component:
    """An editor of `language` (one of LANGUAGES), `width` by `height` (never wider than its
    container), named `label` for assistive technology; `id` is what ask_text names it by.
    A read-only editor can be focused, selected and copied from, and refuses typing."""
    if isinstance(language, str) and language not in LANGUAGES:
        raise ValueError(f"code_editor: unknown language {language!r}; one of {LANGUAGES}")
    triggers = {k: v for k, v in (("on_change", on_change), ("on_ready", on_ready)) if v is not None}
    return CodeEditor.create(value=value, language=language, label=label, id=id, height=height, width=width,
                             read_only=read_only, **triggers)


def ask_text(editor_id: str, callback: Any) -> rx.event.EventSpec:
    """An event asking the editor `editor_id` for its text: `callback` gets it (None when no such
    editor is on the page). Pending typing goes to the editor's on_change first."""
    return rx.call_script(f"window.iamCodeEditorText?.({json.dumps(editor_id)}) ?? null", callback=callback)
