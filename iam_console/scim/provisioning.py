"""The SCIM services: list, read, create, replace, patch and delete the users and groups of the
caller's organization (docs/api.md, "SCIM 2.0"; docs/security.md, "SCIM").

The caller is an application's client (a client_credentials token, api.py): it acts within the
application's organization and nowhere else, a built-in application's client included (SCIM's
paths name no organization). Every write goes through core/crud.py as the API's does, with the
users' and groups' rules, an audit record and its webhooks; a membership is the user's `groups`
list, so adding or removing a member updates that user. Refusals are SCIM's exceptions
(scim2-models), which api.py answers as SCIM error bodies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from pydantic import ValidationError
from scim2_models import (
    Context,
    Error,
    ForbiddenException,
    InvalidValueException,
    NotFoundException,
    PatchOp,
    PreconditionFailedException,
    SCIMException,
    SearchRequest,
    TooManyException,
    UniquenessException,
)
from sqlmodel import Session, func, select

from iam_console import models as m
from iam_console.core import crud, policy, query
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.identity import groups, users
from iam_console.scim import filters, mapping
from iam_console.scim.schema import MAX_COUNT, MAX_MEMBERS, PROVIDER, Group, UserResource

DEFAULT_COUNT = 100


@dataclass(frozen=True)
class Listing:
    total: int
    start: int
    resources: list[Any]


class Refused(SCIMException):
    """A SCIM error carried as is (one pydantic's validation of a request turned into)."""

    def __init__(self, error: Error) -> None:
        super().__init__(detail=error.detail)
        self._error = error


def organization_of(actor: Actor) -> str:
    """The organization a SCIM caller provisions: its application's."""
    if not actor.is_app:
        raise ForbiddenException(detail="SCIM takes an access token of an application's client_credentials grant")
    return actor.organization


@contextmanager
def _as_scim() -> Iterator[None]:
    """A refusal of the users' and groups' rules, or a request's validation, as a SCIM error."""
    try:
        yield
    except ValidationError as exc:
        raise Refused(Error.from_validation_errors(exc)[0]) from None
    except ServiceError as exc:
        raise InvalidValueException(detail=str(exc)) from None


def _validated(model: type, body: Any, context: Context) -> Any:
    if not isinstance(body, dict):
        raise Refused(Error(status=400, scim_type="invalidSyntax", detail="The body must be a JSON object"))
    with _as_scim(), PROVIDER:
        return model.model_validate(body, scim_ctx=context)


def _match(resource: Any, if_match: str) -> None:
    """If-Match (RFC 7644 §3.14): the resource's version, or `*`; weak comparison."""
    if not if_match:
        return
    tags = [tag.strip().removeprefix("W/") for tag in if_match.split(",")]
    if "*" not in tags and resource.meta.version.removeprefix("W/") not in tags:
        raise PreconditionFailedException(detail="The resource has changed: read it again (If-Match)")


# --- users ---

def _user_scope(actor: Actor, organization: str) -> list[sa.ColumnElement]:
    """The organization's users that exist (a soft-deleted one is gone for SCIM as for sign-in)."""
    return [*policy.read_scope(actor, REGISTRY["user"], organization), m.User.owner == organization,
            m.User.is_deleted == sa.false()]


def _user_row(db: Session, actor: Actor, organization: str, ident: str) -> m.User:
    row = db.exec(select(m.User).where(*_user_scope(actor, organization), m.User.uuid == ident)).first()
    if row is None:
        raise NotFoundException(detail=f"No user has the id {ident[:100]}")
    return row


def _memberships(db: Session, organization: str, rows: list[m.User]) -> dict[int, list[tuple[str, str]]]:
    """(name, display name) of each user's groups in its organization."""
    prefix = f"{organization}/"
    named = {row.pk: [g[len(prefix):] for g in row.groups if isinstance(g, str) and g.startswith(prefix)]
             for row in rows}
    wanted = {name for names in named.values() for name in names}
    shown = dict(db.exec(select(m.Group.name, m.Group.display_name).where(
        m.Group.owner == organization, m.Group.name.in_(wanted))).all()) if wanted else {}
    return {pk: [(name, shown[name]) for name in names if name in shown] for pk, names in named.items()}


def _users(db: Session, organization: str, rows: list[m.User]) -> list[UserResource]:
    memberships = _memberships(db, organization, rows)
    return [mapping.user_resource(row, memberships[row.pk]) for row in rows]


def _read_user(db: Session, actor: Actor, organization: str, ident: str) -> UserResource:
    return _users(db, organization, [_user_row(db, actor, organization, ident)])[0]


def _check_password(db: Session, organization: str, fields: dict[str, Any]) -> None:
    """A password a client sets passes set-password's checks (the organization's options)."""
    if "password" in fields:
        with _as_scim():
            users.check_new_password(db, organization, fields["password"])


def _save_user(db: Session, actor: Actor, organization: str, row: m.User, fields: dict[str, Any],
               request: crud.Request) -> None:
    if fields.get("name") != row.name and crud.exists(db, REGISTRY["user"], organization, fields["name"]):
        raise UniquenessException(detail=f"The userName {fields['name'][:100]} is taken")
    _check_password(db, organization, fields)
    with _as_scim():
        crud.update_record(db, actor, REGISTRY["user"], organization, row.name, fields, request)


def _active(body: Any, default: bool) -> Any:
    """`active` is required (never unassigned): a body leaving it out makes a new user active and
    keeps a replaced user's as it is."""
    if isinstance(body, dict) and not any(isinstance(key, str) and key.lower() == "active" for key in body):
        return {**body, "active": default}
    return body


def create_user(db: Session, actor: Actor, body: Any, request: crud.Request) -> UserResource:
    organization = organization_of(actor)
    resource = _validated(UserResource, _active(body, True), Context.RESOURCE_CREATION_REQUEST)
    with _as_scim():
        fields = {**mapping.user_fields(resource), "owner": organization}
    if crud.exists(db, REGISTRY["user"], organization, fields["name"]):
        raise UniquenessException(detail=f"The userName {fields['name'][:100]} is taken")
    _check_password(db, organization, fields)
    with _as_scim():
        crud.add_record(db, actor, REGISTRY["user"], fields, request)
    row = db.exec(select(m.User).where(m.User.owner == organization, m.User.name == fields["name"])).one()
    return _read_user(db, actor, organization, row.uuid)


def replace_user(db: Session, actor: Actor, ident: str, body: Any, if_match: str,
                 request: crud.Request) -> UserResource:
    organization = organization_of(actor)
    row = _user_row(db, actor, organization, ident)
    _match(_users(db, organization, [row])[0], if_match)
    resource = _validated(UserResource, _active(body, not row.is_forbidden), Context.RESOURCE_REPLACEMENT_REQUEST)
    _save_user(db, actor, organization, row, mapping.user_fields(resource), request)
    return _read_user(db, actor, organization, ident)


def patch_user(db: Session, actor: Actor, ident: str, body: Any, if_match: str,
               request: crud.Request) -> UserResource:
    organization = organization_of(actor)
    row = _user_row(db, actor, organization, ident)
    resource = _users(db, organization, [row])[0]
    _match(resource, if_match)
    operations = _validated(PatchOp[UserResource], body, Context.RESOURCE_PATCH_REQUEST)
    with _as_scim(), PROVIDER:
        operations.patch(resource)
    _save_user(db, actor, organization, row, mapping.user_fields(resource), request)
    return _read_user(db, actor, organization, ident)


def delete_user(db: Session, actor: Actor, ident: str, if_match: str, request: crud.Request) -> None:
    organization = organization_of(actor)
    row = _user_row(db, actor, organization, ident)
    _match(_users(db, organization, [row])[0], if_match)
    with _as_scim():
        crud.delete_record(db, actor, REGISTRY["user"], organization, row.name, request)


# --- groups ---

def _group_scope(actor: Actor, organization: str) -> list[sa.ColumnElement]:
    return [*policy.read_scope(actor, REGISTRY["group"], organization), m.Group.owner == organization]


def _group_row(db: Session, actor: Actor, organization: str, ident: str) -> m.Group:
    row = db.exec(select(m.Group).where(*_group_scope(actor, organization), m.Group.name == ident)).first()
    if row is None:
        raise NotFoundException(detail=f"No group has the id {ident[:100]}")
    return row


def _member_rows(organization: str, group: str) -> Any:
    return select(m.User).where(m.User.owner == organization, m.User.is_deleted == sa.false(),
                                groups.member_filter(organization, group).clause)


def _membership(db: Session, organization: str, group: str) -> tuple[int, str]:
    """How many users the group holds, and the latest change of one of them."""
    members = groups.member_filter(organization, group).clause
    count, latest = db.exec(select(func.count(), func.max(m.User.updated_time)).where(
        m.User.owner == organization, m.User.is_deleted == sa.false(), members)).one()
    return count, str(latest)


def _group(db: Session, organization: str, row: m.Group, listed: bool = True) -> Group:
    """The group as a resource, its members `listed` (up to MAX_MEMBERS) or not."""
    members = db.exec(select(m.User.uuid, m.User.display_name).where(
        m.User.owner == organization, m.User.is_deleted == sa.false(),
        groups.member_filter(organization, row.name).clause).order_by(m.User.pk).limit(MAX_MEMBERS)).all() \
        if listed else None
    return mapping.group_resource(row, members, _membership(db, organization, row.name))


def _writable_group(db: Session, organization: str, row: m.Group) -> Group:
    """The group as a write starts from: all its members listed, or a refusal."""
    resource = _group(db, organization, row)
    if len(resource.members or ()) >= MAX_MEMBERS and _membership(db, organization, row.name)[0] > MAX_MEMBERS:
        raise TooManyException(detail=f"The group has more than {MAX_MEMBERS} members: "
                                      "change them through the users (update-user)")
    return resource


def members_shown(params: Any) -> bool:
    """Whether an answer with these attributes/excludedAttributes shows the members of a group."""
    def named(paths: Any) -> bool:
        return any(str(path).lower().rsplit(":", 1)[-1].split(".")[0].split("[")[0] == "members"
                   for path in paths or ())
    if params is None:
        return True
    if params.attributes:
        return named(params.attributes)
    return not named(params.excluded_attributes)


def _set_members(db: Session, actor: Actor, organization: str, group: str, before: list[str], after: list[str],
                 request: crud.Request) -> None:
    """Each user joining or leaving is updated (its `groups` list), through update-user's rules."""
    entry = f"{organization}/{group}"
    joining, leaving = [i for i in after if i not in before], [i for i in before if i not in after]
    if not joining and not leaving:
        return
    rows = db.exec(select(m.User).where(*_user_scope(actor, organization),
                                        m.User.uuid.in_(joining + leaving))).all()
    found = {row.uuid: row for row in rows}
    missing = [i for i in joining if i not in found]
    if missing:
        raise InvalidValueException(detail=f"members: no user has the id {missing[0][:100]}")
    for ident in joining + leaving:
        row = found.get(ident)
        if row is None:
            continue
        kept = [g for g in row.groups if g not in (entry, group)]
        listed = [*kept, entry] if ident in joining else kept
        with _as_scim():
            crud.update_record(db, actor, REGISTRY["user"], organization, row.name, {"groups": listed}, request)


def _save_group(db: Session, actor: Actor, organization: str, row: m.Group, resource: Group, before: list[str],
                request: crud.Request) -> None:
    with _as_scim():
        crud.update_record(db, actor, REGISTRY["group"], organization, row.name, mapping.group_fields(resource),
                           request)
        after = mapping.member_ids(resource)
    _set_members(db, actor, organization, row.name, before, after, request)


def create_group(db: Session, actor: Actor, body: Any, request: crud.Request) -> Group:
    organization = organization_of(actor)
    resource = _validated(Group, body, Context.RESOURCE_CREATION_REQUEST)
    name = mapping.group_name(resource.display_name or "")
    if crud.exists(db, REGISTRY["group"], organization, name):
        raise UniquenessException(detail=f"A group is named {name[:100]} already")
    fields = {**mapping.group_fields(resource), "owner": organization, "name": name, "type": "Virtual",
              "isEnabled": True, "parentId": organization}
    with _as_scim():
        members = mapping.member_ids(resource)
        crud.add_record(db, actor, REGISTRY["group"], fields, request)
    _set_members(db, actor, organization, name, [], members, request)
    return _group(db, organization, _group_row(db, actor, organization, name))


def replace_group(db: Session, actor: Actor, ident: str, body: Any, if_match: str, request: crud.Request) -> Group:
    organization = organization_of(actor)
    row = _group_row(db, actor, organization, ident)
    current = _writable_group(db, organization, row)
    _match(current, if_match)
    resource = _validated(Group, body, Context.RESOURCE_REPLACEMENT_REQUEST)
    _save_group(db, actor, organization, row, resource, mapping.member_ids(current), request)
    return _group(db, organization, _group_row(db, actor, organization, ident))


def patch_group(db: Session, actor: Actor, ident: str, body: Any, if_match: str, request: crud.Request) -> Group:
    organization = organization_of(actor)
    row = _group_row(db, actor, organization, ident)
    resource = _writable_group(db, organization, row)
    _match(resource, if_match)
    before = mapping.member_ids(resource)
    operations = _validated(PatchOp[Group], body, Context.RESOURCE_PATCH_REQUEST)
    with _as_scim(), PROVIDER:
        operations.patch(resource)
    _save_group(db, actor, organization, row, resource, before, request)
    return _group(db, organization, _group_row(db, actor, organization, ident))


def delete_group(db: Session, actor: Actor, ident: str, if_match: str, request: crud.Request) -> None:
    """The group's members leave it first (as Casdoor's SCIM server does), then it goes."""
    organization = organization_of(actor)
    row = _group_row(db, actor, organization, ident)
    _match(_group(db, organization, row, listed=False), if_match)
    while True:  # in batches: a group may be large
        members = db.exec(_member_rows(organization, row.name).order_by(m.User.pk).limit(MAX_MEMBERS)).all()
        if not members:
            break
        _set_members(db, actor, organization, row.name, [u.uuid for u in members], [], request)
    with _as_scim():
        crud.delete_record(db, actor, REGISTRY["group"], organization, row.name, request)


# --- reads ---

ENDPOINTS = {"Users": (UserResource, m.User, filters.USER_FIELDS), "Groups": (Group, m.Group, filters.GROUP_FIELDS)}


def search_request(endpoint: str, values: Any) -> SearchRequest:
    """The query of a list (the URL's parameters, or a POST /.search body), validated."""
    resource = ENDPOINTS[endpoint][0]
    return _validated(SearchRequest[resource], values, Context.SEARCH_REQUEST)


def search(db: Session, actor: Actor, endpoint: str, request: SearchRequest) -> Listing:
    """One page of the organization's users or groups matching the filter, in the asked order."""
    organization = organization_of(actor)
    resource, model, fields = ENDPOINTS[endpoint]
    target = filters.Target(resource, model, fields, organization, db.get_bind().dialect.name)
    scope = _user_scope(actor, organization) if model is m.User else _group_scope(actor, organization)
    where = [*scope, *filters.where(str(request.filter or ""), target)]
    start = request.start_index or 1
    count = min(MAX_COUNT, DEFAULT_COUNT if request.count is None else request.count)
    if count == 0:
        return Listing(db.exec(select(func.count()).select_from(model).where(*where)).one(), start, [])
    order = "descend" if request.sort_order and request.sort_order.value == "descending" else "ascend"
    listed = query.ListQuery(page_size=count, start=start, sort_field=filters.sort_field(
        str(request.sort_by or ""), target) or "createdTime", sort_order=order)
    page = query.run(db, model, where, listed)
    if model is m.User:
        return Listing(page.total or 0, start, _users(db, organization, page.rows))
    listed = members_shown(request)
    return Listing(page.total or 0, start, [_group(db, organization, row, listed) for row in page.rows])


def read(db: Session, actor: Actor, endpoint: str, ident: str, params: Any = None) -> Any:
    """One user or group; `params`, the attributes asked for, may leave a group's members unread."""
    organization = organization_of(actor)
    if endpoint == "Users":
        return _read_user(db, actor, organization, ident)
    return _group(db, organization, _group_row(db, actor, organization, ident), members_shown(params))
