"""Our users and groups as SCIM resources and back (docs/api.md, "SCIM 2.0", gives the table).

A resource is read from the row; what a client writes becomes the wire object (Casdoor's
camelCase keys) that add-user and update-user take, so that it passes their rules. The resource's
`meta.version` is a weak ETag of what the resource shows: it changes whenever the resource does."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from datetime import datetime
from typing import Any

from scim2_models import Context, InvalidValueException, Meta

from iam_console import models as m
from iam_console.scim.schema import (
    Email,
    EnterpriseUser,
    Group,
    GroupMember,
    GroupMembership,
    Name,
    PhoneNumber,
    Photo,
    UserResource,
)
from iam_console.settings import settings

BASE_PATH = "/scim/v2"
NAME_LENGTH = 100


def location(endpoint: str, ident: str) -> str:
    """Where a resource is: always under IAM_ORIGIN's /scim/v2, never the request's Host."""
    return f"{settings.origin}{BASE_PATH}/{endpoint}/{ident}"


def _meta(resource: Any, kind: str, ident: str, row: m.Named, changed: datetime | None, basis: Any) -> None:
    """meta, its version a weak ETag of `basis`: what the resource shows, or what it is made of."""
    digest = hashlib.sha256(json.dumps([basis, str(changed)], sort_keys=True, default=str).encode()).hexdigest()
    resource.meta = Meta(resource_type=kind, created=row.created_time, last_modified=changed or row.created_time,
                         location=location(f"{kind}s", ident), version=f'W/"{digest[:24]}"')


def _one(value: str, kind: type) -> list | None:
    return [kind(value=value)] if value else None


def user_resource(row: m.User, groups: Iterable[tuple[str, str]]) -> UserResource:
    """The user as a resource; `groups`: (name, display name) of its groups in its organization."""
    resource = UserResource(
        id=row.uuid, external_id=row.external_id or None, user_name=row.name,
        name=Name(given_name=row.first_name or None, family_name=row.last_name or None)
        if row.first_name or row.last_name else None,
        display_name=row.display_name or None, profile_url=row.homepage or None, title=row.title or None,
        user_type=row.type or None, active=not row.is_forbidden,
        emails=_one(row.email, Email), phone_numbers=_one(row.phone, PhoneNumber), photos=_one(row.avatar, Photo),
        groups=[GroupMembership(value=name, ref=location("Groups", name), display=display or name)
                for name, display in groups] or None,
    )
    if row.affiliation:
        resource[EnterpriseUser] = EnterpriseUser(organization=row.affiliation)
    _meta(resource, "User", row.uuid, row, row.updated_time,
          resource.model_dump(scim_ctx=Context.RESOURCE_QUERY_RESPONSE, mode="json"))
    return resource


def _single(values: list | None, attribute: str) -> str:
    """The one value a user keeps of a multi-valued attribute."""
    if not values:
        return ""
    if len(values) > 1:
        raise InvalidValueException(detail=f"{attribute}: a user has one value here, not {len(values)}")
    return str(values[0].value or "")


def user_fields(resource: UserResource) -> dict[str, Any]:
    """The wire object of what the resource says (every field it maps: an attribute it leaves out
    is cleared, as a PUT replaces), but the password, which is set when given and kept otherwise."""
    extension = resource[EnterpriseUser] or EnterpriseUser()
    name = resource.name or Name()
    fields: dict[str, Any] = {
        "name": resource.user_name or "", "externalId": resource.external_id or "",
        "firstName": name.given_name or "", "lastName": name.family_name or "",
        "displayName": resource.display_name or "", "homepage": str(resource.profile_url or ""),
        "title": resource.title or "", "type": resource.user_type or "",
        "email": _single(resource.emails, "emails"), "phone": _single(resource.phone_numbers, "phoneNumbers"),
        "avatar": _single(resource.photos, "photos"), "affiliation": extension.organization or "",
        "isForbidden": resource.active is False,
    }
    if resource.password:
        fields["password"] = resource.password
    return fields


def group_name(display_name: str) -> str:
    """A new group's name, from its display name (as Casdoor's SCIM server names it): names hold no
    "/" and start with no blank."""
    return display_name.replace("/", "-").lstrip()[:NAME_LENGTH]


def group_resource(row: m.Group, members: Iterable[tuple[str, str]] | None, membership: tuple) -> Group:
    """The group as a resource; `members`: (id, display name) of its users, or None to leave them out
    (a list that excludes them reads no member). Its version is made of its fields and `membership`,
    a fingerprint of its members (how many, their latest change: a user joining or leaving is
    changed), so that it is the same whether the members are listed or not."""
    resource = Group(
        id=row.name, external_id=row.external_id or None, display_name=row.display_name or row.name,
        members=[GroupMember(value=ident, ref=location("Users", ident), type="User", display=display or None)
                 for ident, display in members or ()] or None,
    )
    _meta(resource, "Group", row.name, row, row.updated_time,
          [row.name, row.display_name, row.external_id, *membership])
    return resource


def group_fields(resource: Group) -> dict[str, Any]:
    return {"displayName": resource.display_name or "", "externalId": resource.external_id or ""}


def member_ids(resource: Group) -> list[str]:
    """The users a group resource lists, by id (a member that is a group is refused)."""
    found = []
    for member in resource.members or []:
        if member.type not in (None, "User"):
            raise InvalidValueException(detail="members: only users are members of a group here")
        if not member.value:
            raise InvalidValueException(detail="members: each member needs its value, the user's id")
        found.append(member.value)
    return list(dict.fromkeys(found))
