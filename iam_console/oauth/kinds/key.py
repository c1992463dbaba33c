"""API keys: an access key and secret that act as the key's user, or as the client of its
application (signin/credentials.py), within the key's organization. The secret is made
when the key is added, answered that once, and kept as its SHA-256."""

from __future__ import annotations

import secrets
import uuid
from typing import Any

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules
from iam_console.identity.passwords import hash_secret
from iam_console.models.base import utcnow
from iam_console.signin import credentials

# Casdoor's types; a Prometheus key is stored as given (it reads Casdoor's metrics), and like every
# key acts only as its user or its application's client (signin/credentials.py)
TYPES = ("Organization", "Application", "User", "General", "Prometheus")
STATES = ("Active", "Inactive")


def validate(db: Session, actor: Actor, row: m.Key) -> None:
    if row.organization != row.owner:
        raise ServiceError("The organization of a key must be its owner")
    if row.user and row.application:
        raise ServiceError("A key acts as a user or as an application, not both")
    credentials.check_access_key_free(db, row.access_key, key=row)


def before_save(db: Session, actor: Actor, old: m.Key | None, row: m.Key, changed: set[str]) -> None:
    row.organization = row.organization or row.owner
    row.access_key = row.access_key or uuid.uuid4().hex
    if "access_secret" in changed:  # a secret the client chose: only its hash is kept
        row.access_secret = hash_secret(row.access_secret)
    row.updated_time = utcnow()


def answer(db: Session, row: m.Key) -> tuple[Any, Any]:
    """add-key: Affected, and in data2 the key and (when the client chose none) the new
    secret, the one time it is shown."""
    made = ""
    if not row.access_secret:
        made = secrets.token_urlsafe(24)
        row.access_secret = hash_secret(made)
        db.add(row)
    return "Affected", {"accessKey": row.access_key, "accessSecret": made or "***"}


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    return {"displayName": f"New Key - {suffix}", "type": "User", "organization": owner, "state": "Active"}


RULES = KindRules(choices=(Choice("type", TYPES), Choice("state", STATES)), validate=validate,
                  before_save=before_save, answer=answer, new=new)
