"""The audit trail: one Record per write, sign-in and sign-out; and the redaction
of secrets from records and log lines (docs/api.md, "Secrets in records and logs").

One list names what is secret: a query parameter, form or JSON field whose name
is on it has its value replaced by "***" before a record is written (its request
URI, object and response) and before a log line is emitted, whatever the route."""

from __future__ import annotations

import json
import logging
import re
import secrets
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_plus

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.json_input import parse_json
from iam_console.models import Record
from iam_console.models.base import to_wire, utcnow
from iam_console.operations import webhooks

REDACTED = "***"
# Credentials as the API's callers name them (query parameters and body fields of
# Casdoor's API and of OAuth 2.0), compared without case, "_" or "-"...
PROTOCOL_SECRETS = frozenset({
    "password", "oldpassword", "newpassword", "clientsecret", "accesssecret", "accesstoken", "refreshtoken",
    "idtoken", "idtokenhint", "token", "code", "codeverifier", "devicecode", "usercode", "clientassertion",
    "assertion", "secret", "passcode", "recoverycode", "recoverycodes", "privatekey",
    "invitationcode",  # not the user's secret, but whoever reads the logs could spend an invitation's quota
})


def _normal(name: str) -> str:
    return unquote_plus(name).lower().replace("_", "").replace("-", "")


def _model_secrets() -> frozenset[str]:
    """...and every column a table declares secret (masked when read)."""
    found, models = set(), [m.Row]
    while models:
        model = models.pop()
        models.extend(model.__subclasses__())
        declared = model.json_secrets | model.json_admin_secrets | model.json_own_admin_secrets
        found.update(_normal(name) for name in declared)
    return frozenset(found)


SECRET_NAMES = PROTOCOL_SECRETS | _model_secrets()


def is_secret(name: str) -> bool:
    return _normal(str(name)) in SECRET_NAMES


def redact(value: Any) -> Any:
    """A JSON-like value with the values of secret keys replaced, at any depth."""
    if isinstance(value, dict):
        return {k: REDACTED if is_secret(k) else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


# name=value in a query string, a form body or a log line: the name starts the text or
# follows a separator, the value runs to the next separator
_PAIR = re.compile(r"(?:^|(?<=[?&;\s\"'(,]))([\w.%+-]+)=([^&#\s\"',;)]*)")


def redact_text(text: str) -> str:
    """A URI, query string or log line with the value of every secret name=value replaced."""
    if "=" not in text:
        return text
    return _PAIR.sub(lambda pair: f"{pair[1]}={REDACTED}" if pair[2] and is_secret(pair[1]) else pair[0], text)


def redact_json_text(text: str) -> str:
    """A record's object or response as stored (JSON text): secret keys redacted;
    text that is not JSON is redacted as name=value pairs."""
    if not text:
        return text
    try:
        return json.dumps(redact(parse_json(text)), default=str)
    except ValueError:
        return redact_text(text)


def redacting_log_records() -> None:
    """Every log record of the process, whichever library emits it (the server's
    access log, our own lines), has its message and string arguments redacted
    before any handler formats it. Installed once, by the app module."""
    make = logging.getLogRecordFactory()
    if getattr(make, "redacts", False):
        return

    def factory(*args: Any, **kwargs: Any) -> logging.LogRecord:
        record = make(*args, **kwargs)
        if isinstance(record.msg, str):
            record.msg = redact_text(record.msg)
        if isinstance(record.args, tuple):
            record.args = tuple(redact_text(a) if isinstance(a, str) else a for a in record.args)
        elif isinstance(record.args, dict):
            record.args = {k: redact_text(v) if isinstance(v, str) else v for k, v in record.args.items()}
        return record

    factory.redacts = True
    logging.setLogRecordFactory(factory)


# what a record keeps of a request's object and of its answer: enough to read what was
# asked and what came of it, never a whole uploaded workbook
OBJECT_LIMIT = 20_000
RESPONSE_LIMIT = 1_000
OK_RESPONSE = {"status": "ok", "msg": ""}


def _json_text(value: Any, limit: int) -> str:
    if value is None:
        return ""
    text = value if isinstance(value, str) else json.dumps(redact(value), default=str)
    return (redact_json_text(text) if isinstance(value, str) else text)[:limit]


@dataclass(frozen=True)
class Call:
    """The HTTP request being served: what a record leaves unsaid is taken from it."""

    method: str = ""
    uri: str = ""
    client_ip: str = ""
    language: str = ""


# set by the API for each request it serves (api/middleware.py, AuditContext)
CURRENT_CALL: ContextVar[Call | None] = ContextVar("current_call", default=None)


def audit(db: Session, *, organization: str, user: str, action: str, method: str = "",
          request_uri: str = "", client_ip: str = "", language: str = "", obj: Any = None,
          response: Any = OK_RESPONSE, status_code: int = 200) -> None:
    """Write one Record. A Core INSERT with bound parameters (its compiled form is
    cached): sign-ins and token grants write one each, and an ORM object of the
    table costs more than the rest of the write. A record an enabled webhook listens for
    leaves its outbox rows in the same transaction (isTriggered says so). Secrets are redacted from the URI,
    object and response; the object and response are cut at their limits. The method, URI,
    client address and language not given are the HTTP request's being served, if any."""
    call = CURRENT_CALL.get() or Call()
    method, request_uri = method or call.method or "POST", request_uri or call.uri
    client_ip, language = client_ip or call.client_ip, language or call.language
    connection = db.connection()
    hooks = webhooks.matching(connection, organization, action)
    values = {
        "owner": organization, "name": secrets.token_hex(10), "created_time": utcnow(),
        "organization": organization, "user": user, "action": action[:1000], "method": method[:100],
        "request_uri": redact_text(request_uri)[:1000], "client_ip": client_ip[:100], "language": language[:100],
        "status_code": status_code, "object": _json_text(obj, OBJECT_LIMIT),
        "response": _json_text(response, RESPONSE_LIMIT), "detail": "", "is_triggered": bool(hooks),
    }
    inserted = connection.execute(RECORD_INSERT, values)
    if hooks:  # the webhooks' outbox rows, in this transaction (operations/webhooks.py)
        webhooks.enqueue(db, hooks, to_wire(Record(**values, pk=inserted.inserted_primary_key[0])))


RECORD_INSERT = Record.__table__.insert()
