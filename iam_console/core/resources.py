"""The registry: each resource kind declared once, by the extension that brings it
(iam_console/extension.py; the built-in kinds are `built_in_kinds` below).

A declaration says which table holds the kind, who owns its records and how
they are addressed; the generic services, the HTTP routes and the tests are
driven from here. The rules particular to a kind (defaults for new records,
validation, protections) are its extension's (the built-in ones in <feature>/kinds/<kind>.py)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.extension import Gathered


@dataclass(frozen=True)
class Ref:
    """A field of a record that names other records (core/references.py checks it on
    every write): they must exist in the record's own organization."""

    attribute: str
    target: str  # the kind it names
    form: str = "name"  # "name" within the organization, "id" owner/name, "either"
    key: str = ""  # a list of objects: the key holding the name
    shared: bool = False  # shared records (owner admin; for applications, shared ones) may be named too
    wildcard: bool = False  # "owner/*" names every record of the kind in the organization
    also: tuple[str, ...] = ()  # values that name nothing ("All")
    organization_itself: bool = False  # the organization's own name is accepted (a top group's parent)
    when: tuple[str, tuple[str, ...]] | None = None  # checked only while this attribute holds one of these
    # entries naming no record the organization may use are dropped on save by the kind's rules
    # (an application's providers), so the check never meets one
    dropped: bool = False


class Ownership(enum.Enum):
    ORGANIZATION = "organization"  # owner is the organization (users, roles, ...)
    ADMIN = "admin"  # owner is "admin"; a field names the organization (applications, ...)
    SHARED = "shared"  # owner is an organization, or "admin" for records every organization may use


@dataclass(frozen=True)
class Kind:
    name: str  # as in the routes: get-{name}s, get-{name}, add-{name}, ...
    model: type[m.Named]
    ownership: Ownership = Ownership.ORGANIZATION
    organization_attr: str = "owner"  # the attribute naming the organization a record belongs to
    plural: str = ""
    global_list: bool = False  # has get-global-{plural}
    writable: bool = True  # False: written only by the server itself (records, verifications)
    name_prefix: str = ""  # generated names: {prefix}_{random}
    find_by: dict[str, str] = field(default_factory=dict)  # get-X?owner=&{param}= -> attribute
    # False: records are not addressed by owner/name alone; the generic routes
    # serve only the list and a module of the kind's own serves the rest (sessions)
    named: bool = True
    references: tuple[Ref, ...] = ()  # fields naming other records
    counted: bool = False  # its rows per owner are counted by database triggers (core/counts.py)
    charted: bool = False  # a series of the dashboard's chart (home/dashboard.py)
    # the attribute naming the user a record is about, as owner/name (a ticket's user): an ordinary
    # user reads the records of their organization that name them, adds records naming them (or
    # no one: the kind's rules then fill it in) and updates their own, as far as the kind's rules
    # allow; deleting stays the admins' (core/policy.py, docs/security.md)
    user_attr: str = ""

    @property
    def plural_name(self) -> str:
        return self.plural or f"{self.name}s"


def built_in_kinds() -> tuple[Kind, ...]:
    """The built-in features' kinds (iam_console/features.py declares them)."""
    admin_owned = {"ownership": Ownership.ADMIN, "organization_attr": "organization"}
    user, users = Ref("user", "user"), Ref("users", "user", form="id")
    groups, roles = Ref("groups", "group", form="id"), Ref("roles", "role", form="id")
    application, provider = Ref("application", "application", shared=True), Ref("provider", "provider", shared=True)
    model, adapter = Ref("model", "model", form="either"), Ref("adapter", "adapter", form="either")
    return (
        Kind("organization", m.Organization, Ownership.ADMIN, "name", name_prefix="organization", charted=True),
        Kind("user", m.User, counted=True, charted=True, global_list=True, name_prefix="user",
             find_by={"email": "email", "phone": "phone", "userId": "uuid"},
             references=(groups, Ref("signup_application", "application", shared=True))),
        Kind("group", m.Group, counted=True, charted=True, name_prefix="group",
             references=(Ref("parent_id", "group", organization_itself=True), users, Ref("manager", "user"))),
        Kind("invitation", m.Invitation, counted=True, name_prefix="invitation",
             references=(Ref("application", "application", shared=True, also=("All",)),
                         Ref("signup_group", "group", form="id"))),
        Kind("ldap", m.Ldap, name_prefix="ldap", references=(Ref("default_group", "group", form="id"),)),
        Kind("application", m.Application, charted=True, **admin_owned, name_prefix="application",
             references=(Ref("cert", "cert", shared=True),
                         Ref("providers", "provider", key="name", shared=True, dropped=True),
                         Ref("default_group", "group", form="either"))),
        Kind("provider", m.Provider, Ownership.SHARED, global_list=True, name_prefix="provider", charted=True),
        Kind("cert", m.Cert, Ownership.SHARED, global_list=True, name_prefix="cert", charted=True),
        Kind("token", m.Token, **admin_owned, name_prefix="token", references=(application, user)),
        # a key's application is its own organization's: its client acts as that organization's admin
        Kind("key", m.Key, global_list=True, name_prefix="key",
             references=(Ref("application", "application"), user)),
        Kind("resource", m.Resource, counted=True, charted=True, name_prefix="resource",
             references=(user, application, provider)),
        Kind("session", m.Session, counted=True, named=False),
        Kind("record", m.Record, counted=True, writable=False),
        Kind("verification", m.Verification, counted=True, writable=False),
        Kind("role", m.Role, counted=True, charted=True, name_prefix="role", references=(users, groups, roles)),
        Kind("permission", m.Permission, counted=True, charted=True, name_prefix="permission", references=(
            Ref("users", "user", form="id", wildcard=True), Ref("groups", "group", form="id", wildcard=True),
            Ref("roles", "role", form="id", wildcard=True), model, adapter,
            Ref("resources", "application", shared=True, when=("resource_type", ("", "Application"))))),
        Kind("model", m.CasbinModel, charted=True, name_prefix="model"),
        Kind("adapter", m.Adapter, charted=True, name_prefix="adapter"),
        Kind("enforcer", m.Enforcer, charted=True, name_prefix="enforcer", references=(model, adapter)),
        Kind("syncer", m.Syncer, **admin_owned, name_prefix="syncer"),
        Kind("webhook", m.Webhook, **admin_owned, name_prefix="webhook"),
    )


# every extension's kinds, built-in or installed (iam_console/extension.py)
REGISTRY: Gathered[Kind] = Gathered("kind", lambda extension: ((kind.name, kind) for kind in extension.kinds))


def kind(name: str) -> Kind:
    return REGISTRY[name]


def organization_of(kind_: Kind, row: m.Named) -> str:
    """The organization a record belongs to ('admin' for a shared record)."""
    return getattr(row, kind_.organization_attr)


def is_shared(kind_: Kind, row: m.Named) -> bool:
    return kind_.ownership is Ownership.SHARED and row.owner == b.ADMIN_OWNER
