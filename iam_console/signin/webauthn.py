"""WebAuthn credentials: registered by a signed-in user for their own account, listed,
deleted, and used to sign in to an application whose signin methods include WebAuthn.
The ceremonies are py_webauthn's (Duo Labs); this module holds the rules around them.

Challenges are the server's: each begin stores one in webauthn_challenge, found at finish
by the SHA-256 of a random cookie value set with it (never by what the client echoes back),
marked used before the response is checked (single use) and refused after CHALLENGE_SECONDS.
A registration challenge is bound to the user and the console session that asked for it;
a sign-in challenge to the account named at begin, whose credentials alone are allowed.
Rows stay until they expire, so the ceremonies one address began in the last
CHALLENGE_SECONDS are counted: past MAX_CEREMONIES_PER_ADDRESS, begin is refused. A failed
assertion also counts against the account's failed sign-in limit (signin/auth.py).

The relying party is IAM_ORIGIN: its host is the rp id, the origin itself the only origin
accepted, whatever the request's Host header says. Both ceremonies require user
verification, so a WebAuthn sign-in is two factors in itself (the authenticator held, and
its PIN or biometric) and asks for no other.

Stored credentials keep the shape Casdoor stores (go-webauthn's Credential marshalled by
Go: capitalised keys, standard base64 bytes), plus a Name and a CreatedTime.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from urllib.parse import urlsplit

import webauthn
from sqlmodel import Session, delete, func, select, update
from webauthn.helpers import (
    base64url_to_bytes,
    options_to_json_dict,
    parse_authentication_credential_json,
    parse_registration_credential_json,
)
from webauthn.helpers.exceptions import WebAuthnException
from webauthn.helpers.structs import (
    AuthenticatorSelectionCriteria,
    AuthenticatorTransport,
    PublicKeyCredentialDescriptor,
    ResidentKeyRequirement,
    UserVerificationRequirement,
)

from iam_console.audit.records import audit
from iam_console.core import lookup, server_keys
from iam_console.core.errors import ServiceError
from iam_console.models import Application, AuthSession, User, WebAuthnChallenge
from iam_console.models.base import utcnow
from iam_console.settings import settings
from iam_console.signin import auth

CHALLENGE_SECONDS = 300
TIMEOUT_MS = 60_000  # the browser's prompt
MAX_CREDENTIALS = 20  # per user: the list lives in the user row
MAX_CEREMONIES_PER_ADDRESS = 60  # begun from one address within CHALLENGE_SECONDS
MAX_NAME_LENGTH = 100
MAX_RESPONSE_LENGTH = 64 * 1024  # a credential JSON is a few kB; attestation certificates included
SIGNUP, SIGNIN = "signup", "signin"
METHOD = "WebAuthn"
TRANSPORTS = {t.value for t in AuthenticatorTransport}


@dataclass(frozen=True)
class Ceremony:
    token: str  # the cookie value binding this browser to the stored challenge
    options: dict  # PublicKeyCredentialCreationOptions / RequestOptions, JSON (base64url)


def rp_id() -> str:
    return urlsplit(settings.origin).hostname or "localhost"


def allows(application: Application) -> bool:
    """WebAuthn sign-in is open for an application that lists it among its signin methods
    (Casdoor's rule: the table lists the enabled methods) or sets enableWebAuthn."""
    return application.enable_web_authn or any(
        isinstance(m, dict) and m.get("name") == METHOD for m in application.signin_methods or [])


def signin_target(db: Session, application: str, organization: str) -> tuple[str, str] | None:
    """(organization, application) a sign-in page's WebAuthn button begins with, when the
    application it signs in to (as resolve_application finds it) allows WebAuthn; else None."""
    try:
        app, org = auth.resolve_application(db, application, organization)
    except ServiceError:
        return None
    return (org.name, app.name) if allows(app) else None


# --- the stored credentials ---

def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str) -> bytes:
    return base64.b64decode(text.encode(), validate=True)


def _url64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def user_handle(user: User) -> bytes:
    """The WebAuthn user id: the user's uuid, which survives renames (Casdoor uses owner/name)."""
    return (user.uuid or f"{user.owner}/{user.name}").encode()


def _value(member: object) -> str:
    """py_webauthn's enums, or the plain strings some of its fields hold."""
    return str(getattr(member, "value", member))


def _stored(user: User) -> list[dict]:
    return [c for c in user.webauthn_credentials or [] if isinstance(c, dict) and isinstance(c.get("ID"), str)]


