"""Authorization tables: roles, permissions, Casbin models, adapters, enforcers and policy rows."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa
from sqlmodel import Field, SQLModel

from iam_console.models.base import (
    Named,
    Row,
    json_dict,
    json_list,
    long_text,
    moment,
    named_keys,
    text,
)


class Role(Named, table=True):
    __tablename__ = "role"
    __table_args__ = named_keys("role")

    display_name: str = text(100)
    description: str = text(255)
    users: list[str] = json_list()  # owner/name
    groups: list[str] = json_list()  # owner/name
    roles: list[str] = json_list()  # owner/name
    domains: list[str] = json_list()
    is_enabled: bool = False


class Permission(Named, table=True):
    __tablename__ = "permission"
    __table_args__ = named_keys("permission")

    display_name: str = text(100)
    description: str = text(255)
    users: list[str] = json_list()
    groups: list[str] = json_list()
    roles: list[str] = json_list()
    domains: list[str] = json_list()
    model: str = text(200)  # owner/name of a model
    adapter: str = text(200)  # owner/name of an adapter
    resource_type: str = text(100)  # Application, TreeNode, Custom
    resources: list[str] = json_list()
    actions: list[str] = json_list()
    effect: str = text(100)  # Allow or Deny
    is_enabled: bool = False
    expire_time: datetime | None = moment()
    submitter: str = text(100)
    approver: str = text(100)
    approve_time: datetime | None = moment()
    state: str = text(100)  # Approved or Pending


class CasbinModel(Named, table=True):
    """A Casbin access-control model (Casdoor's `Model`)."""

    __tablename__ = "model"
    __table_args__ = named_keys("model")

    display_name: str = text(100)
    description: str = text(255)
    model_text: str = long_text()


class Adapter(Named, table=True):
    __tablename__ = "adapter"
    __table_args__ = named_keys("adapter")
    json_secrets: ClassVar[frozenset[str]] = frozenset({"password"})

    table: str = text(100)
    use_same_db: bool = False
    type: str = text(100)  # Database
    database_type: str = text(100)  # mysql, postgres, mssql, oracle, sqlite3
    host: str = text(255)
    port: int = 0
    user: str = text(100)
    password: str = text(255)
    database: str = text(100)


class Enforcer(Named, table=True):
    __tablename__ = "enforcer"
    __table_args__ = named_keys("enforcer")

    updated_time: datetime | None = moment()
    display_name: str = text(100)
    description: str = text(255)
    model: str = text(200)  # owner/name of a model
    adapter: str = text(200)  # owner/name of an adapter
    model_cfg: dict[str, Any] = json_dict()


class CasbinRule(Row, table=True):
    """One policy line of an adapter that keeps its policies in this database (useSameDb).
    `adapter` names the adapter's table within its organization, `owner/table`, so adapters
    naming one table share its lines, as tables of one database are shared
    (docs/architecture.md, "Authorization engine")."""

    __tablename__ = "casbin_rule"
    __table_args__ = (sa.Index("ix_casbin_rule_adapter_ptype", "adapter", "ptype"),)

    # Casdoor's policy objects have no JSON tags: keys are the Go field names.
    json_aliases: ClassVar[dict[str, str]] = {
        "pk": "Id",
        "ptype": "Ptype",
        **{f"v{i}": f"V{i}" for i in range(6)},
    }
    json_hidden: ClassVar[frozenset[str]] = frozenset({"adapter"})

    adapter: str = text(200)  # owner/table of the adapter
    ptype: str = text(100)
    v0: str = text(200)
    v1: str = text(200)
    v2: str = text(200)
    v3: str = text(200)
    v4: str = text(200)
    v5: str = text(200)


class AuthzVersion(SQLModel, table=True):
    """A counter per organization, raised in the transaction of every write to what its
    enforcers are built from (models, adapters, enforcers, policy lines, permissions, roles,
    groups, users' groups). Every worker reads it on each call and rebuilds a cached
    enforcer whose counter moved (docs/architecture.md, "Authorization engine").
    The scope `*` is raised by bulk writes that name no single organization."""

    __tablename__ = "authz_version"

    scope: str = text(100, primary_key=True)
    version: int = Field(default=0, sa_type=sa.BigInteger, nullable=False)


class AuthzChange(SQLModel, table=True):
    """The policy lines a counter's step changed, written in the same transaction: a worker whose
    enforcer is a few steps behind applies them in place instead of rebuilding it. A step with
    no row here (or an `other` row: something else changed too) means a rebuild."""

    __tablename__ = "authz_change"
    __table_args__ = (sa.Index("ix_authz_change_scope_version", "scope", "version"),)

    pk: int | None = Field(default=None, primary_key=True)
    scope: str = text(100)
    version: int = Field(default=0, sa_type=sa.BigInteger, nullable=False)
    adapter: str = text(200)  # casbin_rule.adapter: owner/table
    op: str = text(10)  # add, remove, other
    rule: list[str] = json_list()  # [ptype, v0, ...]
