"""An organization that sends codes: its default application lists its own SMTP provider,
pointing at a local SMTP sink. Shared by the API tests of verification codes, recovery and
sign-up (on the in-process database, the `smtp` fixture of tests/api/conftest.py) and the
browser tests of those pages (on the browser tests' server's database)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from sqlmodel import Session

from iam_console import models as m
from iam_console.db import session_scope
from tests.conftest import unique
from tests.sinks import SmtpSink

SMTP_USER, SMTP_PASSWORD = "mailer@corp.test", "smtp-secret"


@dataclass
class Org:
    name: str
    application: str
    provider: str


def mail_organization(smtp: SmtpSink | None, application_fields: dict | None = None,
                      **organization_fields) -> Org:
    """The organization on the in-process database (the API tests')."""
    with session_scope() as db:
        return add_mail_organization(db, smtp, application_fields, **organization_fields)


def add_mail_organization(db: Session, smtp: SmtpSink | None, application_fields: dict | None = None,
                          **organization_fields) -> Org:
    """An organization whose default application lists its own SMTP provider (pointing at the
    sink, which takes SMTP_USER's login), added to `db`."""
    name, application, provider = unique("vorg"), unique("vapp"), unique("smtp")
    db.add(m.Organization(owner="admin", name=name, display_name=f"Org {name}", password_type="argon2id",
                          default_application=application, country_codes=["US"], **organization_fields))
    db.add(m.Application(owner="admin", name=application, organization=name, enable_password=True,
                         client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
                         providers=[{"name": provider, "rule": "All"}] if smtp else [],
                         **(application_fields or {})))
    if smtp is not None:
        db.add(m.Provider(owner=name, name=provider, category="Email", type="SMTP", host="127.0.0.1",
                          port=smtp.port, disable_ssl=True, client_id=SMTP_USER, client_secret=SMTP_PASSWORD,
                          title="Your code", content="<p>Your code is %s, for 10 minutes.</p>"))
    return Org(name, application, provider)