def listing(user: User) -> list[dict[str, str]]:
    """What a list shows of each credential: its id (as delete-credential takes it), name and time."""
    return [{"id": c["ID"], "name": str(c.get("Name") or ""), "createdTime": str(c.get("CreatedTime") or "")}
            for c in _stored(user)]


def _descriptors(user: User) -> list[PublicKeyCredentialDescriptor]:
    found = []
    for c in _stored(user):
        try:
            transports = [AuthenticatorTransport(t) for t in c.get("Transport") or [] if t in TRANSPORTS]
            found.append(PublicKeyCredentialDescriptor(id=_unb64(c["ID"]), transports=transports or None))
        except (binascii.Error, ValueError):
            continue  # a record this server did not write: it cannot be used, so it is not offered
    return found


# --- challenges ---

def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _store(db: Session, *, purpose: str, challenge: bytes, owner: str, name: str, client_ip: str,
           application: str = "", session_id: str = "", previous_token: str = "") -> str:
    now = utcnow()
    db.exec(delete(WebAuthnChallenge).where(WebAuthnChallenge.expires_at <= now))
    if previous_token:  # a second begin from the same browser voids the first
        db.exec(update(WebAuthnChallenge).where(WebAuthnChallenge.token_hash == _hash(previous_token))
                .values(used=True))
    recent = db.exec(select(func.count()).select_from(WebAuthnChallenge).where(
        WebAuthnChallenge.client_ip == client_ip[:100])).one()
    if recent >= MAX_CEREMONIES_PER_ADDRESS:
        raise ServiceError("Too many WebAuthn requests from this address, please try again later")
    token = secrets.token_urlsafe(32)
    db.add(WebAuthnChallenge(token_hash=_hash(token), purpose=purpose, challenge=_url64(challenge),
                             owner=owner, user_name=name, application=application, session_id=session_id,
                             client_ip=client_ip[:100], expires_at=now + timedelta(seconds=CHALLENGE_SECONDS)))
    return token


def _take(db: Session, token: str, purpose: str) -> WebAuthnChallenge:
    """The challenge behind this browser's cookie, marked used (and committed) before anything
    is checked: whatever follows, it never serves again."""
    row = db.exec(select(WebAuthnChallenge).where(WebAuthnChallenge.token_hash == _hash(token or ""))).first() \
        if token and len(token) <= 100 else None
    if row is None or row.purpose != purpose:
        raise ServiceError("Please call WebAuthnSigninBegin first" if purpose == SIGNIN
                           else "Please call WebAuthnSignupBegin first")
    taken = db.exec(update(WebAuthnChallenge).where(WebAuthnChallenge.pk == row.pk,
                                                    WebAuthnChallenge.used.is_(False)).values(used=True)).rowcount
    db.commit()
    if taken != 1 or row.expires_at <= utcnow():  # used before (or by a concurrent finish), or stale
        raise ServiceError("Please call WebAuthnSigninBegin first" if purpose == SIGNIN
                           else "Please call WebAuthnSignupBegin first")
    return row


def _response(credential: object) -> dict:
    if not isinstance(credential, dict) or len(str(credential)) > MAX_RESPONSE_LENGTH:
        raise ServiceError("The WebAuthn response is not valid")
    return credential


# --- registration (the account page) ---

def begin_registration(db: Session, user: User, session: AuthSession, client_ip: str = "",
                       previous_token: str = "") -> Ceremony:
    """Options for navigator.credentials.create(), for the signed-in user's own account."""
    if len(_stored(user)) >= MAX_CREDENTIALS:
        raise ServiceError("A user may register at most %d WebAuthn credentials", MAX_CREDENTIALS)
    organization = lookup.organization(db, user.owner)
    options = webauthn.generate_registration_options(
        rp_id=rp_id(), rp_name=(organization and (organization.display_name or organization.name)) or user.owner,
        user_id=user_handle(user), user_name=user.name,
        user_display_name=user.display_name or user.name, timeout=TIMEOUT_MS,
        exclude_credentials=_descriptors(user),
        authenticator_selection=AuthenticatorSelectionCriteria(
            resident_key=ResidentKeyRequirement.PREFERRED, user_verification=UserVerificationRequirement.REQUIRED),
    )
    token = _store(db, purpose=SIGNUP, challenge=options.challenge, owner=user.owner, name=user.name,
                   client_ip=client_ip,
                   session_id=session.session_id, previous_token=previous_token)
    return Ceremony(token, options_to_json_dict(options))


