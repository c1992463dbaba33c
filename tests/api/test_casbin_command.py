"""run-casbin-command, answered in process (authorization/casbin_cli.py): the model editor's enforce
and enforceEx over a model and policy text, with its identifier; and the enforcer page's policy
pages (enforcement.policy_page): columns from the model's policy definition, 100 a page."""

from __future__ import annotations

import hashlib
import json
from datetime import datetime, timedelta, timezone

from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.authorization import enforcement
from iam_console.core.access import Actor
from iam_console.db import session_scope
from tests.api.conftest import ok_body, sign_in
from tests.api.test_enforce import RBAC, make_enforcer
from tests.conftest import unique

POLICY = "p, alice, data1, read\np, bob, data2, write\np, data2_admin, data2, read\ng, alice, data2_admin"


def _params(args: list[str], language: str = "go", moment: datetime | None = None, digest: str = "") -> dict:
    text = json.dumps(args)
    stamp = (moment or datetime.now(timezone.utc)).strftime("%Y-%m-%dT%H:%M:%SZ")
    raw = f"casbin-editor-v1|{stamp}|args={text}&language={language}"
    return {"language": language, "args": text, "t": stamp,
            "m": digest or hashlib.sha256(raw.encode()).hexdigest()}


def _run(client, args: list[str], **options) -> dict:
    return client.get("/api/run-casbin-command", params=_params(args, **options)).json()


def test_enforce_and_enforce_ex_over_texts(admin):
    allowed = ok_body(admin.get("/api/run-casbin-command",
                                params=_params(["enforce", "-m", RBAC, "-p", POLICY, "alice", "data2", "read"])))
    assert json.loads(allowed["data"]) == {"allow": True, "explain": None}
    denied = _run(admin, ["enforce", "-m", RBAC, "-p", POLICY, "bob", "data1", "read"])
    assert json.loads(denied["data"]) == {"allow": False, "explain": None}
    explained = _run(admin, ["enforceEx", "--model", RBAC, "--policy", POLICY, "alice", "data2", "read"])
    assert json.loads(explained["data"]) == {"allow": True, "explain": ["data2_admin", "data2", "read"]}
    version = _run(admin, ["--version"], language="java")
    assert version["status"] == "ok" and version["data"].startswith("casbin-java-cli")


def test_bad_calls_are_refused(admin, make_org, make_user):
    args = ["enforce", "-m", RBAC, "-p", POLICY, "alice", "data1", "read"]
    forged = admin.get("/api/run-casbin-command", params=_params(args, digest="0" * 64)).json()
    assert forged == {**forged, "status": "error", "msg": "invalid identifier"}
    stale = _run(admin, args, moment=datetime.now(timezone.utc) - timedelta(minutes=6))
    assert stale["msg"] == "invalid identifier"
    missing = admin.get("/api/run-casbin-command", params={"args": json.dumps(args)}).json()
    assert missing["msg"] == "invalid identifier"
    assert _run(admin, ["addPolicy", "-m", RBAC, "-p", POLICY, "x", "y", "z"])["msg"] == \
        "The Casbin command addPolicy is not supported"
    # a value of -m is the model's text, never a path to read
    as_path = _run(admin, ["enforce", "-m", "/etc/passwd", "-p", "", "a", "b", "c"])
    assert as_path["status"] == "error" and as_path["msg"].startswith("The model is not valid")
    assert _run(admin, ["enforce", "-m", RBAC, "-p", POLICY, "alice"])["msg"].startswith("Invalid request size")
    not_a_list = admin.get("/api/run-casbin-command", params={**_params([]), "args": "{}"}).json()
    assert not_a_list["status"] == "error"
    # neither may anyone signed out, nor a normal user
    anonymous = _run(TestClient(api), args)
    assert anonymous == {**anonymous, "status": "error", "msg": "Please login first"}
    org = make_org()
    user = make_user(owner=org.name, password="Casbin-pass-1")
    refused = _run(sign_in(org.name, user.name, "Casbin-pass-1"), args)
    assert refused == {**refused, "status": "error", "msg": "Unauthorized operation"}


def admin_actor() -> Actor:
    with session_scope() as db:
        return Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())


def test_policy_pages_follow_the_model(admin):
    lines = [["p", f"user{i:03d}", "data", "read"] for i in range(150)] + [["g", "alice", "admin"]]
    eid = make_enforcer(admin, RBAC, lines)
    actor = admin_actor()
    with session_scope() as db:
        first = enforcement.policy_page(db, actor, eid, 1, 100)
        second = enforcement.policy_page(db, actor, eid, 2, 100)
        past = enforcement.policy_page(db, actor, eid, 9, 100)
    assert (first.total, len(first.rows), first.page) == (151, 100, 1)
    assert first.heads == ["sub", "obj", "act"] and first.ptypes == ["p", "g"]
    assert first.rows[0] == {"Id": 1, "Ptype": "p", "V0": "user000", "V1": "data", "V2": "read", "V3": "",
                             "V4": "", "V5": ""}
    assert (len(second.rows), second.rows[-1]["Ptype"], second.rows[-1]["V1"]) == (51, "g", "admin")
    assert past.page == 2  # past the end: the last page


def test_policy_writes_leave_records(admin):
    eid = make_enforcer(admin, RBAC, [])
    rule = {"Ptype": "p", "V0": unique("who"), "V1": "data", "V2": "read"}
    actor = admin_actor()
    with session_scope() as db:
        assert enforcement.write_policy(db, actor, "add-policy", eid, rule) is True
    with session_scope() as db:
        assert enforcement.write_policy(db, actor, "remove-policy", eid, rule) is True
        assert enforcement.write_policy(db, actor, "remove-policy", eid, rule) is False  # no longer there
    with session_scope() as db:
        found = db.exec(select(m.Record).where(m.Record.request_uri == f"/api/add-policy?id={eid}")).all()
        assert len(found) == 1 and found[0].action == "add-policy" and found[0].user == "built-in/admin"


def test_the_editors_enforce_runs_on_re2_within_the_budget(admin, monkeypatch):
    from iam_console.authorization import casbin_engine
    from tests.api.test_enforce import REGEX_MODEL

    policy = "p, alice, ^(a+)+$, read\np, bob, (a)\\1, read"
    fast = _run(admin, ["enforce", "-m", REGEX_MODEL, "-p", policy, "alice", "a" * 26 + "!", "read"])
    assert fast["status"] == "ok" and json.loads(fast["data"]) == {"allow": False, "explain": None}
    refused = _run(admin, ["enforce", "-m", REGEX_MODEL, "-p", policy, "bob", "aa", "read"])
    assert refused == {**refused, "status": "error",
                       "msg": "The pattern (a)\\1 cannot be used: invalid escape sequence: \\1"}
    monkeypatch.setattr(casbin_engine, "ENFORCE_BUDGET", -1.0)
    late = _run(admin, ["enforceEx", "-m", REGEX_MODEL, "-p", policy, "alice", "aaa", "read"])
    assert late == {**late, "status": "error", "msg": "The enforcement took too long"}
