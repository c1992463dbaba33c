"""What a Casbin matcher may compute, and for how long (docs/security.md, "Tenant patterns and
matchers").

pycasbin evaluates a matcher with simpleeval, whose own limits still let one expression run for
seconds or take gigabytes: `4000000 ** 4000000`, `r.sub.ljust(10**9)`, an f-string's width, a
text formatted with `%`, a comprehension. Every expression the engine compiles (a model's
matcher, and each one an `eval()` builds from a policy's rule) is first checked here: one
expression of Casbin's forms only (names, attributes, literals, comparisons, boolean, arithmetic
and bitwise operators, calls of the model's functions and of SAFE_METHODS, tuples, lists, sets,
dicts, subscripts, conditional expressions), at most MAX_NODES parts, number literals of at most
MAX_BITS bits. It is then evaluated with operators whose results stay bounded (numbers of at most
MAX_BITS bits, texts and lists of at most MAX_LENGTH items; no text formatting), and the time
budget of the call (`time_budget`) is checked before each policy's evaluation and each function
call: past it the call stops with "The enforcement took too long"."""

from __future__ import annotations

import ast
import operator as op
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from casbin.util import SimpleEval

from iam_console.core.errors import ServiceError
from iam_console.workers import courtesy

MAX_NODES = 1000
MAX_BITS = 4096
MAX_LENGTH = 100_000  # simpleeval's own bound on a text
SAFE_METHODS = frozenset({
    # methods whose result is no larger than what they read
    "startswith", "endswith", "lower", "upper", "casefold", "capitalize", "title", "swapcase", "strip", "lstrip",
    "rstrip", "removeprefix", "removesuffix", "split", "rsplit", "splitlines", "partition", "rpartition", "find",
    "rfind", "index", "rindex", "count", "isdigit", "isdecimal", "isnumeric", "isalpha", "isalnum", "isspace",
    "islower", "isupper", "istitle", "get", "keys", "values", "items"})
_ALLOWED = (ast.Module, ast.Expr, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Compare, ast.Call, ast.Name, ast.Attribute,
            ast.Constant, ast.Subscript, ast.Slice, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.IfExp,
            ast.boolop, ast.operator, ast.unaryop, ast.cmpop, ast.expr_context)


class MatcherRefused(ServiceError):
    def __init__(self, reason: str) -> None:
        super().__init__("The matcher is not allowed: %s", reason)


class TooLarge(ServiceError):
    def __init__(self, reason: str) -> None:
        super().__init__("The matcher's value would be too large: %s", reason)


class TooLong(ServiceError):
    def __init__(self) -> None:
        super().__init__("The enforcement took too long")


# --- the check ---

def _refusal(node: ast.AST) -> str:
    """Why this node may not be in a matcher; "" when it may."""
    if not isinstance(node, _ALLOWED):
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return "comprehensions are not allowed"
        if isinstance(node, (ast.JoinedStr, ast.FormattedValue)):
            return "f-strings are not allowed"
        return f"{type(node).__name__} is not allowed"
    if isinstance(node, ast.Call):
        if node.keywords:
            return "keyword arguments are not allowed"
        if isinstance(node.func, ast.Attribute):
            if node.func.attr not in SAFE_METHODS:
                return f"the method {node.func.attr} is not allowed"
        elif not isinstance(node.func, ast.Name):
            return "only the model's functions and a few text methods may be called"
    if isinstance(node, ast.Attribute) and node.attr.startswith("_"):
        return f"the attribute {node.attr} is not allowed"
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, int) and value.bit_length() > MAX_BITS:
            return f"a number has more than {MAX_BITS} bits"
        if isinstance(value, (str, bytes)) and len(value) > MAX_LENGTH:
            return f"a text has more than {MAX_LENGTH} characters"
    return ""


def checked(expression: str) -> ast.expr:
    """The expression's tree, once every part of it is allowed; MatcherRefused otherwise."""
    try:
        tree = ast.parse(expression.strip())
    except (SyntaxError, ValueError) as exc:  # ValueError: a number literal Python will not read
        raise MatcherRefused(f"{type(exc).__name__}: {exc}") from None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        raise MatcherRefused("a matcher is one expression")
    for count, node in enumerate(ast.walk(tree)):
        if count >= MAX_NODES:
            raise MatcherRefused(f"the expression has more than {MAX_NODES} parts")
        reason = _refusal(node)
        if reason:
            raise MatcherRefused(reason)
    return tree.body[0].value


# --- bounded operators ---

def _is_int(value: Any) -> bool:
    return isinstance(value, int)


_CONTAINERS = (list, tuple, set, frozenset, dict)


def _length(value: Any) -> int | None:
    return len(value) if isinstance(value, (str, bytes, list, tuple)) else None


def _add(a: Any, b: Any) -> Any:
    la, lb = _length(a), _length(b)
    if la is not None and lb is not None and la + lb > MAX_LENGTH:
        raise TooLarge(f"more than {MAX_LENGTH} items")
    return a + b


