"""The engine's index never changes an answer: on random policies and requests, for the
standard models (and matchers whose top-level `||` or `!` must turn the index off), the
Engine answers as a plain casbin.Enforcer over the same lines, after in-place changes too."""

from __future__ import annotations

import random

import casbin
import pytest
from casbin.model import Model

from iam_console.services.casbin_engine import Engine, _top_level_conjuncts, parse_model
from tests.api.test_enforce import MODELS

NAMES = ["alice", "bob", "carol", "admin", "data1", "data2", "data_group", "read", "write", "domain1", "domain2",
         "allow", "deny", "data2_admin", "data1_deny_group", "/alice_data/x", "GET"]
OR_MATCHER = """[request_definition]
r = sub, obj, act
[policy_definition]
p = sub, obj, act
[policy_effect]
e = some(where (p.eft == allow))
[matchers]
m = r.sub == p.sub && r.obj == p.obj || r.act == p.act && r.sub == "root"
"""


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
    # in place: a few removals and additions, as a counter step applies them
    for line in rng.sample(lines, 5):
        ptype, *values = line
        (engine.remove_named_grouping_policy if ptype.startswith("g") else engine.remove_named_policy)(ptype, *values)
        (plain.remove_named_grouping_policy if ptype.startswith("g") else plain.remove_named_policy)(ptype, *values)
    for ptype, *values in _random_lines(rng, engine, 5):
        for e in (engine, plain):
            if not (e.has_named_grouping_policy if ptype.startswith("g") else e.has_named_policy)(ptype, *values):
                (e.add_named_grouping_policy if ptype.startswith("g") else e.add_named_policy)(ptype, *values)
    engine.reindex()
    assert [engine.enforce(*r) for r in requests] == [plain.enforce(*r) for r in requests]


def test_conjuncts_are_split_only_where_safe():
    assert _top_level_conjuncts("g(r_sub, p_sub) && r_obj == p_obj") == ["g(r_sub, p_sub)", "r_obj == p_obj"]
    assert _top_level_conjuncts("(a || b) && r_obj == p_obj") == ["(a || b)", "r_obj == p_obj"]
    assert _top_level_conjuncts("a && b || c") is None
    assert _top_level_conjuncts("!a && r_obj == p_obj") is None
    assert _top_level_conjuncts('r_sub == "a && b" && r_obj == p_obj') == ['r_sub == "a && b"', "r_obj == p_obj"]
    assert _top_level_conjuncts("r_act != p_act && r_obj == p_obj") == ["r_act != p_act", "r_obj == p_obj"]
