"""Webhook delivery (docs/architecture.md, "Webhook delivery"; docs/security.md, "Webhook signatures").

- Matching: a record whose action is among an enabled webhook's events goes to that webhook when
  the webhook belongs to the record's organization. A webhook of the built-in organization (only a
  global admin can place one there) with singleOrgOnly off receives every organization's records;
  singleOrgOnly keeps it to its own. A webhook of any other organization only ever receives its
  own organization's records, whatever the switch says.
- The outbox: `enqueue` writes one WebhookEvent per matched webhook in the record's own
  transaction (records.audit calls it), so a record and its deliveries are committed together or
  not at all.
- The worker (`run`, started by the scheduler in every server process) claims due rows with a
  conditional UPDATE (a random claim token and a lease), sends each through the outbound guard
  within TIME_LIMIT seconds, and writes the outcome. A failed attempt is retried after the
  webhook's retry interval (doubled per attempt with exponential backoff, at most MAX_BACKOFF)
  until maxRetries attempts have been made. A worker that dies mid-delivery leaves its lease to
  run out, after which another worker sends the event again: delivery is at least once, and each
  delivery carries the event's id for receivers to drop repeats.
- Each delivery is signed: HMAC-SHA256 of "{timestamp}.{body}" with the webhook's secret.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any
from urllib.parse import urlencode

import httpx
import sqlalchemy as sa
from sqlalchemy import event as sa_event
from sqlalchemy.orm import Session as OrmSession
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import outbound, policy, query
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.models.base import attribute_named, masked, to_wire, utcnow, wire_names
from iam_console.operations import metrics

PENDING, RETRYING, SUCCESS, FAILED = "Pending", "Retrying", "Success", "Failed"
STATES = (PENDING, RETRYING, SUCCESS, FAILED)
SIGNATURE_HEADER = "X-Webhook-Signature"
TIMESTAMP_HEADER = "X-Webhook-Timestamp"
ID_HEADER = "X-Webhook-Id"
EVENT_HEADER = "X-Webhook-Event"
FORM = "application/x-www-form-urlencoded"

DEFAULT_MAX_RETRIES = 3
DEFAULT_RETRY_INTERVAL = 60  # seconds
MAX_BACKOFF = 3600  # seconds
TIME_LIMIT = 10  # seconds for one attempt: connecting, sending, the whole answer
LEASE = timedelta(seconds=TIME_LIMIT * 6)  # a claim outlives any attempt; then another worker may retry
BATCH = 50  # events claimed at once
SENDERS = 8  # attempts under way at once in one process
POLL_SECONDS = 1.0  # how soon another process's events (and retries) are seen
KEPT_RESPONSE = 1000  # characters of a receiver's answer kept on the event
UNPAGED_LIMIT = 100

log = logging.getLogger("iam_console.webhooks")
_EVENT = m.WebhookEvent
_HOOK = m.Webhook.__table__
_INSERT = _EVENT.__table__.insert()


def now() -> datetime:
    return datetime.now(timezone.utc)


# --- matching and the outbox ---

def matching(connection: sa.Connection, organization: str, action: str) -> list[sa.Row]:
    """The enabled webhooks that receive a record of `organization` with `action`."""
    if not organization or not action:
        return []
    rows = connection.execute(sa.select(_HOOK).where(
        _HOOK.c.is_enabled.is_(True), _HOOK.c.organization.in_((organization, b.BUILT_IN_ORG)))).all()
    return [hook for hook in rows if action in (hook.events or []) and (
        hook.organization == organization or not hook.single_org_only)]


def _object_fields(text: str, fields: list[str]) -> str:
    """The record's object cut to the webhook's objectFields ("All", or none: the whole object)."""
    if not fields or fields[0] == "All":
        return text
    try:
        whole = json.loads(text)
    except ValueError:
        return text
    if not isinstance(whole, dict):
        return text
    return json.dumps({name: whole[name] for name in fields if name in whole})


def extended_user(db: Session, organization: str, user: str, token_fields: list[str]) -> dict | None:
    """The record's user as the API shows it with every secret masked (a write's record names the
    user owner/name, a sign-in's by name within the organization); only the webhook's tokenFields
    when it names some. None when the record has no user of a table."""
    owner, _, name = user.partition("/")
    if not name:
        owner, name = organization, user
    if not owner or not name:
        return None
    with db.no_autoflush:  # the caller's pending changes stay theirs to flush; a user being saved shows them
        found = db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name)).first()
    if found is None:
        return None
    shown = masked(to_wire(found), m.User)
    names = wire_names(m.User)
    for attribute in m.User.json_admin_secrets | m.User.json_own_admin_secrets:
        if shown.get(names[attribute]):
            shown[names[attribute]] = "***"
    if token_fields:
        picked = {}
        for field in token_fields:
            attribute = attribute_named(m.User, str(field))
            if attribute is not None:
                picked[names[attribute]] = shown[names[attribute]]
        return picked
    return shown


def enqueue(db: Session, hooks: list[sa.Row], record: dict[str, Any]) -> None:
    """One outbox row per webhook for this record (its wire object), in the caller's transaction;
    the worker is woken when that transaction commits."""
    for hook in hooks:
        payload = {**record, "object": _object_fields(record.get("object") or "", hook.object_fields or [])}
        user = extended_user(db, record["organization"], record.get("user") or "",
                             hook.token_fields or []) if hook.is_user_extended else None
        add_event(db, owner=hook.owner, webhook=f"{hook.owner}/{hook.name}", organization=record["organization"],
                  event_type=record["action"][:100], payload=json.dumps(payload, default=str),
                  max_retries=hook.max_retries if hook.max_retries > 0 else DEFAULT_MAX_RETRIES,
                  record_id=record.get("id") or 0, extended_user=json.dumps(user) if user else "")


def add_event(db: Session, *, owner: str, webhook: str, organization: str, event_type: str, payload: str,
              max_retries: int, record_id: int = 0, extended_user: str = "") -> str:
    """One outbox row, due now, in the caller's transaction (the worker wakes at its commit); its name."""
    stamp, name = utcnow(), secrets.token_hex(16)
    db.connection().execute(_INSERT, {
        "owner": owner, "name": name, "created_time": stamp, "updated_time": stamp, "webhook": webhook,
        "organization": organization, "event_type": event_type, "state": PENDING, "record_id": record_id,
        "payload": payload, "extended_user": extended_user, "attempt_count": 0, "max_retries": max_retries,
        "next_retry_time": stamp, "last_status_code": 0, "last_response": "", "last_error": "", "claim": "",
        "lease_until": None,
    })
    db.info[_WAKE_KEY] = True
    return name


