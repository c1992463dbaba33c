"""OpenID Connect Back-Channel Logout 1.0 and Front-Channel Logout 1.0 (docs/api.md, "Standards";
docs/security.md, "Back-channel logout").

The ID tokens given in a browser session carry its `sid` (Token.sid: the AuthSession's public
session_id). Whatever ends a session (docs/api.md, "Logout": end-session, the cookie's logout,
sso-logout, an admin's delete-session, its expiry, another account signing in over it, a password
change, the user deleted, renamed or forbidden), every application it signed in to is told:
- back-channel (`tell`): a logout token (typ logout+jwt, signed with the application's cert: iss,
  aud, iat, exp, jti, sub and, when known, sid, and the back-channel event, never a nonce) POSTed
  as a form to the application's backchannelLogoutUri. The notice is an event of the webhook
  outbox (operations/webhooks.py), written in the ending's own transaction: the delivery worker
  sends it off the event loop, through the outbound guard, retries it on failure and keeps its
  outcome. The token is signed at each attempt (the claims, jti included, are the event's), so a
  retry never carries an expired one.
- front-channel (`frames`): the end-session page frames each application's frontchannelLogoutUri
  with `iss` and `sid` (oauth/api.py end_session), then goes on to the post_logout_redirect_uri.
"""

from __future__ import annotations

import functools
import json
import secrets
import time
from typing import Any
from urllib.parse import urlencode, urlsplit

import httpx
from sqlmodel import Session, select

from iam_console.applications import redirects
from iam_console.core import builtin as b
from iam_console.core import lookup, outbound
from iam_console.core.errors import ServiceError
from iam_console.models import Application, AuthSession, Cert, Token, User, WebhookEvent
from iam_console.oauth import jwt_tokens
from iam_console.operations import webhooks
from iam_console.settings import settings

LOGOUT_EVENT = "backchannel-logout"  # the outbox events' type: no record's action is named so
EVENT_CLAIM = "http://schemas.openid.net/event/backchannel-logout"
TOKEN_TYPE = "logout+jwt"
TOKEN_SECONDS = 120  # a logout token's life: the specification recommends two minutes or less
ATTEMPTS = 5
RETRY_SECONDS = 5  # doubled per failed attempt: the last retry comes about a minute after logout


def _signed_in(db: Session, sids: set[str]) -> list[tuple[Application, str, str, str]]:
    """The applications the sessions `sids` signed in to, each with its user's organization and name
    and the sid."""
    found = db.exec(select(Token.application, Token.organization, Token.user, Token.sid)
                    .where(Token.sid.in_(sorted(sids)), Token.user != "").distinct()).all() if sids else []
    answer = []
    for name, organization, user_name, sid in sorted(found):
        application = lookup.application(db, name)
        if application is not None:
            answer.append((application, organization, user_name, sid))
    return answer


def sessions_of(db: Session, user: User) -> set[str]:
    """The ids of the user's console sessions, and of the grant sessions of its live tokens (an
    application that requires sid gives each password or device grant one: oauth/oauth.py)."""
    live = (Token.organization == user.owner, Token.user == user.name, Token.expires_in > 0, Token.sid != "")
    return (set(db.exec(select(AuthSession.session_id).where(AuthSession.owner == user.owner,
                                                             AuthSession.user_name == user.name)).all())
            | set(db.exec(select(Token.sid).where(*live)).all()))


def _sessionless(db: Session, user: User) -> list[Application]:
    """The applications the user holds a live token of that belongs to no session (the password,
    device and client grants of an application that does not require sid)."""
    names = db.exec(select(Token.application).where(Token.organization == user.owner, Token.user == user.name,
                                                    Token.expires_in > 0, Token.sid == "").distinct()).all()
    return [a for a in map(functools.partial(lookup.application, db), sorted(names)) if a is not None]


def _queue(db: Session, application: Application, claims: dict[str, str]) -> None:
    webhooks.add_event(db, owner=b.ADMIN_OWNER, webhook=f"{b.ADMIN_OWNER}/{application.name}",
                       organization=application.organization, event_type=LOGOUT_EVENT,
                       payload=json.dumps({"url": application.backchannel_logout_uri,
                                           "claims": {**claims, "jti": secrets.token_urlsafe(16)}}),
                       max_retries=ATTEMPTS)


