"""The regular expressions an admin writes run on RE2 (core/patterns.py). Redirect URI
patterns: a pattern that sends a backtracking engine into exponential time (`http://(a+)+b`
against a long run of a's) is answered at once, through the anonymous get-app-login and the
authorize page's sign-in, and a pattern RE2 cannot take is refused when the application is
saved. Account items' regexes: the same, on every user's update."""

from __future__ import annotations

import pytest
import re2
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import patterns
from iam_console.db import session_scope
from tests.api.conftest import sign_in
from tests.api.test_oauth import authorize, make_app, world  # noqa: F401
from tests.conftest import unique

PATHOLOGICAL = "http://(a+)+b"
# 1000 characters: the longest URI accepted. A backtracking engine tries 2^992 ways to split
# the a's before it gives up on the last character.
NOT_MATCHING = "http://" + "a" * 992 + "c"
MATCHING = "http://" + "a" * 992 + "b"


@pytest.fixture
def compiled(monkeypatch) -> list[str]:
    """The patterns RE2 compiles during the test."""
    seen: list[str] = []
    real = re2.compile

    def recording(pattern, options=None):
        seen.append(pattern)
        return real(pattern, options)

    monkeypatch.setattr(re2, "compile", recording)
    patterns.compiled.cache_clear()
    yield seen
    patterns.compiled.cache_clear()


@pytest.fixture
def app_(world):  # noqa: F811
    return make_app(world[0].name, redirect_uris=[PATHOLOGICAL])


def app_login(app: m.Application, redirect_uri: str) -> dict:
    """Anonymous: what Casdoor's sign-in page asks before it shows."""
    return TestClient(api).get("/api/get-app-login", params={
        "client_id": app.client_id, "response_type": "code", "redirect_uri": redirect_uri, "scope": "openid",
        "state": "st"}).json()


def test_the_pathological_pattern_is_matched_by_re2_through_get_app_login(app_, compiled):
    assert app_login(app_, "http://aab")["data"]["name"] == app_.name
    assert PATHOLOGICAL in compiled  # the entry was compiled by RE2, not by Python's re
    refused = app_login(app_, NOT_MATCHING)
    assert refused["status"] == "error" and "doesn't exist in the allowed Redirect URI list" in refused["msg"]
    assert app_login(app_, MATCHING)["data"]["name"] == app_.name
    too_long = app_login(app_, MATCHING[:-1] + "ab")
    assert too_long["status"] == "error", "a URI over 1000 characters is refused before any matching"


def test_the_pathological_pattern_through_the_authorize_sign_in(world, app_, compiled):  # noqa: F811
    org = world[0].name
    assert authorize(app_, org, redirect_uri="http://ab")["status"] == "ok"
    assert PATHOLOGICAL in compiled
    refused = authorize(app_, org, redirect_uri=NOT_MATCHING)
    assert refused["status"] == "error" and refused["data"] is None, refused
    answer = authorize(app_, org, redirect_uri=MATCHING)
    assert answer["status"] == "ok" and answer["data2"].startswith(MATCHING + "?code="), answer
    with session_scope() as db:
        sent_to = db.exec(select(m.Token.redirect_uri).where(m.Token.application == app_.name)).all()
    assert sorted(sent_to) == sorted(["http://ab", MATCHING])


@pytest.mark.parametrize(("entry", "reason"), [
    (r"^https://app\.example\.com/(?=cb)", "invalid perl operator"),  # lookahead
    (r"^https://(app)\.example\.com/\1$", "invalid escape sequence"),  # backreference
    (r"^https://app\.example\.com/a{1001}$", "invalid repetition size"),
    ("^https://app.example.com/" + "(?:.{1000})" * 60 + "$", "pattern too large"),
])
def test_a_pattern_re2_cannot_take_is_refused_at_save(admin, entry, reason):
    name = unique("application")
    good = [r"^https://app\.example\.com/cb/[a-z]+$", "http://localhost:9000/callback"]
    answer = admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": "built-in",
                                                       "redirectUris": [*good, entry]}).json()
    assert answer["status"] == "error", answer
    assert "is not a regular expression RE2 can match" in answer["msg"] and reason in answer["msg"], answer
    assert admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"] is None

    assert admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": "built-in",
                                                     "redirectUris": good}).json()["data"] == "Affected"
    saved = admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]
    changed = admin.post("/api/update-application", params={"id": f"admin/{name}"},
                         json={**saved, "redirectUris": [*good, entry]}).json()
    assert changed["status"] == "error" and reason in changed["msg"], changed
    assert admin.get("/api/get-application", params={"id": f"admin/{name}"}).json()["data"]["redirectUris"] == good


def test_an_over_long_entry_is_refused_at_save(admin):
    name = unique("application")
    answer = admin.post("/api/add-application", json={"owner": "admin", "name": name, "organization": "built-in",
                                                       "redirectUris": ["https://app.example.com/" + "x" * 980]}).json()
    assert answer["status"] == "error" and "is longer than 1,000 characters" in answer["msg"], answer


def test_an_account_items_regex_runs_on_re2(admin, make_org, make_user, compiled):
    org = make_org(account_items=[{"name": "Display name", "visible": True, "viewRule": "Public",
                                   "modifyRule": "Self", "regex": "(a+)+b"}]).name
    make_user(owner=org, name="alice", password="Patterns-pass-1")
    alice = sign_in(org, "alice", "Patterns-pass-1")
    me = alice.get("/api/get-account").json()["data"]
    refused = alice.post("/api/update-user", params={"id": f"{org}/alice"},
                         json={**me, "displayName": "a" * 60 + "c"}).json()  # 2^60 ways for a backtracker
    assert refused["status"] == "error" and refused["msg"] == "This field value doesn't match the pattern rule"
    assert "(a+)+b" in compiled
    assert alice.post("/api/update-user", params={"id": f"{org}/alice"},
                      json={**me, "displayName": "a" * 60 + "b"}).json()["data"] == "Affected"
    # a regex RE2 cannot take is refused when the organization is saved
    organization = admin.get("/api/get-organization", params={"id": f"admin/{org}"}).json()["data"]
    items = [{**organization["accountItems"][0], "regex": r"(a)\1"}] if organization["accountItems"] else []
    answer = admin.post("/api/update-organization", params={"id": f"admin/{org}"},
                        json={**organization, "accountItems": items}).json()
    assert answer["status"] == "error" and "is not valid" in answer["msg"], answer