# --- the body and its signature ---

def body_of(event: m.WebhookEvent, content_type: str) -> bytes:
    """The record (and extendedUser) as JSON, or as a form: each field a text, objects as JSON."""
    record = json.loads(event.payload or "{}")
    if event.extended_user:
        record["extendedUser"] = json.loads(event.extended_user)
    if content_type == FORM:
        def text(value: Any) -> str:
            if isinstance(value, bool):
                return "true" if value else "false"
            if isinstance(value, dict | list):
                return json.dumps(value)
            return "" if value is None else str(value)
        return urlencode({key: text(value) for key, value in record.items()}).encode()
    return json.dumps(record).encode()


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """The signature header's value: "sha256=" and the hex HMAC-SHA256 of "{timestamp}." and the body."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def verify(secret: str, timestamp: str, body: bytes, header: str, *, tolerance: int = 300,
           at: float | None = None) -> bool:
    """What a receiver checks: the signature matches and the timestamp is recent (replays of an
    old delivery are refused)."""
    try:
        age = abs((time.time() if at is None else at) - int(timestamp))
    except ValueError:
        return False
    return age <= tolerance and hmac.compare_digest(signature(secret, timestamp, body), header)


def _kept(text: str) -> str:
    """A receiver's answer or an error as the event keeps it: cut, and without NUL (which no
    database column takes: one such answer would lose the outcomes of its whole batch)."""
    return text[:KEPT_RESPONSE].replace("\x00", "\ufffd")


@dataclass(frozen=True)
class Attempt:
    status_code: int = 0
    response: str = ""
    error: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "response", _kept(self.response))
        object.__setattr__(self, "error", _kept(self.error))

    @property
    def succeeded(self) -> bool:
        return not self.error and 200 <= self.status_code < 300


_clients = threading.local()


def http_client() -> httpx.Client:
    """The sending thread's guarded client, kept: building one loads the TLS trust store, which
    costs more than a local delivery. It keeps no connection alive, so every attempt connects
    (and is checked by the guard) anew, within its own time limit."""
    client = getattr(_clients, "client", None)
    if client is None:
        client = _clients.client = outbound.http_client(timeout=TIME_LIMIT, follow_redirects=False)
    return client


def send(hook: m.Webhook, event: m.WebhookEvent) -> Attempt:
    """One attempt: the webhook's method, URL, content type and headers, the signature headers
    last (a configured header cannot replace them), through the outbound guard within TIME_LIMIT."""
    content_type = hook.content_type or "application/json"
    body = body_of(event, content_type)
    stamp = str(int(time.time()))
    headers = {"Content-Type": content_type}
    for header in hook.headers or []:
        if isinstance(header, dict) and str(header.get("name") or "").strip():
            headers[str(header["name"]).strip()] = str(header.get("value") or "")
    headers.update({TIMESTAMP_HEADER: stamp, SIGNATURE_HEADER: signature(hook.secret, stamp, body),
                    ID_HEADER: event.name, EVENT_HEADER: event.event_type})
    try:
        answer = http_client().request(hook.method or "POST", hook.url, content=body, headers=headers)
    except (httpx.HTTPError, outbound.OutboundError, ValueError) as exc:
        return Attempt(error=str(exc) or type(exc).__name__)
    text = answer.text
    if not answer.is_success:
        return Attempt(answer.status_code, text, f"The receiver answered {answer.status_code}")
    return Attempt(answer.status_code, text)


@dataclass(frozen=True)
class Receiver:
    """Where an event goes (`send` makes one attempt) and how a failed attempt is retried."""

    send: Callable[[m.WebhookEvent], Attempt]
    retry_interval: int = DEFAULT_RETRY_INTERVAL
    exponential: bool = False


Resolve = Callable[[Session, m.WebhookEvent], "Receiver | str"]
# the outbox's other events, by their event_type (which no record's action takes): what finds each
# event's receiver, or the reason it has none. An application's back-channel logout notices
# (oauth/logout.py) are delivered, retried and recorded here like any webhook's events.
KINDS: dict[str, Resolve] = {}


def _webhook_receiver(db: Session, event: m.WebhookEvent) -> Receiver | str:
    owner, _, name = event.webhook.partition("/")
    hook = db.exec(select(m.Webhook).where(m.Webhook.owner == owner, m.Webhook.name == name)).first()
    if hook is None or not hook.is_enabled:
        return "Webhook not found" if hook is None else "Webhook is disabled"
    return Receiver(lambda event: send(hook, event), hook.retry_interval, hook.use_exponential_backoff)


def backoff(attempts: int, interval: int, exponential: bool) -> int:
    """Seconds before the next attempt after `attempts` failed ones."""
    interval = interval if interval > 0 else DEFAULT_RETRY_INTERVAL
    if not exponential:
        return interval
    return min(MAX_BACKOFF, interval * (1 << min(max(attempts - 1, 0), 10)))


# --- the worker ---

Sessions = Callable[[], AbstractContextManager[Session]]


def claim(db: Session, limit: int = BATCH, at: datetime | None = None) -> tuple[str, list[m.WebhookEvent]]:
    """Take up to `limit` due events: a conditional UPDATE stamps them with a random token and a
    lease, so of several workers that read the same rows each row goes to one."""
    at = at or now()
    free = sa.or_(_EVENT.lease_until.is_(None), _EVENT.lease_until < at)
    due = [_EVENT.state.in_((PENDING, RETRYING)), _EVENT.next_retry_time <= at, free]
    pks = list(db.exec(select(_EVENT.pk).where(*due).order_by(_EVENT.next_retry_time, _EVENT.pk).limit(limit)))
    if not pks:
        return "", []
    token = secrets.token_hex(16)
    db.exec(sa.update(_EVENT).where(_EVENT.pk.in_(pks), *due).values(claim=token, lease_until=at + LEASE))
    db.commit()
    return token, list(db.exec(select(_EVENT).where(_EVENT.claim == token)))


def _outcome(event: m.WebhookEvent, receiver: Receiver | str, attempt: Attempt | None, at: datetime) -> dict:
    """The event's new columns after an attempt (a str receiver: why the event has none)."""
    done = {"updated_time": at, "claim": "", "lease_until": None}
    if isinstance(receiver, str):
        return {**done, "state": FAILED, "next_retry_time": None, "last_error": receiver}
    attempts = event.attempt_count + 1
    values = {**done, "attempt_count": attempts, "last_status_code": attempt.status_code,
              "last_response": attempt.response, "last_error": attempt.error}
    if attempt.succeeded:
        return {**values, "state": SUCCESS, "next_retry_time": None}
    if attempts >= max(event.max_retries, 1):
        return {**values, "state": FAILED, "next_retry_time": None}
    delay = backoff(attempts, receiver.retry_interval, receiver.exponential)
    return {**values, "state": RETRYING, "next_retry_time": at + timedelta(seconds=delay)}


