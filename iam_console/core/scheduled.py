"""What every scheduled run shares (the LDAP auto sync, syncers): claiming a run, and the caller
it acts as."""

from __future__ import annotations

from datetime import datetime

from sqlmodel import Session, update

from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.core.access import Actor


def claim(db: Session, model, pk: int, last: datetime | None, now: datetime) -> bool:
    """Take one run of the row `pk` of `model` (a table with `last_sync`): a conditional UPDATE
    moving lastSync from the value read to now. Of several workers (or servers) that read the same
    value, one changes the row; the others match nothing and leave the run to it."""
    unchanged = model.last_sync.is_(None) if last is None else model.last_sync == last
    done = db.exec(update(model).where(model.pk == pk, unchanged).values(last_sync=now))
    db.commit()
    return done.rowcount == 1


def system_actor(db: Session) -> Actor:
    """A scheduled run acts as the built-in application (a global caller), as Casdoor's do."""
    return Actor(application=lookup.application(db, b.BUILT_IN_APP))
