"""The code editor's Python side, without a browser: the languages it accepts, what it renders, how
ask_text names the editor, and npm packages of the console's React components pinned and locked
(the browser behaviour is tests/e2e/test_code_editor.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import reflex as rx

from iam_console.ui.components.avatar import AvatarCropper
from iam_console.ui.components.code_editor import LANGUAGES, CodeEditor, ask_text, code_editor

LOCKED = json.loads((Path(__file__).resolve().parents[2] / "reflex.lock" / "package.json").read_text())


class Texts(rx.State):
    text: str = ""

    @rx.event
    def set_text(self, text: str):
        self.text = text

    @rx.event
    def got(self, text: str | None):
        self.text = text or ""


def test_languages_and_what_the_editor_renders():
    assert LANGUAGES == ("casbin", "html", "css", "json")
    rendered = str(code_editor(Texts.text, Texts.set_text, language="casbin", label="Model text", id="field-model",
                               height="500px", read_only=True))
    for prop in ('language:"casbin"', 'label:"Model text"', 'id:"field-model"', 'height:"500px"', 'width:"100%"',
                 "readOnly:true", "onChange:"):
        assert prop in rendered, prop
    assert "onReady:" not in rendered  # no trigger unless one is bound
    with pytest.raises(ValueError, match="unknown language 'yaml'"):
        code_editor("", language="yaml", label="x", id="x")


def test_ask_text_names_the_editor_as_a_string_literal():
    hostile = 'editor"); alert(1); ("'
    spec = ask_text(hostile, Texts.got)
    script = spec.args[0][1]._var_value
    named = re.fullmatch(r"window\.iamCodeEditorText\?\.\((.*)\) \?\? null", script)
    assert named and json.loads(named.group(1)) == hostile  # one string argument, whatever the id holds
    assert "got" in spec.args[1][1]._var_value  # the answer goes to the callback


@pytest.mark.parametrize("component", [CodeEditor, AvatarCropper])
def test_npm_packages_are_pinned_and_in_the_lock(component):
    for dependency in component.lib_dependencies:
        name, version = dependency.rsplit("@", 1)
        assert re.fullmatch(r"\d+\.\d+\.\d+", version), dependency
        assert LOCKED["dependencies"].get(name) == version, f"{dependency} is not in reflex.lock/package.json"