_senders = ThreadPoolExecutor(max_workers=SENDERS, thread_name_prefix="webhook-send")


def deliver_due(sessions: Sessions, limit: int = BATCH) -> int:
    """Claim due events, attempt each (SENDERS at once), write the outcomes; the number claimed."""
    with sessions() as db:
        token, events = claim(db, limit)
        found: dict[tuple[str, str], Receiver | str] = {}  # a webhook's events share its receiver
        receivers = []
        for event in events:
            key = (event.event_type, event.name) if event.event_type in KINDS else ("", event.webhook)
            if key not in found:
                found[key] = KINDS.get(event.event_type, _webhook_receiver)(db, event)
            receivers.append(found[key])
    if not events:
        return 0

    def attempt(event: m.WebhookEvent, receiver: Receiver | str) -> Attempt | None:
        if isinstance(receiver, str):
            return None
        try:
            return receiver.send(event)
        except Exception as exc:  # whatever one delivery raises is its failed attempt: the batch goes on
            log.warning("webhook %s: the delivery of %s failed", event.webhook, event.name, exc_info=True)
            return Attempt(error=f"{type(exc).__name__}: {exc}")

    attempts = list(_senders.map(attempt, events, receivers))
    at = now()
    with sessions() as db:
        for event, receiver, result in zip(events, receivers, attempts, strict=True):
            values = _outcome(event, receiver, result, at)
            # only while the claim is still ours: a lease that ran out belongs to another worker now
            db.exec(sa.update(_EVENT).where(_EVENT.pk == event.pk, _EVENT.claim == token).values(**values))
            metrics.WEBHOOK_DELIVERIES.labels(result=values["state"].lower()).inc()
    return len(events)


