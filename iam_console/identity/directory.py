"""Directory tables: groups, invitations and LDAP servers."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import (
    Named,
    json_dict,
    json_list,
    moment,
    named_keys,
    text,
)


class Group(Named, table=True):
    __tablename__ = "group"
    __table_args__ = named_keys(
        "group",
        # the tree and the "has children" check look groups up by parent
        sa.Index("ix_group_owner_parent", "owner", "parent_id"),
    )

    updated_time: datetime | None = moment()
    external_id: str = text(100)  # a SCIM client's id of the group (docs/api.md, "SCIM 2.0")
    display_name: str = text(100)
    manager: str = text(100)
    contact_email: str = text(255)
    type: str = text(100)  # Virtual or Physical
    parent_id: str = text(100)  # a group name, or the organization name for top groups
    is_top_group: bool = False
    is_enabled: bool = False
    gid_number: int = 0
    properties: dict[str, Any] = json_dict()

    # Response-only in Casdoor (derived from users and the group tree on read);
    # kept as columns so every wire key exists, never the source of truth.
    parent_name: str = text(100)
    users: list[Any] = json_list()
    title: str = text(100)
    key: str = text(100)
    have_children: bool = False
    children: list[Any] = json_list()


class Invitation(Named, table=True):
    __tablename__ = "invitation"
    __table_args__ = named_keys(
        "invitation",
        # signup resolves an invitation by its code
        sa.Index("ix_invitation_owner_code", "owner", "code"),
    )

    updated_time: datetime | None = moment()
    display_name: str = text(100)
    code: str = text(100)
    is_regexp: bool = False
    quota: int = 0
    used_count: int = 0
    application: str = text(100)
    username: str = text(100)
    email: str = text(255)
    phone: str = text(100)
    signup_group: str = text(200)  # owner/name of a group
    default_code: str = text(100)
    state: str = text(100)  # Active or Suspended
    tag: str = text(100)


class Ldap(Named, table=True):
    """An LDAP server; Casdoor identifies it by `id`, kept here in `name`."""

    __tablename__ = "ldap"
    __table_args__ = named_keys("ldap")
    json_secrets: ClassVar[frozenset[str]] = frozenset({"password"})

    json_aliases: ClassVar[dict[str, str]] = {"name": "id"}

    server_name: str = text(100)
    host: str = text(255)
    port: int = Field(default=389)
    enable_ssl: bool = False
    allow_self_signed_cert: bool = False
    username: str = text(255)  # bind DN
    password: str = text(255)
    base_dn: str = text(255)
    filter: str = text(500)
    filter_fields: list[str] = json_list()
    default_group: str = text(200)  # owner/name of a group
    default_groups: list[str] = json_list()
    password_type: str = text(100)  # Plain, SSHA, MD5
    custom_attributes: dict[str, Any] = json_dict()
    auto_sync: int = 0  # minutes; 0 disables
    last_sync: datetime | None = moment()
    enable_groups: bool = False
