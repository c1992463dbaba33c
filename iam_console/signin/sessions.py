"""Casdoor's session objects: one per user and application, listing the ids of
that user's live sign-ins. Deleting one (or an id from it) signs those out."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, delete, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import lookup, policy, wire
from iam_console.core.access import Actor
from iam_console.core.crud import AFFECTED, NO_REQUEST, UNAFFECTED, Request, present
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.oauth import logout
from iam_console.signin import auth


def split_pk(value: str) -> tuple[str, str, str]:
    """sessionPkId: owner/name/application."""
    parts = value.split("/") if isinstance(value, str) else []
    if len(parts) != 3 or not all(parts):
        raise ServiceError("The session id must be of the form owner/name/application")
    return parts[0], parts[1], parts[2]


def _row(db: Session, actor: Actor, owner: str, name: str, application: str) -> m.Session | None:
    scope = policy.read_scope(actor, REGISTRY["session"])
    model = m.Session
    # out of reach is answered as missing (see crud.readable_row)
    return db.exec(select(model).where(model.owner == owner, model.name == name, model.application == application,
                                       *scope)).first()


def get(db: Session, actor: Actor, owner: str, name: str, application: str) -> dict[str, Any] | None:
    row = _row(db, actor, owner, name, application)
    return present(actor, REGISTRY["session"], row) if row else None


MAX_IDS = 100  # a session lists at most this many sign-ins, the newest kept


def save(db: Session, actor: Actor, data: dict[str, Any], request: Request = NO_REQUEST, *,
         merge: bool = False) -> str:
    """update-session replaces the listed ids; add-session (merge) adds to them."""
    policy.require_admin(actor)
    probe = m.Session()
    wire.apply(probe, data)
    if not probe.owner or not probe.name or not probe.application:
        raise ServiceError("The owner, name and application cannot be empty")
    row = _row(db, actor, probe.owner, probe.name, probe.application)
    policy.check_write(actor, REGISTRY["session"], row, probe)
    ids = probe.session_id
    if row is not None and merge:
        ids = [i for i in row.session_id if i not in ids] + ids
    ids = ids[-MAX_IDS:]
    if row is None:
        row = probe
        row.session_id = ids
    elif not wire.apply(row, {"sessionId": ids}):
        return UNAFFECTED
    db.add(row)
    audit(db, organization=row.owner, user=actor.id, action="update-session", request_uri=request.uri,
          client_ip=request.client_ip, obj={"owner": row.owner, "name": row.name, "application": row.application})
    return AFFECTED


def remove(db: Session, actor: Actor, owner: str, name: str, application: str, request: Request = NO_REQUEST) -> str:
    """delete-session: the row goes, and with it every sign-in it listed."""
    row = _row(db, actor, owner, name, application)
    if row is None:
        return UNAFFECTED
    policy.check_write(actor, REGISTRY["session"], row, None)
    auth.end_sessions(db, set(row.session_id))  # the applications they signed in to are told
    user = lookup.user(db, owner, name)
    if user is not None:  # and the session's own application, by sub alone if no sid reached it
        logout.tell_application(db, user, application, set(row.session_id))
    db.exec(delete(m.Session).where(m.Session.pk == row.pk))  # ending them may have deleted it already
    audit(db, organization=owner, user=actor.id, action="delete-session", request_uri=request.uri,
          client_ip=request.client_ip, obj={"owner": owner, "name": name, "application": application})
    return AFFECTED
