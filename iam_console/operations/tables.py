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
    # the scheduler's claim (operations/syncers.py): not one of Casdoor's fields
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

    # the HMAC-SHA256 key of the signature header (docs/security.md, "Webhook signatures")
    json_secrets: ClassVar[frozenset[str]] = frozenset({"secret"})
    json_text_search: ClassVar[frozenset[str]] = frozenset({"events"})

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
    secret: str = text(100)


class WebhookEvent(Named, table=True):
    """The outbox: one row per record a webhook is to receive, written in the record's own
    transaction; the delivery worker (operations/webhooks.py) sends it, at least once, and keeps
    the outcome of the last attempt. Owned by the webhook's owner ("admin"); `organization` is
    the record's, `webhook` the webhook's id (owner/name)."""

    __tablename__ = "webhook_event"
    __table_args__ = named_keys(
        "webhook_event",
        # the worker's question: what is due now
        sa.Index("ix_webhook_event_due", "state", "next_retry_time"),
        sa.Index("ix_webhook_event_organization", "organization", "created_time", "pk"),
        sa.Index("ix_webhook_event_webhook", "webhook", "created_time", "pk"),
        sa.Index("ix_webhook_event_claim", "claim"),
    )
    json_hidden: ClassVar[frozenset[str]] = frozenset({"pk", "claim", "lease_until"})

    updated_time: datetime | None = moment()
    webhook: str = text(200)
    organization: str = text(100)
    event_type: str = text(100)  # the record's action
    state: str = text(50)  # Pending, Retrying, Success, Failed
    record_id: int = 0
    payload: str = long_text()  # the record as sent (JSON)
    extended_user: str = long_text()  # the record's user, secrets masked (JSON), when isUserExtended
    attempt_count: int = 0
    max_retries: int = 3
    next_retry_time: datetime | None = moment()
    last_status_code: int = 0
    last_response: str = long_text()
    last_error: str = long_text()
    # a worker's claim: its random token and the time after which another worker may take the row
    claim: str = text(32)
    lease_until: datetime | None = moment()
