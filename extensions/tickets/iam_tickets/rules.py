"""The ticket's rules, as Casdoor's ticket API has them (docs/extending.md, "The tickets extension"):

- who: an ordinary user reads, opens and updates only their own tickets (the kind's
  `user_attr`, core/policy.py); their organization's admins all of its tickets; only admins
  delete one;
- the user of a new ticket is the signed-in user who opens it; an admin (or an application's
  client, which has no user of its own) may open one for a user of the organization by naming
  them, checked as a reference (Casdoor makes every new ticket its opener's);
- an ordinary user changes the title and content of their ticket, and its state only to
  Closed; its name, user and organization stay;
- the state is one of Open, In Progress, Resolved and Closed;
- the thread (messages) grows only through add-ticket-message, which sets each message's
  author, time and admin flag itself (service.py); saving stamps the updated time.
"""

from __future__ import annotations

from sqlmodel import Session

from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import Choice, KindRules
from iam_console.models.base import utcnow

from .models import Ticket

OPEN, IN_PROGRESS, RESOLVED, CLOSED = "Open", "In Progress", "Resolved", "Closed"
STATES = (OPEN, IN_PROGRESS, RESOLVED, CLOSED)


def before_save(db: Session, actor: Actor, old: Ticket | None, row: Ticket, changed: set[str]) -> None:
    row.updated_time = utcnow()
    if old is None:
        row.messages = []
        if actor.user is not None and not (actor.is_admin and row.user):
            row.user = actor.id
        row.state = row.state or OPEN
        return
    row.messages = list(old.messages or [])
    if actor.is_admin:
        return
    if row.name != old.name:
        raise ServiceError("Only an admin can rename a ticket")
    if row.state != old.state and row.state != CLOSED:
        raise ServiceError("A user can only close their ticket, not set its state to %s", row.state[:50])


def validate(db: Session, actor: Actor, row: Ticket) -> None:
    if not row.state:
        raise ServiceError("The state cannot be empty")


def new(db: Session, actor: Actor, owner: str, suffix: str) -> dict:
    return {"displayName": f"New Ticket - {suffix}", "title": "", "content": "", "state": OPEN, "messages": []}


RULES = KindRules(choices=(Choice("state", STATES),), validate=validate, before_save=before_save, new=new)
