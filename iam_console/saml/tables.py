"""SAML requests waiting for their sign-in."""

from __future__ import annotations

from datetime import datetime

import sqlalchemy as sa
from sqlmodel import Field

from iam_console.models.base import Row, UTCDateTime, created, text


class SamlRequest(Row, table=True):
    """An AuthnRequest this server sent to a SAML provider, waiting for its Response. The
    Response's InResponseTo must name one, once: the ACS deletes it as it accepts the Response
    (saml/saml_sp.py)."""

    __tablename__ = "saml_request"
    __table_args__ = (sa.UniqueConstraint("request_id", name="uq_saml_request_request_id"),
                      sa.Index("ix_saml_request_expires_at", "expires_at"))

    request_id: str = text(100)
    provider_owner: str = text(100)
    provider_name: str = text(100)
    application: str = text(100)  # the application signed in to
    return_to: str = text(1000)  # the same-site path the browser goes to after sign-in
    created_time: datetime = created()
    expires_at: datetime = Field(sa_type=UTCDateTime, nullable=False)
