"""What users have beyond CRUD: passwords, counts, sorted lists, groups."""

from __future__ import annotations

import re
import uuid

from sqlmodel import Session, func, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import counts, crud, lookup, policy, query
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request, present
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity import accounts
from iam_console.oauth import jwt_tokens
from iam_console.signin import auth

# organization password options -> (regex the password must match, message). One regex for two
# engines: the server checks it here (re) and the console's password dialog runs it in the browser
# as a live hint (RegExp, "u" flag), so it keeps to what both read alike.
PASSWORD_OPTIONS = {
    "AtLeast6": (r"^[\s\S]{6,}$", "The password must have at least 6 characters"),
    "AtLeast8": (r"^[\s\S]{8,}$", "The password must have at least 8 characters"),
    "Aa123": (r"^(?=[\s\S]*[a-z])(?=[\s\S]*[A-Z])(?=[\s\S]*[0-9])",
              "The password must contain at least one uppercase letter, one lowercase letter and one digit"),
    "SpecialChar": (r"[^A-Za-z0-9]", "The password must contain at least one special character"),
    "NoRepeat": (r"^(?![\s\S]*(.)\1)", "The password must not contain any repeated characters"),
}
DEFAULT_OPTIONS = ["AtLeast6"]


def password_rules(organization: m.Organization | None) -> list[tuple[str, str]]:
    """(regex, message) of the organization's password options, in their order."""
    options = (organization.password_options if organization else None) or DEFAULT_OPTIONS
    return [PASSWORD_OPTIONS[option] for option in options if option in PASSWORD_OPTIONS]


def check_password_options(organization: m.Organization | None, password: str) -> None:
    """The first option the password breaks, as an error."""
    for pattern, message in password_rules(organization):
        if not re.search(pattern, password):
            raise ServiceError(message)


def _check_new_password(organization: m.Organization, password: str) -> None:
    """What a new password must pass: the organization's options, then the Password item's regex."""
    check_password_options(organization, password)
    pattern = accounts.item_patterns(organization).get("Password")
    if pattern:
        accounts.check_pattern(pattern, password, "Password")


def check_new_password(db: Session, owner: str, password: str) -> None:
    """set-password's checks of the new password alone (the forget flow's, before it spends the code)."""
    organization = lookup.organization(db, owner)
    if organization is None:
        raise ServiceError("organization is null")
    _check_new_password(organization, password)


def _user(db: Session, actor: Actor, owner: str, name: str) -> m.User:
    scope = policy.read_scope(actor, REGISTRY["user"])
    user = db.exec(select(m.User).where(m.User.owner == owner, m.User.name == name, *scope)).first()
    if user is None:
        raise ServiceError("The user: %s/%s doesn't exist", owner, name)
    return user


def set_password(db: Session, actor: Actor, owner: str, name: str, old: str, new: str,
                 request: Request = NO_REQUEST) -> None:
    """An admin of the user's organization sets it; the user changes it with the old one."""
    if not name or not new:
        raise ServiceError("Empty input!")
    user = _user(db, actor, owner, name)
    organization = lookup.organization(db, owner)
    if organization is None:
        raise ServiceError("organization is null")
    is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (owner, name)
    if not is_self and not actor.is_admin:
        raise ServiceError(policy.UNAUTHORIZED)
    # the old password is asked of everyone changing their own, except a global admin
    if user.password and is_self and not actor.is_global_admin:
        auth.check_password(db, user, organization, None, old)
    _check_new_password(organization, new)
    auth.change_password(db, user, organization, new, signed_in_as=user, keep_session=actor.session_id)
    user.need_update_password = False
    db.add(user)
    audit(db, organization=owner, user=actor.id, action="set-password", request_uri=request.uri,
          client_ip=request.client_ip, obj={"userOwner": owner, "userName": name})


