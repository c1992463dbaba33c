"""The audit trail: one Record per write, sign-in and sign-out."""

from __future__ import annotations

import json
import secrets
from typing import Any

from sqlmodel import Session

from ..models import Record
from ..models.base import utcnow

# keys whose values never reach the stored body
SECRET_KEYS = {"password", "oldpassword", "newpassword", "clientsecret", "accesssecret", "privatekey",
               "masterpassword", "defaultpassword", "code", "token", "accesstoken", "refreshtoken"}


def redact(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: "***" if k.lower() in SECRET_KEYS else redact(v) for k, v in value.items()}
    if isinstance(value, list):
        return [redact(v) for v in value]
    return value


def audit(db: Session, *, organization: str, user: str, action: str, method: str = "POST",
          request_uri: str = "", client_ip: str = "", language: str = "", obj: Any = None,
          response: Any = None, status_code: int = 200) -> None:
    """Write one Record. A Core INSERT with bound parameters (its compiled form is
    cached): sign-ins and token grants write one each, and an ORM object of the
    table costs more than the rest of the write."""
    db.connection().execute(RECORD_INSERT, {
        "owner": organization, "name": secrets.token_hex(10), "created_time": utcnow(),
        "organization": organization, "user": user, "action": action, "method": method,
        "request_uri": request_uri[:1000], "client_ip": client_ip, "language": language, "status_code": status_code,
        "object": json.dumps(redact(obj), default=str) if obj is not None else "",
        "response": json.dumps(redact(response), default=str) if response is not None else "",
        "detail": "", "is_triggered": False,
    })


RECORD_INSERT = Record.__table__.insert()
