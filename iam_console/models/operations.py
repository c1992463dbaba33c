"""Operations tables: user syncers and webhooks."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

import sqlalchemy as sa

from iam_console.models.base import Named, json_list, long_text, moment, named_keys, text


class Syncer(Named, table=True):
    __tablename__ = "syncer"
    __table_args__ = named_keys("syncer")
    json_secrets: ClassVar[frozenset[str]] = frozenset({"password", "ssh_password"})
    # the scheduler's claim (services/syncers.py): not one of Casdoor's fields
    json_hidden: ClassVar[frozenset[str]] = frozenset({"pk", "last_sync"})

    organization: str = text(100)
    type: str = text(100)  # Database, Keycloak, LDAP
    database_type: str = text(100)  # mysql, postgres, mssql, oracle, sqlite3
    ssl_mode: str = text(100)
    ssh_type: str = text(100)  # none, password, cert
    host: str = text(255)
    port: int = 0
    user: str = text(100)
    password: str = text(255)
    ssh_host: str = text(255)
    ssh_port: int = 0
    ssh_user: str = text(100)
    ssh_password: str = text(255)
    cert: str = text(100)
    database: str = text(100)
    table: str = text(100)
    # [{name, type, casdoorName, isKey, isHashed, values}]
    table_columns: list[Any] = json_list()
    affiliation_table: str = text(100)
    avatar_base_url: str = text(255)
    error_text: str = long_text()
    sync_interval: int = 0  # minutes
    is_read_only: bool = False
    is_enabled: bool = False
    last_sync: datetime | None = moment()


class Webhook(Named, table=True):
    __tablename__ = "webhook"
    __table_args__ = named_keys(
        "webhook",
        # every recorded event looks up the webhooks of its organization
        sa.Index("ix_webhook_organization", "organization"),
    )

    organization: str = text(100)
    url: str = text(255)
    method: str = text(100)  # POST, GET, PUT, DELETE
    content_type: str = text(100)
    headers: list[Any] = json_list()  # [{name, value}]
    events: list[str] = json_list()
    token_fields: list[str] = json_list()
    object_fields: list[str] = json_list()
    is_user_extended: bool = False
    single_org_only: bool = False
    is_enabled: bool = False
    max_retries: int = 0
    retry_interval: int = 0  # seconds
    use_exponential_backoff: bool = False
