"""pycasbin, as the server runs it (docs/architecture.md, "Authorization engine").

- `parse_model`: a model text checked as Casbin checks it, with Casbin's own error;
- `Engine`: a pycasbin Enforcer loaded in bulk from policy lines, which answers a request
  from the policies that can match it: every top-level `r.x == p.y` conjunct of the matcher
  indexes the policies by `p.y`, and a request is evaluated against the smallest such bucket,
  in the policies' order. A policy outside the bucket fails that conjunct and so cannot match;
  an empty bucket is evaluated as one such policy, so the effect of "nothing matched" is
  Casbin's own. The answers equal pycasbin's over all the policies (tests/api/test_enforce.py).
  Rules added and removed in place keep a count of each rule (pycasbin scans its list to find
  one) and the index (an added rule joins its buckets; a removal rebuilds it at the next call).
- Tenant input is bounded (docs/security.md, "Tenant patterns and matchers"): the functions that
  compile a pattern run on RE2 (authorization/casbin_functions.py), and every matcher is checked and
  evaluated with bounded operators under the call's time budget (authorization/casbin_matchers.py)."""

from __future__ import annotations

import json
import re
import threading
from collections import Counter
from types import SimpleNamespace
from typing import Any

import casbin
from casbin import util as casbin_util
from casbin.model import Model
from casbin.model.policy_op import PolicyOp
from simpleeval import FeatureNotAvailable, FunctionNotDefined, NameNotDefined, OperatorNotDefined

from iam_console.authorization import casbin_matchers
from iam_console.authorization.casbin_functions import FUNCTIONS, ROLE_MATCHING
from iam_console.core.errors import ServiceError

ENFORCE_BUDGET = 2.0  # seconds of evaluation one call may take (docs/security.md, "Tenant patterns and matchers")
CHECK_BUDGET = 1.0  # seconds the check of a model on save may evaluate its matcher
SECTIONS = {"r": "request_definition", "p": "policy_definition", "e": "policy_effect", "m": "matchers"}
_EQ = re.compile(r"^\(*\s*([rp]_\w+)\s*==\s*([rp]_\w+)\s*\)*$")


def parse_model(text: str) -> Model:
    """The model, or ServiceError with Casbin's own complaint (or the matcher's refusal)."""
    model = Model()
    try:
        model.load_model_from_text(text)
    except Exception as exc:  # Casbin's parser raises plain exceptions
        raise ServiceError("The model is not valid: %s", str(exc) or type(exc).__name__) from None
    missing = [name for key, name in SECTIONS.items() if key not in model.model]
    if missing:
        raise ServiceError("The model is not valid: %s", "missing required sections: " + ", ".join(missing))
    _try(model)
    return model


def _try(model: Model) -> None:
    """The matcher evaluated once on an empty request, so that a model pycasbin could never
    evaluate is refused when it is saved. With eval() the matcher is evaluated against one
    policy whose values are all `True` (pycasbin evaluates an eval() matcher only against a
    policy: without one it raises "please make sure rule exists in policy")."""
    matcher = model["m"]["m"].value
    try:
        plain = casbin_util.replace_eval(matcher, ["True"] * len(casbin_util.get_eval_value(matcher))) \
            if casbin_util.has_eval(matcher) else matcher
        casbin_matchers.checked(casbin_matchers.python_of(plain))
        with casbin_matchers.time_budget(CHECK_BUDGET):
            engine = Engine(model)
            if casbin_util.has_eval(matcher) and "p" in model["p"]:
                engine.load_lines([["p", *["True"] * len(model["p"]["p"].tokens)]])
            engine.enforce(*[""] * len(model["r"]["r"].tokens))
    except (casbin_matchers.MatcherRefused, casbin_matchers.TooLarge, casbin_matchers.TooLong, SyntaxError,
            RuntimeError, KeyError, NameError, FunctionNotDefined, NameNotDefined, OperatorNotDefined,
            FeatureNotAvailable) as exc:
        raise ServiceError("The model is not valid: %s", str(exc) or type(exc).__name__) from None
    except Exception:  # an ABAC matcher reads attributes an empty request lacks: not the model's fault
        return


def has_roles(model: Model) -> bool:
    return "g" in model.model


def request_value(value: Any) -> Any:
    """ABAC: a JSON object (or a string holding one) becomes an object with attributes."""
    if isinstance(value, str) and value.startswith("{"):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    if isinstance(value, dict):
        return SimpleNamespace(**{str(k): request_value(v) for k, v in value.items()})
    if isinstance(value, list):
        return [request_value(v) for v in value]
    return value