def tell(db: Session, sids: set[str], user: User | None = None) -> None:
    """The sessions `sids` end: a back-channel notice (sub and sid) is queued, in the caller's
    transaction, for each application they signed in to that has a backchannelLogoutUri. With
    `user`, every session and token of that user ends (sso-logout of all sessions, the user
    deleted, renamed or forbidden): `user` is the notices' subject, and each application where it
    holds a live token of no session is told too, by a notice with sub alone (Back-Channel Logout
    1.0, section 2.4: every session of that user at the application), unless the application
    requires sid (backchannelLogoutSessionRequired): it never gets a notice without one. Called
    from the one place each way of ending a session ends it (docs/api.md, "Logout")."""
    subjects: dict[tuple[str, str], str] = {}
    if user is not None:
        subjects[(user.owner, user.name)] = user.uuid
    for application, organization, user_name, sid in _signed_in(db, {s for s in sids if s}):
        if (organization, user_name) not in subjects:
            found = lookup.user(db, organization, user_name)
            subjects[(organization, user_name)] = found.uuid if found is not None else ""
        if application.backchannel_logout_uri and subjects[(organization, user_name)]:
            _queue(db, application, {"aud": application.client_id, "sub": subjects[(organization, user_name)],
                                     "sid": sid})
    if user is not None:
        for application in _sessionless(db, user):
            if application.backchannel_logout_uri and not application.backchannel_logout_session_required:
                _queue(db, application, {"aud": application.client_id, "sub": user.uuid})


def tell_application(db: Session, user: User, name: str, sids: set[str]) -> None:
    """An admin ended the user's sessions at the application `name` (delete-session), `sids` told
    already: when none of them is known to have signed in to it, it gets a notice with sub alone
    (every session of the user there), unless it requires sid."""
    application = lookup.application(db, name)
    if (application is None or not application.backchannel_logout_uri
            or application.backchannel_logout_session_required
            or any(a.name == name for a, _, _, _ in _signed_in(db, {s for s in sids if s}))):
        return
    _queue(db, application, {"aud": application.client_id, "sub": user.uuid})


def frames(db: Session, sids: set[str]) -> list[str]:
    """The front-channel URIs to frame for the ending sessions `sids`, with `iss` and `sid`."""
    found = (redirects.with_parameters(application.frontchannel_logout_uri, {"iss": settings.origin, "sid": sid})
             for application, _, _, sid in _signed_in(db, {s for s in sids if s})
             if application.frontchannel_logout_uri)
    return list(dict.fromkeys(found))


def frame_origins(frames: list[str]) -> list[str]:
    """The origins of the framed URIs, for the page's Content-Security-Policy frame-src."""
    return sorted({f"{p.scheme}://{p.netloc}" for p in map(urlsplit, frames)})


def logout_token(claims: dict[str, Any], cert: Cert, algorithm: str, organization: str) -> str:
    now = int(time.time())
    return jwt_tokens.sign({**claims, "iss": settings.origin, "iat": now, "exp": now + TOKEN_SECONDS,
                            "events": {EVENT_CLAIM: {}}}, cert, algorithm, organization, typ=TOKEN_TYPE)


def send(application: Application, cert: Cert, algorithm: str, event: WebhookEvent) -> webhooks.Attempt:
    """One attempt: the logout token, signed now, POSTed to the application's back-channel URI through
    the outbound guard (redirects are not followed)."""
    claims = json.loads(event.payload)["claims"]
    body = urlencode({"logout_token": logout_token(claims, cert, algorithm, application.organization)})
    try:
        answer = webhooks.http_client().post(application.backchannel_logout_uri, content=body.encode(), headers={
            "Content-Type": webhooks.FORM, "Cache-Control": "no-store"})
    except (httpx.HTTPError, outbound.OutboundError, ValueError) as exc:
        return webhooks.Attempt(error=str(exc) or type(exc).__name__)
    if not answer.is_success:
        return webhooks.Attempt(answer.status_code, answer.text, f"The receiver answered {answer.status_code}")
    return webhooks.Attempt(answer.status_code, answer.text)


def receiver(db: Session, event: WebhookEvent) -> webhooks.Receiver | str:
    """The worker's way to an event's application (operations/webhooks.py KINDS): its current
    back-channel URI and cert, or why the notice cannot go."""
    application = lookup.application(db, event.webhook.partition("/")[2])
    if application is None:
        return "The application no longer exists"
    if not application.backchannel_logout_uri:
        return "The application has no back-channel logout URI any more"
    try:
        cert = jwt_tokens.signing_cert(db, application)
    except ServiceError as exc:
        return str(exc)
    algorithm = jwt_tokens.signing_algorithm(cert, application.token_signing_method)
    return webhooks.Receiver(lambda event: send(application, cert, algorithm, event), RETRY_SECONDS,
                             exponential=True)


webhooks.KINDS[LOGOUT_EVENT] = receiver
