"""Webhooks: an HTTP call to a URL on chosen events (delivery: operations/webhooks.py)."""

from __future__ import annotations

import secrets

from sqlmodel import Session

from iam_console import models as m
from iam_console.core.access import Actor
from iam_console.core.kinds.common import Choice, KindRules, check_destinations, check_range, fixed
from iam_console.extension import extensions

METHODS = ("POST", "GET", "PUT", "DELETE")
CONTENT_TYPES = ("application/json", "application/x-www-form-urlencoded")
# the built-in features' events (iam_console/features.py): the sign-in events, then add-, update- and
# delete- of each kind
EVENT_KINDS = ("organization", "group", "user", "application", "provider", "resource", "cert", "role", "permission",
               "model", "adapter", "enforcer", "session", "record", "token", "syncer", "webhook")
BUILT_IN_EVENTS = ("signup", "login", "logout", "new-user",
                   *(f"{verb}-{kind}" for kind in EVENT_KINDS for verb in ("add", "update", "delete")))
SECRET_BYTES = 24


def events() -> tuple[str, ...]:
    """The events a webhook may choose: every extension's (iam_console/extension.py)."""
    return tuple(event for extension in extensions() for event in extension.webhook_events)


def before_save(db: Session, actor: Actor, old: m.Webhook | None, row: m.Webhook, changed: set[str]) -> None:
    """Every webhook signs its deliveries: one saved without a secret gets a random one."""
    if not row.secret:
        row.secret = old.secret if old is not None and old.secret else secrets.token_hex(SECRET_BYTES)


def validate(db: Session, actor: Actor, row: m.Webhook) -> None:
    check_destinations(row, urls=("url",))
    check_range(row.max_retries, 0, 100, "maximum of retries")
    check_range(row.retry_interval, 0, 86_400, "retry interval")


RULES = KindRules(
    choices=(Choice("method", METHODS), Choice("content_type", CONTENT_TYPES)),
    before_save=before_save,
    validate=validate,
    new=fixed(url="https://example.com/callback", method="POST", contentType="application/json",
              events=["signup", "login", "logout", "update-user"], isEnabled=True, maxRetries=3, retryInterval=60,
              useExponentialBackoff=True),
    organization_as_owner=True,
)