def _mult(a: Any, b: Any) -> Any:
    if _is_int(a) and _is_int(b) and a.bit_length() + b.bit_length() > MAX_BITS:
        raise TooLarge(f"a number of more than {MAX_BITS} bits")
    for seq, times in ((a, b), (b, a)):
        size = _length(seq)
        if size is None or not _is_int(times) or times <= 1:
            continue
        if size * times > MAX_LENGTH:
            raise TooLarge(f"more than {MAX_LENGTH} items")
        if not isinstance(seq, (str, bytes)) and any(isinstance(item, _CONTAINERS) for item in seq):
            # a repeated container is compared item by item: [[1] * n] * n would cost n * n
            raise TooLarge("a repeated list of containers")
    return a * b


def _power(a: Any, b: Any) -> Any:
    if _is_int(a) and _is_int(b) and b > 0 and abs(a) > 1 and (abs(a).bit_length() - 1) * b > MAX_BITS:
        raise TooLarge(f"a number of more than {MAX_BITS} bits")
    return a ** b


def _lshift(a: Any, b: Any) -> Any:
    if _is_int(a) and _is_int(b) and b > 0 and a.bit_length() + b > MAX_BITS:
        raise TooLarge(f"a number of more than {MAX_BITS} bits")
    return a << b


def _modulo(a: Any, b: Any) -> Any:
    if isinstance(a, (str, bytes)):
        # a plain ServiceError: the check on save evaluates with empty texts, where `r.x % 2`
        # (meant for numbers) would be formatting
        raise ServiceError("The matcher is not allowed: %s", "formatting a text with % is not allowed")
    return a % b


OPERATORS = {
    ast.Add: _add, ast.Sub: op.sub, ast.Mult: _mult, ast.Div: op.truediv, ast.FloorDiv: op.floordiv,
    ast.Mod: _modulo, ast.Pow: _power, ast.LShift: _lshift, ast.RShift: op.rshift, ast.BitOr: op.or_,
    ast.BitXor: op.xor, ast.BitAnd: op.and_, ast.Invert: op.invert, ast.Not: op.not_, ast.USub: op.neg,
    ast.UAdd: op.pos, ast.Eq: op.eq, ast.NotEq: op.ne, ast.Gt: op.gt, ast.Lt: op.lt, ast.GtE: op.ge,
    ast.LtE: op.le, ast.In: lambda x, y: op.contains(y, x), ast.NotIn: lambda x, y: not op.contains(y, x),
    ast.Is: lambda x, y: x is y, ast.IsNot: lambda x, y: x is not y}


# --- the time budget ---

_deadline: ContextVar[float | None] = ContextVar("casbin_deadline", default=None)


@contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Within it, evaluation stops with TooLong once `seconds` have passed (an enclosing budget
    that ends sooner stays in force)."""
    deadline = time.monotonic() + seconds
    outer = _deadline.get()
    token = _deadline.set(deadline if outer is None else min(outer, deadline))
    try:
        yield
    finally:
        _deadline.reset(token)


def check_deadline() -> None:
    """Once per policy evaluation: past the budget, TooLong; a long evaluation also gives way to
    the server's other requests (workers.courtesy), and the budget is not spent while it does: it
    counts the evaluation's computing, not the pauses its fair share asks for."""
    paused = courtesy()
    deadline = _deadline.get()
    if deadline is None:
        return
    if paused:
        deadline += paused
        _deadline.set(deadline)  # until the budget's block ends (time_budget resets it)
    if time.monotonic() > deadline:
        raise TooLong()


# --- the evaluator ---

class Matcher(SimpleEval):
    """pycasbin's evaluator over a checked expression, with OPERATORS and the time budget."""

    def __init__(self, expression: str, functions: dict | None = None) -> None:
        tree = checked(expression)
        super().__init__("", functions)
        self.expr, self.ast_parsed_value, self.operators = expression, tree, OPERATORS

    def eval(self, names=None):
        check_deadline()  # once per policy: pycasbin evaluates the matcher for each
        return super().eval(names)

    def _eval_call(self, node):
        check_deadline()
        return super()._eval_call(node)

    def _check_disallowed_items(self, item):
        # simpleeval walks every container after every step (a 100,000-item list each time); what a
        # checked matcher reaches are request and policy values and the model's functions, so the
        # walk is kept for what is not a container
        if not isinstance(item, _CONTAINERS):
            super()._check_disallowed_items(item)


def python_of(expression: str) -> str:
    """As pycasbin's CoreEnforcer._get_expression: Casbin's `&&`, `||` and `!` as Python's."""
    return re.sub(r"!(?!=)", "not ", expression.replace("&&", "and").replace("||", "or"))


def compiled(expression: str, functions: dict | None = None) -> Matcher:
    return Matcher(python_of(expression), functions)