def finish_registration(db: Session, user: User, session: AuthSession, token: str, credential: object,
                        name: str = "", client_ip: str = "") -> dict:
    """Check the authenticator's attestation against the challenge this session was given
    and add the credential to the user; the stored credential."""
    row = _take(db, token, SIGNUP)
    if (row.owner, row.user_name, row.session_id) != (user.owner, user.name, session.session_id):
        raise ServiceError("Please call WebAuthnSignupBegin first")
    name = name.strip() if isinstance(name, str) else ""
    if len(name) > MAX_NAME_LENGTH:
        raise ServiceError("The name is too long (at most %d characters)", MAX_NAME_LENGTH)
    try:
        parsed = parse_registration_credential_json(_response(credential))
        verified = webauthn.verify_registration_response(
            credential=parsed, expected_challenge=base64url_to_bytes(row.challenge),
            expected_rp_id=rp_id(), expected_origin=settings.origin, require_user_verification=True)
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        raise ServiceError("WebAuthn registration failed: %s", str(exc)[:200]) from None
    db.refresh(user)
    stored = _stored(user)
    if len(stored) >= MAX_CREDENTIALS:
        raise ServiceError("A user may register at most %d WebAuthn credentials", MAX_CREDENTIALS)
    credential_id = _b64(verified.credential_id)
    if any(c["ID"] == credential_id for c in stored):
        raise ServiceError("This WebAuthn credential is already registered")
    transports = [_value(t) for t in parsed.response.transports or []]
    entry = {
        "ID": credential_id, "PublicKey": _b64(verified.credential_public_key),
        "AttestationType": _value(verified.fmt), "Transport": transports,
        "Flags": {"UserPresent": True, "UserVerified": verified.user_verified,
                  "BackupEligible": _value(verified.credential_device_type) == "multi_device",
                  "BackupState": verified.credential_backed_up},
        "Authenticator": {"AAGUID": _b64(bytes.fromhex(verified.aaguid.replace("-", ""))),
                          "SignCount": verified.sign_count, "CloneWarning": False,
                          "Attachment": _value(parsed.authenticator_attachment or "")},
        "Name": name or f"Credential {len(stored) + 1}",
        "CreatedTime": utcnow().isoformat(),
    }
    user.webauthn_credentials = [*user.webauthn_credentials, entry]
    db.add(user)
    audit(db, organization=user.owner, user=user.name, action="webauthn-signup", client_ip=client_ip,
          request_uri="/api/webauthn/signup/finish", obj={"credential": credential_id, "name": entry["Name"]})
    return entry


def delete_credential(db: Session, user: User, credential_id: str, client_ip: str = "") -> bool:
    """Remove one of the user's own credentials (by its ID as stored); False when they have none by that ID."""
    if not isinstance(credential_id, str) or not credential_id or len(credential_id) > 1000:
        raise ServiceError("The credential ID is missing")
    db.refresh(user)
    kept = [c for c in user.webauthn_credentials or [] if not (isinstance(c, dict) and c.get("ID") == credential_id)]
    if len(kept) == len(user.webauthn_credentials or []):
        return False
    user.webauthn_credentials = kept
    db.add(user)
    audit(db, organization=user.owner, user=user.name, action="webauthn-delete-credential", client_ip=client_ip,
          request_uri="/api/webauthn/delete-credential", obj={"credential": credential_id})
    return True


# --- sign-in ---

def _signing_in(db: Session, application: Application, owner: str, name: str) -> User | None:
    """The account a sign-in names; None when none answers to the name (a deleted one neither).
    Such a name is answered as an account without a usable credential would be: decoy options
    at begin, a counted failure at finish (docs/security.md, "Existence")."""
    if not allows(application):
        raise ServiceError("The login method: login with WebAuthn is not enabled for the application")
    user = lookup.user(db, owner, name)
    return None if user is None or user.is_deleted else user


def _refuse_if_frozen(db: Session, user: User | None, application: Application, owner: str, name: str) -> None:
    if user is None:
        auth.refuse_if_unknown_frozen(db, owner, application, name)
    else:
        auth.refuse_if_frozen(db, user, application)


def _decoy(db: Session, owner: str, name: str) -> PublicKeyCredentialDescriptor:
    """What is offered for a name without a usable credential: an ID no authenticator holds,
    the same on every call (an HMAC of the name under a key derived from the built-in cert's
    private key, which every worker shares), so that the options look like an account's own."""
    key = server_keys.derived_key(db, "webauthn decoy")
    return PublicKeyCredentialDescriptor(id=hmac.new(key, f"{owner}/{name}".encode(), hashlib.sha256).digest())