def check_user_password(db: Session, actor: Actor, owner: str, name: str, password: str) -> None:
    """Raise unless the password is right (under the failed sign-in limit)."""
    user = _user(db, actor, owner, name)
    if user.is_forbidden or user.is_deleted:
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    auth.check_password(db, user, lookup.organization(db, owner), None, password)


def count(db: Session, actor: Actor, owner: str, online: bool | None) -> int:
    scope = policy.read_scope(actor, REGISTRY["user"], owner)
    plain, counted_owner = policy.owner_only_scope(actor, REGISTRY["user"], owner)
    if plain and online is None:
        return counts.total(db, "user", counted_owner)
    statement = select(func.count()).select_from(m.User).where(*scope)
    if online is not None:
        statement = statement.where(m.User.is_online == online)
    return db.exec(statement).one()


def sorted_users(db: Session, actor: Actor, owner: str, sorter: str, limit: int) -> list[dict]:
    scope = policy.read_scope(actor, REGISTRY["user"], owner)
    column = query.scalar_column(m.User, sorter or "createdTime", "sort")
    rows = db.exec(select(m.User).where(*scope).order_by(column.desc(), m.User.pk.desc())
                   .limit(max(1, min(limit, query.MAX_PAGE_SIZE))))
    return [present(actor, REGISTRY["user"], row) for row in rows]


def remove_from_group(db: Session, actor: Actor, owner: str, name: str, group: str,
                      request: Request = NO_REQUEST) -> str:
    user = _user(db, actor, owner, name)
    policy.require_admin(actor)
    kept = [g for g in user.groups if g not in (group, f"{owner}/{group}")]
    if kept == user.groups:
        return "Unaffected"
    user.groups = kept
    db.add(user)
    audit(db, organization=owner, user=actor.id, action="remove-user-from-group", request_uri=request.uri,
          client_ip=request.client_ip, obj={"owner": owner, "name": name, "groupName": group})
    return "Affected"


def add_keys(db: Session, actor: Actor, owner: str, name: str, request: Request = NO_REQUEST) -> tuple[str, str]:
    """add-user-keys: a new access key and secret, saved through update-user's rules (whoever may
    change the user's API key item: its admins, the user when the item is theirs to modify)."""
    key, secret = str(uuid.uuid4()), str(uuid.uuid4())
    if crud.update_record(db, actor, REGISTRY["user"], owner, name, {"accessKey": key, "accessSecret": secret},
                          request) != crud.AFFECTED:
        raise ServiceError("The user: %s/%s doesn't exist", owner, name)
    return key, secret


def roles_and_permissions(db: Session, actor: Actor, owner: str, name: str) -> tuple[list[str], list[str]]:
    """The names of the user's roles and permissions (read-only on the user page), as tokens carry them."""
    user = _user(db, actor, owner, name)
    roles = jwt_tokens.roles_of(db, user)
    return [r.name for r in roles], [p.name for p in jwt_tokens.permissions_of(db, user, roles)]




def group_choices(db: Session, actor: Actor, owner: str, typed: str, limit: int = 20) -> list[tuple[str, str]]:
    """(owner/name, type) of the organization's groups whose name contains `typed`, a page at most."""
    params = {"p": "1", "pageSize": str(limit), "sortField": "name", "sortOrder": "ascend"}
    if typed:
        params |= {"field": "name", "value": typed}
    page = crud.list_records(db, actor, REGISTRY["group"], params, owner=owner)
    return [(f"{g['owner']}/{g['name']}", g.get("type", "")) for g in page.rows]


def group_types(db: Session, actor: Actor, ids: list[str]) -> dict[str, str]:
    """{owner/name: type} of the listed groups the actor may read."""
    pairs = [tuple(i.split("/", 1)) for i in ids if isinstance(i, str) and i.count("/") == 1]
    if not pairs:
        return {}
    rows = db.exec(select(m.Group.owner, m.Group.name, m.Group.type).where(
        *policy.read_scope(actor, REGISTRY["group"]), query.named(m.Group, pairs))).all()
    return {f"{o}/{n}": t for o, n, t in rows}
