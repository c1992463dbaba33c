"""A global admin acting as another user from the console (Casdoor's impersonate-user).

Impersonation opens a console session of the target user that names its impersonator;
the admin's own session lives on, its cookie kept aside by the browser, and exit closes
the impersonation and gives it back. Only a global admin signed in to the console may
start one (never a token, key or client), never as another global admin, for at most
IMPERSONATION_HOURS and never beyond the admin's own session; both ends are recorded."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlmodel import Session

from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import lookup, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.models import AuthSession, User
from iam_console.models.base import utcnow
from iam_console.signin import auth

IMPERSONATION_HOURS = 1


@dataclass(frozen=True)
class Started:
    token: str  # the impersonation session's cookie value
    user_id: str


def impersonable(target: User) -> bool:
    """Whether a global admin may act as this account (the console shows Impersonate for it):
    a live account that is not itself a global admin."""
    return not (target.is_deleted or target.is_forbidden or (target.is_admin and target.owner == b.BUILT_IN_ORG))


def start(db: Session, actor: Actor, own_token: str, owner: str, name: str, client_ip: str = "") -> Started:
    policy.require_user(actor)
    found = auth.account_for_token(db, own_token)
    if found is None or not actor.session_id:
        raise ServiceError("Impersonation starts from a console session")
    admin, own = found
    if own.impersonator or not actor.is_global_admin or (admin.owner, admin.name) != (actor.user.owner,
                                                                                       actor.user.name):
        raise ServiceError(policy.UNAUTHORIZED)
    target = lookup.user(db, owner, name)
    if target is None or target.is_deleted or target.is_forbidden:
        raise ServiceError("The user: %s/%s doesn't exist", owner[:100], name[:100])
    if not impersonable(target):
        raise ServiceError("A global admin cannot be impersonated")
    now = utcnow()
    token = secrets.token_urlsafe(32)
    impersonator = f"{admin.owner}/{admin.name}"
    db.add(AuthSession(token_hash=auth.hash_token(token), session_id=secrets.token_hex(16), owner=target.owner,
                       user_name=target.name, application=own.application, client_ip=client_ip[:100],
                       expires_at=min(own.expires_at, now + timedelta(hours=IMPERSONATION_HOURS)),
                       impersonator=impersonator))
    audit(db, organization=admin.owner, user=impersonator, action="impersonate-user",
          request_uri="/api/impersonate-user", client_ip=client_ip, obj={"owner": target.owner, "name": target.name})
    return Started(token, f"{target.owner}/{target.name}")


def exit_(db: Session, token: str, admin_token: str, client_ip: str = "") -> str:
    """Close the impersonation behind `token`; the impersonator's id. `admin_token` must be
    the impersonator's own live session, which the browser gets back."""
    found = auth.account_for_token(db, token)
    if found is None or not found[1].impersonator:
        raise ServiceError("You are not impersonating anyone")
    user, row = found
    own = auth.account_for_token(db, admin_token)
    if own is None or f"{own[0].owner}/{own[0].name}" != row.impersonator:
        raise ServiceError("The session to return to has ended: please sign in again")
    auth.close_session(db, row)
    audit(db, organization=own[0].owner, user=row.impersonator, action="exit-impersonate-user",
          request_uri="/api/exit-impersonate-user", client_ip=client_ip,
          obj={"owner": user.owner, "name": user.name})
    return row.impersonator
