"""run-casbin-command: the Casbin CLI calls of the model editor (docs/api.md, "Authorization").

Casdoor runs a `casbin-{language}-cli` program found on the server's PATH. This server runs no
program: the commands the editor sends, `enforce` and `enforceEx` over a model text (`-m`) and a
policy text (`-p`), and `--version`, are answered in process by pycasbin whatever the language
named, with the CLIs' common answer `{"allow": bool, "explain": [...] | null}`, on the server's
Engine (RE2 pattern functions, checked matchers, the enforcement time budget). A `-m` or `-p`
value is always the text itself, never a path: no file is read. Any other command is refused.

The caller is an admin, and the call carries the editor's identifier: `t`, an RFC 3339 time
within five minutes of the server's, and `m`, the SHA-256 (hex) of
`casbin-editor-v1|{t}|args={args}&language={language}`."""

from __future__ import annotations

import csv
import hashlib
import hmac
import importlib.metadata
import json
from datetime import datetime, timedelta, timezone
from typing import Any

from iam_console.authorization import casbin_engine, casbin_matchers
from iam_console.authorization.casbin_engine import Engine, parse_model, request_value
from iam_console.core import policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json

IDENTIFIER_VERSION = "casbin-editor-v1"
MAX_SKEW = timedelta(minutes=5)
MAX_ARGS = 256 * 1024  # the args text
MAX_POLICY_LINES = 10_000
COMMANDS = ("enforce", "enforceEx")


def _identified(language: str, args: str, digest: str, moment: str, now: datetime) -> bool:
    if not (language and args and digest and moment):
        return False
    try:
        when = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return False
    if when.tzinfo is None or abs(now - when) > MAX_SKEW:
        return False
    raw = f"{IDENTIFIER_VERSION}|{moment}|args={args}&language={language}"
    return hmac.compare_digest(hashlib.sha256(raw.encode()).hexdigest(), digest.lower())


def _policy_lines(text: str) -> list[list[str]]:
    """A policy text as Casbin's CSV files hold it: `p, alice, data1, read` a line."""
    lines = [line for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    if len(lines) > MAX_POLICY_LINES:
        raise ServiceError("The policy text has more than %d lines", MAX_POLICY_LINES)
    return [[value.strip() for value in row] for row in csv.reader(lines, skipinitialspace=True)]


def _parsed(args: list[str]) -> tuple[str, str, str, list[str]]:
    """(command, model text, policy text, request values)."""
    command, rest = args[0], args[1:]
    texts, values = {"-m": "", "-p": ""}, []
    aliases = {"--model": "-m", "--policy": "-p"}
    index = 0
    while index < len(rest):
        flag = aliases.get(rest[index], rest[index])
        if flag in texts and index + 1 < len(rest):
            texts[flag] = rest[index + 1]
            index += 2
            continue
        values.append(rest[index])
        index += 1
    return command, texts["-m"], texts["-p"], values


def run(actor: Actor, language: str, args: str, digest: str, moment: str,
        now: datetime | None = None) -> str:
    policy.require_admin(actor)
    if not _identified(language, args, digest, moment, now or datetime.now(timezone.utc)):
        raise ServiceError("invalid identifier")
    if len(args) > MAX_ARGS:
        raise ServiceError("The request body is too large")
    try:
        parsed: Any = parse_json(args)
    except ValueError as exc:
        raise ServiceError("The args must be a JSON list of texts: %s", str(exc)) from None
    if not isinstance(parsed, list) or not parsed or not all(isinstance(a, str) for a in parsed):
        raise ServiceError("The args must be a JSON list of texts: %s", "a non-empty list of strings")
    if parsed[0] == "--version":
        return f"casbin-{language}-cli (served by pycasbin {importlib.metadata.version('casbin')})"
    command, model_text, policy_text, values = _parsed(parsed)
    if command not in COMMANDS:
        raise ServiceError("The Casbin command %s is not supported", command[:100])
    if not model_text:
        raise ServiceError("The model text (-m) should not be empty")
    engine = Engine(parse_model(model_text))
    engine.load_lines(_policy_lines(policy_text))
    try:
        with casbin_matchers.time_budget(casbin_engine.ENFORCE_BUDGET):
            if command == "enforce":
                allowed, explain = bool(engine.enforce(*[request_value(v) for v in values])), None
            else:
                allowed, explain = engine.enforce_ex(*[request_value(v) for v in values])
                allowed, explain = bool(allowed), list(explain or [])
    except ServiceError:
        raise
    except Exception as exc:  # a matcher that fails on these values: Casbin's own error
        raise ServiceError("Failed to enforce: %s", str(exc) or type(exc).__name__) from None
    return json.dumps({"allow": allowed, "explain": explain}, separators=(",", ":"))