WAKE = threading.Event()
_WAKE_KEY = "webhook_events"


def _after_commit(session: OrmSession) -> None:
    if session.info.pop(_WAKE_KEY, False):
        WAKE.set()


def _after_rollback(session: OrmSession) -> None:
    session.info.pop(_WAKE_KEY, None)


def install() -> None:
    """Wake this process's worker when a transaction that wrote outbox rows commits."""
    if not sa_event.contains(OrmSession, "after_commit", _after_commit):
        sa_event.listen(OrmSession, "after_commit", _after_commit)
        sa_event.listen(OrmSession, "after_soft_rollback", lambda session, _previous: _after_rollback(session))


def run(stop: threading.Event, sessions: Sessions) -> None:
    """The worker: deliver what is due, then wait for a commit that wrote events (this process's)
    or POLL_SECONDS (another process's events, and retries coming due)."""
    while not stop.is_set():
        WAKE.clear()  # before looking: a commit from now on wakes the wait below at once
        try:
            while deliver_due(sessions) == BATCH and not stop.is_set():
                pass
        except Exception:  # a database hiccup: logged, and tried again at the next wake
            log.exception("webhook delivery failed")
        WAKE.wait(POLL_SECONDS)


# --- the event log (get-webhook-events, get-webhook-event-detail, replay, delete) ---

