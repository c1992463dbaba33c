"""Pushed authorization requests (RFC 9126, PAR): the client posts its authorization request to
the server first, authenticated, and sends the browser to the authorization endpoint with only the
request_uri it got back.

A request_uri is a random URN, stored as its SHA-256. It opens the authorization endpoint for
LIFETIME seconds after the push; the first opening gives the user SIGN_IN_SECONDS to sign in (the
page, the sign-in post and the second factor read the same query again). Only the client that
pushed it may use it, and the code it leads to spends it: a second code is never issued for it
(docs/security.md, "PAR, JAR and DPoP")."""

from __future__ import annotations

import secrets
import time

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console.core.errors import ServiceError
from iam_console.models import Application, PushedRequest
from iam_console.oauth.errors import digest

URN = "urn:ietf:params:oauth:request_uri:"
LIFETIME = 60  # seconds; RFC 9126 §2.2 suggests 5 to 600, clients are told expires_in
SIGN_IN_SECONDS = 600
UNUSABLE = "The request_uri is invalid, expired or used"
TABLE = PushedRequest.__table__


def store(db: Session, application: Application, parameters: dict[str, str]) -> dict[str, str | int]:
    """Keep a checked request; the answer of the push (request_uri and expires_in)."""
    now = int(time.time())
    db.execute(sa.delete(TABLE).where(TABLE.c.expires < now))  # indexed: the expired ones go at each push
    uri = URN + secrets.token_urlsafe(32)
    db.add(PushedRequest(uri_hash=digest(uri), application=application.name, parameters=parameters,
                         expires=now + LIFETIME))
    return {"request_uri": uri, "expires_in": LIFETIME}


def open_request(db: Session, application: Application, request_uri: str) -> tuple[dict[str, str], str]:
    """The parameters pushed under `request_uri` by `application`'s client, and the uri's hash
    (to spend it when the code is issued). ServiceError when it is unknown, expired, used, or
    another client's: all alike, so nothing tells one from the other."""
    uri_hash = digest(request_uri[:500])
    now = int(time.time())
    row = db.exec(select(PushedRequest).where(PushedRequest.uri_hash == uri_hash)).first()
    if row is None or row.used or row.expires < now or row.application != application.name:
        raise ServiceError(UNUSABLE)
    if not row.opened:
        db.execute(sa.update(TABLE).where(TABLE.c.pk == row.pk, TABLE.c.opened == sa.false())
                   .values(opened=True, expires=now + SIGN_IN_SECONDS))
    return dict(row.parameters), uri_hash


def spend(db: Session, uri_hash: str) -> bool:
    """Mark the request used as its code is issued; False if another request spent it first."""
    return db.execute(sa.update(TABLE).where(TABLE.c.uri_hash == uri_hash, TABLE.c.used == sa.false())
                      .values(used=True)).rowcount == 1
