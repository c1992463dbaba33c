"""What a matcher may compute (authorization/casbin_matchers.py): the forms that can take seconds or
gigabytes are refused when the model is saved, request-dependent sizes are bounded when it is
evaluated, and a call's time budget stops the evaluation between policies."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from casbin.model import Model

from iam_console.authorization import casbin_matchers
from iam_console.authorization.casbin_engine import Engine, parse_model, request_value
from iam_console.core.errors import ServiceError
from tests.conftest import casbin_model

MODEL = casbin_model("{matcher}")
ABAC_EVAL = casbin_model("eval(p.sub_rule) && r.obj == p.obj && r.act == p.act", "sub_rule, obj, act")


@pytest.mark.parametrize(("matcher", "reason"), [
    ("r.sub == p.sub && 4000000 ** 4000000 > 0", "would be too large: a number of more than 4096 bits"),
    ("r.sub == p.sub && 1 << 100000 > 0", "would be too large"),
    ("r.sub == p.sub && 'ab' * 10000000 == r.obj", "would be too large: more than 100000 items"),
    ("r.sub == p.sub && [[1] * 1000] * 100 == r.obj", "a repeated list of containers"),
    ("r.sub.ljust(1000000000) == p.sub", "the method ljust is not allowed"),
    ("r.sub.replace('', r.obj) == p.sub", "the method replace is not allowed"),
    ("f'{r.sub:>999999999}' == p.sub", "f-strings are not allowed"),
    ("[x for x in r.sub] == p.sub", "comprehensions are not allowed"),
    ("r.sub == (lambda: 1)", "Lambda is not allowed"),
    ("(lambda: 1)() == 1", "only the model's functions and a few text methods may be called"),
    ("[r.sub.upper][0]() == p.sub", "only the model's functions and a few text methods may be called"),
    ("dict(a=1) == r.sub", "keyword arguments are not allowed"),
    ("r.sub.__class__ == p.sub", "the attribute __class__ is not allowed"),
    ("r.sub == " + "0x" + "f" * 1100, "a number has more than 4096 bits"),
    (" and ".join(["r.sub == p.sub"] * 300), "more than 1000 parts"),
])
def test_a_costly_matcher_is_refused_on_save(matcher, reason):
    with pytest.raises(ServiceError, match="The model is not valid: ") as refused:
        parse_model(MODEL.format(matcher=matcher))
    assert reason in str(refused.value)


def test_casbins_own_forms_stay():
    matcher = ("r.sub == p.sub && (keyMatch2(r.obj, p.obj) || r.obj in ('a', 'b')) && r.act.lower() == p.act "
               "&& len(r.sub) * 2 ** 3 < 1000 && (r.sub.startswith('al') if r.act != 'x' else True)")
    engine = Engine(parse_model(MODEL.format(matcher=matcher).replace("len(r.sub)", "5")))
    engine.load_lines([["p", "alice", "/data/:id", "read"]])
    assert engine.enforce("alice", "/data/7", "READ") and engine.enforce("alice", "a", "read")
    assert not engine.enforce("alice", "/other/7", "read")


def test_sizes_a_request_brings_are_bounded_when_evaluated():
    engine = Engine(parse_model(MODEL.format(matcher="r.sub ** r.obj > 0 && r.act * 3 == p.act")))
    engine.load_lines([["p", "x", "y", "aaa"]])
    assert engine.enforce(2, 10, "a")
    with pytest.raises(ServiceError, match="would be too large: a number of more than 4096 bits"):
        engine.enforce(2, 10_000, "a")
    with pytest.raises(ServiceError, match="would be too large: more than 100000 items"):
        engine.enforce(2, 1, "a" * 50_000)
    formatting = Engine(parse_model(MODEL.format(matcher="r.sub % r.obj == p.sub")))
    formatting.load_lines([["p", "x", "y", "z"]])
    assert not formatting.enforce(7, 2, "")
    for request in (("%0999999999d", 1, ""), ("%s", "x", "")):
        with pytest.raises(ServiceError, match="formatting a text with % is not allowed"):
            formatting.enforce(*request)


def test_the_standard_eval_abac_model_is_taken():
    """Casbin's eval() ABAC model: pycasbin evaluates eval() only against a policy, so the check on
    save evaluates it against one (it refused the model: 'please make sure rule exists in policy')."""
    engine = Engine(parse_model(ABAC_EVAL))
    engine.load_lines([["p", "r.sub.Age > 18", "/data1", "read"], ["p", "r.sub.Age < 60", "/data2", "write"]])
    assert engine.enforce(request_value('{"Age": 30}'), "/data1", "read")
    assert not engine.enforce(request_value('{"Age": 10}'), "/data1", "read")
    # a policy's rule is a matcher too
    engine.load_lines([["p", "r.sub.Name.ljust(10 ** 9) == ''", "/data1", "read"]])
    with pytest.raises(ServiceError, match="the method ljust is not allowed"):
        engine.enforce(request_value('{"Name": "x"}'), "/data1", "read")
    with pytest.raises(ServiceError, match="The model is not valid"):
        parse_model(ABAC_EVAL.replace("eval(p.sub_rule)", "eval(p.sub_rule) && unknownFunction(r.sub)"))


def test_the_budget_stops_the_evaluation_between_policies():
    calls = []

    def slow(value):
        calls.append(value)
        if len(calls) == 5:
            time.sleep(0.05)  # past the budget below, however fast the machine
        return False

    model = Model()
    model.load_model_from_text(MODEL.format(matcher="slow(p.sub) || r.sub == p.sub"))
    engine = Engine(model)
    engine.add_function("slow", slow)
    engine.load_lines([["p", f"user{i}", "data", "read"] for i in range(1000)])
    with casbin_matchers.time_budget(0.01), pytest.raises(casbin_matchers.TooLong,
                                                          match="The enforcement took too long"):
        engine.enforce("nobody", "data", "read")
    assert 1 <= len(calls) <= 6  # the loop stopped, instead of evaluating 1,000 policies
    calls.clear()
    assert engine.enforce("user999", "data", "read") and len(calls) == 1000  # no budget: every policy


def test_an_inner_budget_never_extends_an_outer_one():
    with casbin_matchers.time_budget(-1), casbin_matchers.time_budget(60), pytest.raises(casbin_matchers.TooLong):
        casbin_matchers.check_deadline()
    casbin_matchers.check_deadline()  # none left once both ended


def test_the_budget_counts_computing_not_the_pauses_of_courtesy(monkeypatch):
    """While other requests are served, a long evaluation pauses (workers.courtesy): those pauses,
    as long as sixteen times its computing for an organization over its share, are not spent from
    its budget; its computing is."""
    now = [1000.0]

    def step(computed: float, paused: float):
        def courtesy() -> float:
            now[0] += computed + paused
            return paused
        return courtesy

    monkeypatch.setattr(casbin_matchers, "time", SimpleNamespace(monotonic=lambda: now[0]))
    monkeypatch.setattr(casbin_matchers, "courtesy", step(0.01, 1.0))
    with casbin_matchers.time_budget(0.5):
        for _ in range(20):  # 20 s of pauses, 0.2 s of computing
            casbin_matchers.check_deadline()
        monkeypatch.setattr(casbin_matchers, "courtesy", step(0.4, 0.0))
        with pytest.raises(casbin_matchers.TooLong):
            for _ in range(2):  # 0.8 s more of computing: past the budget
                casbin_matchers.check_deadline()