def begin_authentication(db: Session, owner: str, name: str, application: str = "", client_ip: str = "",
                         previous_token: str = "") -> Ceremony:
    """Options for navigator.credentials.get(): the named account's credentials only."""
    for label, value in (("owner", owner), ("name", name), ("application", application)):
        if not isinstance(value, str) or len(value) > auth.MAX_NAME_LENGTH:
            raise ServiceError("The %s is too long (at most %d characters)", label, auth.MAX_NAME_LENGTH)
    if not owner or not name.strip():
        raise ServiceError("Please input your username")
    name = name.strip()
    app, _ = auth.resolve_application(db, application, owner)
    user = _signing_in(db, app, owner, name)
    _refuse_if_frozen(db, user, app, owner, name)
    allowed = (_descriptors(user) if user is not None else []) or [_decoy(db, owner, name)]
    options = webauthn.generate_authentication_options(
        rp_id=rp_id(), timeout=TIMEOUT_MS, allow_credentials=allowed,
        user_verification=UserVerificationRequirement.REQUIRED)
    token = _store(db, purpose=SIGNIN, challenge=options.challenge, owner=owner, name=name, client_ip=client_ip,
                   application=app.name, previous_token=previous_token)
    return Ceremony(token, options_to_json_dict(options))


def finish_authentication(db: Session, token: str, credential: object, req: auth.SignInRequest,
                          application: str = "") -> auth.SignedIn:
    """Check the assertion against the challenge this browser was given and the account it
    was given for, then open a session as a password sign-in does (no second factor: user
    verification was required). `application`: the one an authorization request names (it
    must allow WebAuthn too); else the one named at begin. A failed check counts against the
    account's failed sign-in limit; a forbidden account is told so only after a valid
    assertion. From `req`: auto_signin, client_ip, user_agent, previous_token."""
    row = _take(db, token, SIGNIN)
    app, organization = auth.resolve_application(db, application or row.application, row.owner)
    user = _signing_in(db, app, row.owner, row.user_name)
    _refuse_if_frozen(db, user, app, row.owner, row.user_name)
    try:
        parsed = parse_authentication_credential_json(_response(credential))
    except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
        raise ServiceError("The WebAuthn response is not valid: %s", str(exc)[:200]) from None
    credential_id = _b64(parsed.raw_id)
    stored = next((c for c in _stored(user) if c["ID"] == credential_id), None) if user is not None else None
    handle = parsed.response.user_handle
    failure = None
    if stored is None or (handle and handle != user_handle(user)):
        failure = "This WebAuthn credential is not registered for the user"
    else:
        try:
            verified = webauthn.verify_authentication_response(
                credential=parsed,
                expected_challenge=base64url_to_bytes(row.challenge),
                expected_rp_id=rp_id(), expected_origin=settings.origin,
                credential_public_key=_unb64(stored["PublicKey"]),
                credential_current_sign_count=int((stored.get("Authenticator") or {}).get("SignCount") or 0),
                require_user_verification=True)
        except (WebAuthnException, ValueError, TypeError, KeyError) as exc:
            failure = str(exc)[:200]
    if failure is not None:
        frozen = auth.count_failure(db, user, app) if user is not None else auth.count_unknown_failure(
            db, row.owner, app, row.user_name)
        if frozen.template.startswith("You have entered"):  # that was the last chance
            raise frozen
        raise ServiceError("WebAuthn sign-in failed: %s", failure)
    if user.is_forbidden:
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    _count_signature(user, credential_id, verified.new_sign_count)
    user.signin_wrong_times = 0
    user.last_signin_wrong_time = None
    return auth.complete_sign_in(db, user, organization, app, auto_signin=req.auto_signin, client_ip=req.client_ip,
                                 user_agent=req.user_agent, previous_token=req.previous_token,
                                 signin_method=METHOD)


def _count_signature(user: User, credential_id: str, sign_count: int) -> None:
    """Keep the authenticator's new signature count (py_webauthn refused one not above the
    stored count: a cloned authenticator; authenticators without a counter always send 0)."""
    updated = []
    for c in user.webauthn_credentials:
        if isinstance(c, dict) and c.get("ID") == credential_id:
            c = {**c, "Authenticator": {**(c.get("Authenticator") or {}), "SignCount": sign_count}}
        updated.append(c)
    user.webauthn_credentials = updated
