"""A page's call of an assets/iam.js function waits for the script to have defined it."""

from __future__ import annotations

from iam_console.core import page_script


def test_the_call_waits_for_its_function_then_passes_json_arguments():
    script = page_script.call("iamLogin", "built-in", {"a": "</script>"}, raw="true")
    assert script.startswith("(async () => { for (let i = 0; i < 200 && !window.iamLogin; i++) ")
    assert script.endswith('return await window.iamLogin("built-in", {"a": "</script>"}, true); })()')