def _top_level_conjuncts(matcher: str) -> list[str] | None:
    """The matcher split on its top-level `&&` (or `and`); None when a top-level `||`, `or`, `!` or `not`
    makes the split unsafe."""
    depth, quote, parts, start, i = 0, "", [], 0, 0
    while i < len(matcher):
        c = matcher[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif depth == 0:
            joint = next((j for j in ("&&", " and ") if matcher.startswith(j, i)), "")
            if joint:
                parts.append(matcher[start:i])
                start = i = i + len(joint)
                continue
            if matcher.startswith(("||", " or ", "not "), i) or (c == "!" and not matcher.startswith("!=", i)):
                return None
        i += 1
    parts.append(matcher[start:])
    return [p.strip() for p in parts]


class Engine(casbin.Enforcer):
    """An Enforcer whose policies are loaded in bulk and indexed (see the module's docstring)."""

    def __init__(self, model: Model) -> None:
        super().__init__(model)
        self.logger.disabled = True
        self.enable_auto_save(False)
        for name, function in FUNCTIONS.items():
            self.fm.add_function(name, function)
        self._lock = threading.RLock()
        self._index: list[tuple[int, int, dict[str, list[int]]]] = []  # (request column, policy column, buckets)
        self._stale = False  # the index no longer matches the policies' positions
        self._counts: dict[str, Counter] = {}  # ptype -> how many times each rule is held
        self._expressions: dict[str, Any] = {}

    def _get_expression(self, expr, functions=None):
        """pycasbin parses the matcher on every call: parsed (and checked) once here. The g functions
        it binds read the role managers, which stay the same objects until the next load (which
        forgets these)."""
        found = self._expressions.get(expr)
        if found is None:
            if len(self._expressions) > 64:  # eval() matchers: one expression per policy
                self._expressions.clear()
            found = self._expressions[expr] = casbin_matchers.compiled(expr, functions)
        return found

    def add_named_matching_func(self, ptype, fn):
        return super().add_named_matching_func(ptype, ROLE_MATCHING.get(fn, fn))

    def add_named_domain_matching_func(self, ptype, fn):
        return super().add_named_domain_matching_func(ptype, ROLE_MATCHING.get(fn, fn))

    # --- loading ---

    def fitted(self, ptype: str, values: list[str]) -> list[str] | None:
        """A rule of ptype cut or padded to the model's size; None when the model has no place for it."""
        place = self._place(ptype)
        if not place:
            return None
        size = place[1]
        if len(values) > size and any(values[size:]):
            return None
        return (values + [""] * size)[:size]

    def load_lines(self, lines: list[list[str]]) -> None:
        """Replace every policy with these lines ([ptype, v0, ...]); lines the model has no place for are skipped."""
        with self._lock:
            self.model.clear_policy()
            self._counts = {}
            places: dict[str, Any] = {}
            for ptype, *values in lines:
                place = places.get(ptype)
                if place is None:
                    place = places[ptype] = self._place(ptype)
                if not place:
                    continue
                assertion, size = place
                if len(values) != size:
                    if len(values) > size and any(values[size:]):
                        continue
                    values = (values + [""] * size)[:size]
                assertion.policy_map[",".join(values)] = len(assertion.policy)
                assertion.policy.append(values)
            for sec in ("p", "g"):
                for ptype, assertion in (self.model.model.get(sec) or {}).items():
                    self._counts[ptype] = Counter(map(tuple, assertion.policy))
            self.model.sort_policies_by_subject_hierarchy()
            self.model.sort_policies_by_priority()
            self.init_rm_map()
            self._expressions.clear()
            self.build_role_links()
            self.reindex()

    def _place(self, ptype: str) -> tuple[Any, int] | tuple[()]:
        sec = ptype[:1]
        if sec not in ("p", "g") or sec not in self.model.model or ptype not in self.model[sec]:
            return ()
        assertion = self.model[sec][ptype]
        return assertion, len(assertion.tokens)

    def reindex(self) -> None:
        self._index, self._stale = [], False
        if "p" not in self.model.model or "p" not in self.model["p"]:
            return
        matcher = self.model["m"]["m"].value
        conjuncts = None if casbin_util.has_eval(matcher) else _top_level_conjuncts(matcher)
        r_tokens, p_tokens = self.model["r"]["r"].tokens, self.model["p"]["p"].tokens
        for conjunct in conjuncts or []:
            found = _EQ.match(conjunct)
            if not found:
                continue
            left, right = found.groups()
            r_name, p_name = (left, right) if left.startswith("r_") else (right, left)
            if not (r_name.startswith("r_") and p_name.startswith("p_")) or r_name not in r_tokens \
                    or p_name not in p_tokens:
                continue
            column, buckets = p_tokens.index(p_name), {}
            for position, rule in enumerate(self.model["p"]["p"].policy):
                bucket = buckets.get(rule[column])
                if bucket is None:
                    buckets[rule[column]] = [position]
                else:
                    bucket.append(position)
            self._index.append((r_tokens.index(r_name), column, buckets))

    # --- changing in place (pycasbin's add_named_policy and the like come through these) ---

    def _has(self, ptype: str, rule: list[str]) -> bool:
        counts = self._counts.get(ptype)
        return bool(counts and counts.get(tuple(rule)))

    def has_named_policy(self, ptype, *params):
        return self._has(ptype, list(params[0]) if len(params) == 1 and isinstance(params[0], list) else list(params))

    def has_named_grouping_policy(self, ptype, *params):
        return self.has_named_policy(ptype, *params)

    def _add_policy(self, sec, ptype, rule):
        with self._lock:
            if self._has(ptype, rule):
                return False
            assertion = self.model[sec][ptype]
            if sec == "p" and assertion.priority_index >= 0:
                self.model.add_policy(sec, ptype, rule)  # pycasbin moves it to its priority's place
                self._stale = True
            else:
                assertion.policy_map[",".join(rule)] = len(assertion.policy)
                assertion.policy.append(rule)
                if ptype == "p" and not self._stale:
                    position = len(assertion.policy) - 1
                    for _, column, buckets in self._index:
                        buckets.setdefault(rule[column], []).append(position)
            self._counts.setdefault(ptype, Counter())[tuple(rule)] += 1
            return True

    def _remove_policy(self, sec, ptype, rule):
        with self._lock:
            if not self._has(ptype, rule):
                return False
            self.model[sec][ptype].policy.remove(rule)
            counts, key = self._counts[ptype], tuple(rule)
            counts[key] -= 1
            if not counts[key]:
                del counts[key]
            self._stale = self._stale or sec == "p"
            return key not in counts  # as pycasbin: False while an equal rule remains

    def remove_rules(self, ptype: str, rules: list[list[str]]) -> None:
        """Rules of one ptype removed in one pass over the policies (pycasbin's remove_named_policy
        is one pass each), each as pycasbin removes it: its first occurrence."""
        with self._lock:
            counts = self._counts.get(ptype)
            if not counts or ptype[:1] not in self.model.model or ptype not in self.model[ptype[:1]]:
                return
            removing: Counter = Counter()
            for rule in rules:
                key = tuple(rule)
                if counts.get(key, 0) > removing[key]:
                    removing[key] += 1
            if not removing:
                return
            assertion, kept, gone = self.model[ptype[:1]][ptype], [], []
            for rule in assertion.policy:
                key = tuple(rule)
                if removing.get(key):
                    removing[key] -= 1
                    counts[key] -= 1
                    if not counts[key]:
                        del counts[key]
                        gone.append(rule)
                    continue
                kept.append(rule)
            assertion.policy = kept
            if ptype.startswith("g"):
                if ptype in self.rm_map and gone:  # as pycasbin: a link goes with the last equal rule
                    self.model.build_incremental_role_links(self.rm_map[ptype], PolicyOp.Policy_remove, "g", ptype,
                                                            gone)
            else:
                self._stale = True

    # --- enforcing ---

    def _candidates(self, rvals: tuple) -> list[list[str]] | None:
        if self._stale:
            self.reindex()
        best: list[int] | None = None
        for r_column, _, buckets in self._index:
            if r_column >= len(rvals) or not isinstance(rvals[r_column], str):
                continue
            bucket = buckets.get(rvals[r_column], [])
            if best is None or len(bucket) < len(best):
                best = bucket
        if best is None:
            return None
        policy = self.model["p"]["p"].policy
        if not best:
            return policy[:1]  # fails the conjunct: Casbin's effect of no match
        return [policy[i] for i in best]

    def enforce_ex(self, *rvals):
        with self._lock:
            if rvals and isinstance(rvals[0], casbin.core_enforcer.EnforceContext):
                return super().enforce_ex(*rvals)
            if len(rvals) != len(self.model["r"]["r"].tokens):
                raise ServiceError("Invalid request size: expected %s, got %s", len(self.model["r"]["r"].tokens),
                                   len(rvals))
            candidates = self._candidates(rvals) if self._index or self._stale else None
            if candidates is None:
                return super().enforce_ex(*rvals)
            assertion = self.model["p"]["p"]
            everything = assertion.policy
            assertion.policy = candidates
            try:
                return super().enforce_ex(*rvals)
            finally:
                assertion.policy = everything