def _scope(actor: Actor, owner: str = "", organization: str = "") -> list[sa.ColumnElement]:
    """An admin reads the events of their organization's records; the global admin every
    organization's (narrowed by owner and organization when given). An organization admin asking
    for another organization is refused."""
    policy.require_admin(actor)
    if actor.is_global_admin:
        return [*([_EVENT.owner == owner] if owner else []),
                *([_EVENT.organization == organization] if organization else [])]
    if organization and organization != actor.organization:
        raise ServiceError(policy.UNAUTHORIZED)
    return [_EVENT.organization == actor.organization]


def list_events(db: Session, actor: Actor, params: dict[str, str]) -> query.Page:
    """A page of events, newest first unless sorted otherwise; `webhook` (owner/name) and `state`
    narrow it."""
    where = _scope(actor, params.get("owner", ""), params.get("organization", ""))
    if params.get("webhook"):
        where.append(_EVENT.webhook == params["webhook"][:200])
    if params.get("state"):
        where.append(_EVENT.state == params["state"][:50])
    asked = query.parse_list_query(params)
    if asked.sort_field:
        query.scalar_column(_EVENT, asked.sort_field, "sort")
    return query.run(db, _EVENT, where, asked)


def _stored(db: Session, actor: Actor, ident: str) -> m.WebhookEvent | None:
    owner, _, name = ident.partition("/")
    policy.require_admin(actor)
    if not owner or not name:
        raise ServiceError("The id must be owner/name")
    row = db.exec(select(_EVENT).where(_EVENT.owner == owner, _EVENT.name == name)).first()
    if row is not None and not actor.is_global_admin and row.organization != actor.organization:
        raise ServiceError(policy.UNAUTHORIZED)
    return row


def present(row: m.WebhookEvent) -> dict[str, Any]:
    return to_wire(row)


def get_event(db: Session, actor: Actor, ident: str) -> dict[str, Any] | None:
    row = _stored(db, actor, ident)
    return None if row is None else present(row)


def replay(db: Session, actor: Actor, ident: str) -> str:
    """The event is sent again from the start (attempts 0, due now), by the worker."""
    row = _stored(db, actor, ident)
    if row is None:
        raise ServiceError("The webhook event: %s does not exist", ident[:200])
    db.exec(sa.update(_EVENT).where(_EVENT.pk == row.pk).values(
        state=PENDING, attempt_count=0, next_retry_time=utcnow(), last_error="", claim="", lease_until=None,
        updated_time=utcnow()))
    db.info[_WAKE_KEY] = True
    return "Webhook event replay triggered"


def delete_event(db: Session, actor: Actor, data: dict[str, Any]) -> str:
    owner, name = str(data.get("owner") or ""), str(data.get("name") or "")
    row = _stored(db, actor, f"{owner}/{name}")
    if row is None:
        return "Unaffected"
    db.exec(sa.delete(_EVENT).where(_EVENT.pk == row.pk))
    return "Affected"

