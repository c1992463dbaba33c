"""The Actor behind each of Casdoor's credentials: a console session, an application's
client id and secret, a user's access key and secret, a bearer token. api/callers.py tries
them in Casdoor's order; core/access.py says how far each Actor reaches."""

from __future__ import annotations

import hmac

from sqlmodel import Session, select

from iam_console.core import lookup
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.identity.passwords import secret_matches
from iam_console.models import Application, Key, User
from iam_console.models.base import utcnow
from iam_console.oauth.tokens import live_token
from iam_console.signin.auth import account_for_token


def _usable(user: User | None) -> bool:
    return user is not None and not user.is_deleted and not user.is_forbidden


def from_session(db: Session, token: str) -> Actor | None:
    found = account_for_token(db, token)
    return Actor(user=found[0], session_id=found[1].session_id) if found else None


def from_client_credentials(db: Session, client_id: str, client_secret: str) -> Actor:
    """clientId/clientSecret from the query or HTTP Basic; wrong ones are an error."""
    application = db.exec(select(Application).where(Application.client_id == client_id)).first()
    if application is None:
        raise ServiceError("Application not found for client ID: %s", client_id[:100])
    # an application without a secret (a public client) has no client credentials at all
    if not application.client_secret or not hmac.compare_digest(application.client_secret.encode(),
                                                                client_secret.encode()):
        raise ServiceError("Incorrect client secret for application: %s", application.name)
    return Actor(application=application)


KEY_IN_USE = "This access key is already in use: choose another"


def check_access_key_free(db: Session, access_key: str, *, user: User | None = None, key: Key | None = None) -> None:
    """An access key names one user or one Key record across every organization (from_access_key
    looks a key up by itself): one equal to another's would never work, or open the other. `user`
    or `key` is the record being saved, which may keep its own. The refusal names no holder."""
    if not access_key:
        return
    users = select(User.pk).where(User.access_key == access_key)
    keys = select(Key.pk).where(Key.access_key == access_key)
    if user is not None and user.pk is not None:
        users = users.where(User.pk != user.pk)
    if key is not None and key.pk is not None:
        keys = keys.where(Key.pk != key.pk)
    with db.no_autoflush:
        if db.exec(users.limit(1)).first() is not None or db.exec(keys.limit(1)).first() is not None:
            raise ServiceError(KEY_IN_USE)


def from_access_key(db: Session, access_key: str, access_secret: str) -> Actor:
    """A user's own access key (add-user-keys), else an API key (add-key): active, not
    expired, acting as its user or as the client of its application, both of the key's
    organization."""
    refused = ServiceError("Invalid access key or secret")
    if not access_key:
        raise refused
    user = db.exec(select(User).where(User.access_key == access_key)).first()
    if user is not None:
        if not _usable(user) or not secret_matches(user.access_secret, access_secret):
            raise refused
        return Actor(user=user)
    key = db.exec(select(Key).where(Key.access_key == access_key)).first()
    if key is None or not secret_matches(key.access_secret, access_secret) or key.state != "Active" \
            or (key.expire_time is not None and key.expire_time <= utcnow()):
        raise refused
    if key.user:
        user = lookup.user(db, key.organization, key.user)
        if _usable(user):
            return Actor(user=user)
    elif key.application:
        application = lookup.application(db, key.application)
        if application is not None and application.organization == key.organization:
            return Actor(application=application)
    raise refused


def from_bearer(db: Session, token: str) -> Actor:
    """An access token issued by this server: live, of a usable user or of an application,
    bounded by the organization of the application it was issued through."""
    row = live_token(db, token)
    application = lookup.application(db, row.application) if row is not None else None
    if application is None:  # without its application a token would be bound to nothing
        raise ServiceError("Access token is invalid or expired")
    if row.grant_type == "client_credentials":
        return Actor(application=application)
    user = lookup.user(db, row.organization, row.user)
    if not _usable(user):
        raise ServiceError("Access token is invalid or expired")
    return Actor(user=user, application=application)
