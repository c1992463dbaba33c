"""Who may read and write which records: every access rule, in one place.

- global admin (an admin of the built-in organization) and application
  clients: everything;
- organization admin: the records of their own organization; shared records
  (providers and certs owned by 'admin') read-only; never moves a record to
  another owner;
- ordinary user: their own account, their organization and its applications
  (read), the permissions they submitted, and the records of a kind declaring
  `user_attr` that name them (an extension's tickets);
- anonymous: nothing here ('Please login first').
"""

from __future__ import annotations

import sqlalchemy as sa

from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError, Unauthorized
from iam_console.core.resources import Kind, Ownership, organization_of
from iam_console.models import Named

UNAUTHORIZED = "Unauthorized operation"


def _deny() -> ServiceError:
    return ServiceError(UNAUTHORIZED)


def require_user(actor: Actor) -> None:
    """A signed-in user (not an application client)."""
    if actor.is_anonymous:
        raise Unauthorized()
    if actor.user is None:
        raise _deny()


def require_admin(actor: Actor) -> None:
    if actor.is_anonymous:
        raise Unauthorized()
    if not actor.is_admin:
        raise _deny()


def require_global_admin(actor: Actor) -> None:
    """The built-in organization's admins (and its applications' clients): what is about the
    whole server (the host's figures, its metrics) is no single organization's."""
    if actor.is_anonymous:
        raise Unauthorized()
    if not actor.is_global_admin:
        raise _deny()


def _user_scope(actor: Actor, kind: Kind) -> list[sa.ColumnElement]:
    """What an ordinary user may read, by kind."""
    model, org = kind.model, actor.organization
    if kind.name == "user":
        return [model.owner == org, model.name == actor.name]
    if kind.name == "organization":
        return [model.name == org]
    if kind.name == "application":
        return [model.organization == org]
    if kind.name == "permission":
        return [model.owner == org, model.submitter == actor.name]
    if kind.name == "session":
        return [model.owner == org, model.name == actor.name]
    if kind.user_attr:
        return [model.owner == org, getattr(model, kind.user_attr) == actor.id]
    raise _deny()


def read_scope(actor: Actor, kind: Kind, owner: str = "", organization: str = "") -> list[sa.ColumnElement]:
    """WHERE clauses limiting a read to what the actor may see; `owner` and
    `organization` are the caller's own filters (Casdoor's query parameters)."""
    if actor.is_anonymous:
        raise Unauthorized()
    model = kind.model
    org_column = getattr(model, kind.organization_attr)
    if actor.is_global_admin:
        clauses = []
        if kind.ownership is Ownership.SHARED and owner and owner != b.ADMIN_OWNER:
            clauses.append(model.owner.in_((owner, b.ADMIN_OWNER)))
        elif kind.ownership is not Ownership.ADMIN and owner:
            clauses.append(model.owner == owner)
        if kind.ownership is Ownership.ADMIN and organization:
            clauses.append(org_column == organization)
        return clauses
    org = actor.organization
    if kind.ownership is Ownership.ADMIN:
        asked = organization or (owner if owner != b.ADMIN_OWNER else "")
    else:
        asked = owner or organization
    if asked and asked != org and not (kind.ownership is Ownership.SHARED and asked == b.ADMIN_OWNER):
        raise _deny()
    if not actor.is_org_admin:
        return _user_scope(actor, kind)
    if kind.ownership is Ownership.SHARED:
        # their own records with the shared ones, or only the shared ones when asked for 'admin'
        return [model.owner == b.ADMIN_OWNER] if asked == b.ADMIN_OWNER else [model.owner.in_((org, b.ADMIN_OWNER))]
    return [org_column == org]


def owner_only_scope(actor: Actor, kind: Kind, owner: str = "") -> tuple[bool, str | None]:
    """Whether read_scope comes down to `owner == X` (X None: no filter at all),
    so that a list's total can come from the maintained counts."""
    if kind.ownership is not Ownership.ORGANIZATION or not actor.is_admin:
        return False, None
    if actor.is_global_admin:
        return True, owner or None
    return True, actor.organization


def check_write(actor: Actor, kind: Kind, old: Named | None, new: Named | None) -> None:
    """Refuse an add (old None), update or delete (new None) the actor may not make."""
    if actor.is_anonymous:
        raise Unauthorized()
    if not kind.writable:
        raise _deny()
    if actor.is_global_admin:
        return
    if old is not None and new is not None and old.owner != new.owner:
        raise ServiceError("Only a global admin may change the owner")
    if actor.is_org_admin:
        _check_org_admin_write(actor, kind, old, new)
        return
    _check_user_write(actor, kind, old, new)


def allows(actor: Actor, kind: Kind, old: Named | None, new: Named | None) -> bool:
    """Whether check_write lets this add (old None), update or delete (new None) through: what
    the console offers the viewer (Add, Save, Delete) is what the server would accept."""
    try:
        check_write(actor, kind, old, new)
    except ServiceError:
        return False
    return True


def _check_org_admin_write(actor: Actor, kind: Kind, old: Named | None, new: Named | None) -> None:
    org = actor.organization
    if kind.name == "organization":
        # their own organization: editable, not renamable; adding or deleting one is for global admins
        if old is None or new is None or old.name != org or new.name != org:
            raise _deny()
        return
    for row in (old, new):
        if row is None:
            continue
        if kind.ownership is Ownership.ADMIN and row.owner != b.ADMIN_OWNER:
            raise _deny()
        if organization_of(kind, row) != org:
            raise _deny()  # includes shared records (owner 'admin'): read-only to them


NOT_THEIR_PERMISSION = "A normal user can only modify the permission submitted by itself"


def out_of_reach_write(actor: Actor, kind: Kind) -> str:
    """Why the actor may not write a record of their own organization that they cannot see, where
    that is worth saying ("" answers it as a missing one): a normal user's permissions are the
    ones they submitted."""
    if kind.name == "permission" and not actor.is_anonymous and not actor.is_admin and actor.user is not None:
        return NOT_THEIR_PERMISSION
    return ""


def _check_user_write(actor: Actor, kind: Kind, old: Named | None, new: Named | None) -> None:
    org, me = actor.organization, actor.name
    if kind.name == "user":
        # only their own account, only updated (which fields: see identity/accounts.py)
        if old is None or new is None or (old.owner, old.name) != (org, me) or (new.owner, new.name) != (org, me):
            raise _deny()
        return
    if kind.name == "permission":
        for row in (old, new):
            # a new request naming no submitter is theirs (authorization/kinds/permission.py fills it in)
            theirs = row is not None and (row.submitter == me or (old is None and not row.submitter))
            if row is not None and (row.owner != org or not theirs):
                raise ServiceError(NOT_THEIR_PERMISSION)
        return
    if kind.user_attr and new is not None:
        for row in (old, new):
            # a new record naming no one is theirs (the kind's rules fill the user in)
            named = None if row is None else getattr(row, kind.user_attr)
            if row is not None and (row.owner != org or not (named == actor.id or (old is None and not named))):
                raise _deny()
        return
    raise _deny()
