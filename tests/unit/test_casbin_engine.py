"""The engine's index never changes an answer: on random policies and requests, for the
standard models (and matchers whose top-level `||` or `!` must turn the index off), the
Engine answers as a plain casbin.Enforcer over the same lines, after in-place changes too."""

from __future__ import annotations

import random

import casbin
import pytest
from casbin.model import Model

from iam_console.authorization.casbin_engine import Engine, _top_level_conjuncts, parse_model
from tests.api.test_enforce import MODELS
from tests.conftest import casbin_model

NAMES = ["alice", "bob", "carol", "admin", "data1", "data2", "data_group", "read", "write", "domain1", "domain2",
         "allow", "deny", "data2_admin", "data1_deny_group", "/alice_data/x", "GET"]
OR_MATCHER = casbin_model('r.sub == p.sub && r.obj == p.obj || r.act == p.act && r.sub == "root"')


def _plain(text: str, lines: list[list[str]]) -> casbin.Enforcer:
    model = Model()
    model.load_model_from_text(text)
    plain = casbin.Enforcer(model)
    for ptype, *values in lines:
        (plain.add_named_grouping_policy if ptype.startswith("g") else plain.add_named_policy)(ptype, *values)
    return plain


def _random_lines(rng: random.Random, engine: Engine, count: int) -> list[list[str]]:
    lines = []
    for _ in range(count):
        ptype = rng.choice([t for t in ("p", "g", "g2") if engine.fitted(t, []) is not None])
        size = len(engine.fitted(ptype, []))
        line = [ptype, *[rng.choice(NAMES) for _ in range(size)]]
        if ptype == "p" and "eft" in " ".join(engine.model["p"]["p"].tokens):
            line[-1] = rng.choice(["allow", "deny"])
        if line not in lines:
            lines.append(line)
    return lines


@pytest.mark.parametrize("name", sorted({*MODELS} - {"abac"} | {"or"}))
def test_the_index_answers_as_pycasbin(name):
    text = OR_MATCHER if name == "or" else MODELS[name][0]
    rng = random.Random(name)
    engine = Engine(parse_model(text))
    lines = _random_lines(rng, engine, 60)
    engine.load_lines(lines)
    plain = _plain(text, lines)
    size = len(engine.model["r"]["r"].tokens)
    requests = [[rng.choice(NAMES) for _ in range(size)] for _ in range(400)]
    assert [engine.enforce(*r) for r in requests] == [plain.enforce(*r) for r in requests]
    # in place: a few removals and additions, as a counter step applies them (the engine keeps its
    # index and counts up to date itself)
    for line in rng.sample(lines, 5):
        ptype, *values = line
        (engine.remove_named_grouping_policy if ptype.startswith("g") else engine.remove_named_policy)(ptype, *values)
        (plain.remove_named_grouping_policy if ptype.startswith("g") else plain.remove_named_policy)(ptype, *values)
    for ptype, *values in _random_lines(rng, engine, 5):
        for e in (engine, plain):
            if not (e.has_named_grouping_policy if ptype.startswith("g") else e.has_named_policy)(ptype, *values):
                (e.add_named_grouping_policy if ptype.startswith("g") else e.add_named_policy)(ptype, *values)
    assert [engine.enforce(*r) for r in requests] == [plain.enforce(*r) for r in requests]
    # several removals in one pass, then additions enforced one by one
    gone = rng.sample([line for line in lines if engine.has_named_policy(line[0], *line[1:])
                       or engine.has_named_grouping_policy(line[0], *line[1:])], 8)
    for ptype in sorted({line[0] for line in gone}):
        engine.remove_rules(ptype, [line[1:] for line in gone if line[0] == ptype])
    for ptype, *values in gone:
        (plain.remove_named_grouping_policy if ptype.startswith("g") else plain.remove_named_policy)(ptype, *values)
    assert [engine.enforce(*r) for r in requests] == [plain.enforce(*r) for r in requests]
    for ptype, *values in _random_lines(rng, engine, 10):
        for e in (engine, plain):
            if not (e.has_named_grouping_policy if ptype.startswith("g") else e.has_named_policy)(ptype, *values):
                (e.add_named_grouping_policy if ptype.startswith("g") else e.add_named_policy)(ptype, *values)
        assert [engine.enforce(*r) for r in requests[:40]] == [plain.enforce(*r) for r in requests[:40]]


def test_added_rules_join_the_index_without_a_rebuild(monkeypatch):
    engine = Engine(parse_model(MODELS["rbac"][0]))
    engine.load_lines([["p", f"role{i}", f"data{i}", "read"] for i in range(1000)])
    rebuilt = []
    monkeypatch.setattr(engine, "reindex", lambda: rebuilt.append(1))
    for i in range(200):
        assert engine.add_named_policy("p", "alice", f"new{i}", "read")
        assert not engine.add_named_policy("p", "alice", f"new{i}", "read")  # held: counted, not scanned
        assert engine.enforce("alice", f"new{i}", "read") and not engine.enforce("alice", f"new{i + 1}", "read")
    assert rebuilt == []
    # a removal shifts the positions: the index is built again once, at the next call
    assert engine.remove_named_policy("p", "alice", "new0", "read")
    monkeypatch.undo()
    assert not engine.enforce("alice", "new0", "read") and engine.enforce("alice", "new1", "read")
    assert engine.has_named_policy("p", "alice", "new1", "read") and not engine.has_named_policy(
        "p", "alice", "new0", "read")


def test_duplicate_lines_are_removed_one_at_a_time_as_pycasbin_does():
    text, line = MODELS["acl"][0], ["p", "alice", "data1", "read"]
    engine = Engine(parse_model(text))
    engine.load_lines([line, line, ["p", "bob", "data2", "write"]])
    assert engine.remove_named_policy("p", *line[1:]) is False  # an equal one remains (pycasbin's answer)
    assert engine.enforce("alice", "data1", "read")
    engine.remove_rules("p", [line[1:]])
    assert not engine.enforce("alice", "data1", "read") and engine.enforce("bob", "data2", "write")


def test_conjuncts_are_split_only_where_safe():
    assert _top_level_conjuncts("g(r_sub, p_sub) && r_obj == p_obj") == ["g(r_sub, p_sub)", "r_obj == p_obj"]
    assert _top_level_conjuncts("(a || b) && r_obj == p_obj") == ["(a || b)", "r_obj == p_obj"]
    assert _top_level_conjuncts("a && b || c") is None
    assert _top_level_conjuncts("!a && r_obj == p_obj") is None
    assert _top_level_conjuncts('r_sub == "a && b" && r_obj == p_obj') == ['r_sub == "a && b"', "r_obj == p_obj"]
    assert _top_level_conjuncts("r_act != p_act && r_obj == p_obj") == ["r_act != p_act", "r_obj == p_obj"]
