"""A ticket's thread: add-ticket-message appends one message, whose author, time and admin flag
are the server's (the caller's id, now, whether the caller is an admin), never the body's. A user
messages their own tickets only, an admin their organization's (the read rules of the kind,
core/policy.py): a ticket out of reach is answered as a missing one."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from iam_console.audit.records import audit
from iam_console.core import crud, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.models.base import format_time, utcnow

from .models import Ticket

MAX_TEXT = 10_000  # characters of one message


def message_text(body: Any) -> str:
    """The text of a posted message: a non-empty string of at most MAX_TEXT characters."""
    if not isinstance(body, dict):
        raise ServiceError("The request body must be a JSON object")
    text = body.get("text")
    if not isinstance(text, str):
        raise ServiceError("The text of a message must be a string")
    if not text.strip():
        raise ServiceError("The text of a message cannot be empty")
    if len(text) > MAX_TEXT or "\x00" in text:
        raise ServiceError("The text of a message must be at most %d characters, without NUL", MAX_TEXT)
    return text


def add_message(db: Session, actor: Actor, ident: str, body: Any, uri: str = "") -> str:
    """Append a message to the ticket `ident` (owner/name): "Affected"."""
    scope = policy.read_scope(actor, REGISTRY["ticket"])  # anonymous: Please login first
    owner, name = crud.split_id(ident)
    text = message_text(body)
    # locked until the transaction ends: two messages posted at once both stay
    row = db.exec(select(Ticket).where(Ticket.owner == owner, Ticket.name == name, *scope)
                  .with_for_update()).first()
    if row is None:
        raise ServiceError("The ticket %s/%s does not exist", owner, name)
    message = {"author": actor.id, "text": text, "timestamp": format_time(utcnow()), "isAdmin": actor.is_admin}
    row.messages = [*(row.messages or []), message]
    row.updated_time = utcnow()
    db.add(row)
    db.flush()
    audit(db, organization=row.owner, user=actor.id, action="add-ticket-message",
          request_uri=uri or f"/api/add-ticket-message?id={owner}/{name}", obj={"id": ident, "text": text})
    return crud.AFFECTED
