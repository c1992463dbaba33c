"""The production command's checks (iam_console/serve.py): how many workers, and whether the built
front end is there and was built for this origin. Each refusal says what to do and starts nothing."""

from __future__ import annotations

import json

import pytest

from iam_console import serve, settings


def _built(web, event: str) -> None:
    (web / "build" / "client").mkdir(parents=True)
    (web / "build" / "client" / "index.html").write_text("<html></html>")
    (web / "env.json").write_text(json.dumps({"EVENT": event, "PING": "unused"}))


def test_one_worker_unless_told_and_more_only_with_redis():
    assert serve.workers({}) == 1
    assert serve.workers({"IAM_WORKERS": " "}) == 1
    assert serve.workers({"IAM_WORKERS": "3", "REDIS_URL": "redis://127.0.0.1:6379"}) == 3
    with pytest.raises(serve.ServeError, match="needs REDIS_URL"):
        serve.workers({"IAM_WORKERS": "3"})
    with pytest.raises(serve.ServeError, match="at least 1"):
        serve.workers({"IAM_WORKERS": "0", "REDIS_URL": "redis://127.0.0.1:6379"})
    with pytest.raises(serve.ServeError, match="whole number"):
        serve.workers({"IAM_WORKERS": "two"})


def test_the_websocket_url_follows_the_origin_scheme():
    assert serve.event_url("http://localhost:3000") == "ws://localhost:3000/_event"
    assert serve.event_url("https://iam.example.com/") == "wss://iam.example.com/_event"


def test_a_missing_build_is_refused(tmp_path):
    with pytest.raises(serve.ServeError, match="make build"):
        serve.check_build("http://localhost:3000", tmp_path / ".web")


def test_a_build_for_another_origin_is_refused(tmp_path):
    web = tmp_path / ".web"
    _built(web, "ws://localhost:4000/_event")
    with pytest.raises(serve.ServeError, match="built for ws://localhost:4000/_event, not ws://localhost:3000/_event"):
        serve.check_build("http://localhost:3000", web)
    (web / "env.json").write_text("not json")
    with pytest.raises(serve.ServeError, match="an unknown origin"):
        serve.check_build("http://localhost:3000", web)


def test_a_build_for_this_origin_is_served(tmp_path):
    web = tmp_path / ".web"
    _built(web, "wss://iam.example.com/_event")
    serve.check_build("https://iam.example.com", web)


def test_the_origin_a_build_was_made_for(tmp_path):
    web = tmp_path / ".web"
    assert serve.built_origin(web) == ""
    _built(web, "wss://iam.example.com/_event")
    assert serve.built_origin(web) == "https://iam.example.com"
    serve.check_build(serve.built_origin(web), web)
    (web / "env.json").write_text(json.dumps({"EVENT": "ws://localhost:4000/_event"}))
    assert serve.built_origin(web) == "http://localhost:4000"
    (web / "env.json").write_text("not json")
    assert serve.built_origin(web) == ""


def test_bad_arguments_and_settings_start_nothing(monkeypatch, capsys):
    assert serve.main(["--bogus"]) == 2
    assert "unknown arguments" in capsys.readouterr().err
    monkeypatch.setenv("IAM_WORKERS", "4")
    monkeypatch.delenv("REDIS_URL", raising=False)
    assert serve.main([]) == 2
    assert "needs REDIS_URL" in capsys.readouterr().err


def test_the_scheduler_tick_is_a_minute_unless_set(monkeypatch):
    monkeypatch.delenv("IAM_SCHEDULER_TICK_SECONDS", raising=False)
    assert settings.load().scheduler_tick_seconds == 60
    monkeypatch.setenv("IAM_SCHEDULER_TICK_SECONDS", "2")
    assert settings.load().scheduler_tick_seconds == 2
    monkeypatch.setenv("IAM_SCHEDULER_TICK_SECONDS", "0")
    assert settings.load().scheduler_tick_seconds == 0.5  # never a busy loop


REFLEX_BUILD_OUTPUT = """\
──────────────── Compiling production app and preparing for export. ────────────────
Warning: Your version (20.20.2) of Node.js is out of date. Upgrade to 22.0.0 or higher.
Compiling: ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 100% 149/148 0:00:41
Creating Production Build: ━━━━━━━━━━━━━━━━━━━━━━━━ 100% 12/12 0:01:02
Run `uv run reflex run` to start the app.
Run 'uv run reflex run' to start the app.
"""


def test_the_build_shows_its_progress_without_what_misleads(tmp_path, monkeypatch):
    """The front end's build, through a stand-in for Reflex printing what Reflex prints: the
    progress stays (its counter never past its total), Reflex's own next step and its version
    warnings go, whole (not wrapped), and the build's exit status is Reflex's."""
    import io
    import stat

    fake = tmp_path / "reflex"
    # as Reflex's console does when piped: lines wrapped at $COLUMNS, else 80
    fake.write_text("#!/bin/sh\nfold -s -w \"${COLUMNS:-80}\" <<'OUT'\n" + REFLEX_BUILD_OUTPUT
                    + "OUT\necho 'an error' >&2\nexit 3\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setattr(serve.sys, "executable", str(tmp_path / "python"))
    out = io.StringIO()
    assert serve.build(out) == 3
    shown = out.getvalue().splitlines()
    assert shown == [
        "──────────────── Compiling production app and preparing for export. ────────────────",
        "Compiling: ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 100% 148/148 0:00:41",
        "Creating Production Build: ━━━━━━━━━━━━━━━━━━━━━━━━ 100% 12/12 0:01:02",
        "an error",  # what goes wrong is shown
    ]


def test_the_serving_step_prints_where_to_sign_in():
    assert serve.serving_line("http://localhost:3000/") == (
        "Serving the IAM console on http://localhost:3000: sign in at http://localhost:3000/login")


def test_a_generated_admin_password_is_printed_once(capsys, caplog):
    from iam_console.core.seed import announce_generated_password

    caplog.set_level("DEBUG")
    announce_generated_password("Secret-Generated-1")
    printed = capsys.readouterr()
    assert printed.out.count("Secret-Generated-1") == 1 and printed.err == ""
    assert printed.out == "IAM_ADMIN_PASSWORD generated: sign in as built-in/admin with password: Secret-Generated-1\n"
    assert all("Secret-Generated-1" not in record.getMessage() for record in caplog.records)
    announce_generated_password(None)  # a configured password, or an admin already there: nothing
    assert capsys.readouterr().out == ""
