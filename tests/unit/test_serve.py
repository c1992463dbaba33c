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
