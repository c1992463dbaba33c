"""Organizations, applications and users by name: the lookups every service
makes, written once. Imports nothing but the models, so any module may use it."""

from __future__ import annotations

import time

from sqlmodel import Session, select

from iam_console.core import builtin as b
from iam_console.models import Application, Cert, Organization, User
from iam_console.models.base import detached_copy

# A session whose info holds a dict under this key remembers the organizations it
# read: bulk uploads ask once per organization, not once per row (identity/uploads.py).
ORGANIZATION_CACHE = "organizations"


def organization(db: Session, name: str) -> Organization | None:
    cache = db.info.get(ORGANIZATION_CACHE)
    if cache is not None and name in cache:
        return cache[name]
    found = db.exec(select(Organization).where(Organization.owner == b.ADMIN_OWNER,
                                               Organization.name == name)).first()
    if cache is not None and found is not None:
        cache[name] = found
    return found


def application(db: Session, name: str) -> Application | None:
    return db.exec(select(Application).where(Application.owner == b.ADMIN_OWNER,
                                             Application.name == name)).first()


def application_by_client_id(db: Session, client_id: str) -> Application | None:
    if not client_id or len(client_id) > 100:
        return None
    return db.exec(select(Application).where(Application.client_id == client_id)).first()


def user(db: Session, owner: str, name: str) -> User | None:
    return db.exec(select(User).where(User.owner == owner, User.name == name)).first()


# OAuth clients and their certs, remembered for a few seconds: token requests come
# in bursts and each would read both. A change made here is seen at once (forget()
# runs on every write to those kinds); other workers see it within this time.
REMEMBER_SECONDS = 5.0
_REMEMBERED_LIMIT = 1000
_remembered: dict[tuple[str, ...], tuple[float, Application | Cert]] = {}


def _remember(key: tuple[str, ...], load):
    now = time.monotonic()
    hit = _remembered.get(key)
    if hit is not None and hit[0] > now:
        return hit[1]
    found = load()
    if found is not None:
        if len(_remembered) >= _REMEMBERED_LIMIT:
            _remembered.clear()
        found = detached_copy(found)
        _remembered[key] = (now + REMEMBER_SECONDS, found)
    return found


def client_application(db: Session, client_id: str) -> Application | None:
    """application_by_client_id, remembered (read-only: never add the result to a session)."""
    return _remember(("client", client_id), lambda: application_by_client_id(db, client_id))


def signing_cert(db: Session, organization: str, name: str) -> Cert | None:
    """A cert of the organization's by name, else a shared one of that name (as an application's
    reference to it reads: core/references.py), remembered (read-only)."""
    return _remember(("cert", organization, name), lambda: db.exec(select(Cert).where(
        Cert.owner.in_((b.ADMIN_OWNER, organization)), Cert.name == name)
        .order_by((Cert.owner == organization).desc())).first())


def forget() -> None:
    _remembered.clear()
