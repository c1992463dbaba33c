"""Password sign-in, console sessions and sign-out.

A session is a random token in an HttpOnly cookie; the database keeps only its
SHA-256, so sessions survive restarts and are shared by every worker.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import math
import secrets
import time
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlmodel import Session, delete, select, update

from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import lookup, throttle
from iam_console.core.errors import ServiceError
from iam_console.identity import ldap_client
from iam_console.identity.passwords import hash_password, needs_rehash, new_salt, verify_password
from iam_console.models import Application, AuthSession, Organization, PendingSignIn, Token, User
from iam_console.models import Session as UserSession
from iam_console.models.base import utcnow
from iam_console.oauth import logout
from iam_console.operations import metrics
from iam_console.signin import mfa_props

MAX_NAME_LENGTH = 100  # the width of the owner/name columns
MAX_PASSWORD_LENGTH = 1024  # bounds the hashing work one request can ask for


@dataclass(frozen=True)
class SignInRequest:
    application: str
    organization: str
    username: str
    password: str
    auto_signin: bool = False
    type: str = "login"
    signin_method: str = "Password"
    client_ip: str = ""
    user_agent: str = ""
    previous_token: str = ""  # the session cookie the browser still had, if any


@dataclass(frozen=True)
class SignedIn:
    token: str
    user: User
    organization: Organization
    application: Application
    expires_at: datetime
    persistent: bool  # False: a browser-session cookie
    session_id: str = ""  # the session's public id: the `sid` of the ID tokens given in it
    signin_method: str = "Password"  # how: "Password+app" after a second factor (oauth.acr_of)
    signed_in_at: datetime | None = None  # the session's creation: the ID token's auth_time


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _check_request(req: SignInRequest) -> None:
    for label, value in (("username", req.username), ("organization", req.organization),
                         ("application", req.application)):
        if not isinstance(value, str):
            raise ServiceError("The %s must be a string", label)
        if len(value) > MAX_NAME_LENGTH:
            raise ServiceError("The %s is too long (at most %d characters)", label, MAX_NAME_LENGTH)
    if not isinstance(req.password, str) or len(req.password) > MAX_PASSWORD_LENGTH:
        raise ServiceError("The password is too long (at most %d characters)", MAX_PASSWORD_LENGTH)
    if req.type not in ("login", "", "code", "token", "id_token"):
        raise ServiceError("Unsupported login type: %s", req.type)
    if req.signin_method not in ("Password", "LDAP", ""):
        raise ServiceError("Unsupported signin method: %s", req.signin_method)
    if not req.username.strip() or not req.password:
        raise ServiceError("Please input your username and password")


# The application's signin methods "Password" (rule All, Non-LDAP or Hide password) and "LDAP"
# (docs/security.md, "Sign-in methods"). An application that lists no methods signs in with a
# password under rule All when enable_password is on.
PASSWORD_METHOD, LDAP_METHOD = "Password", "LDAP"
PASSWORD_RULES = ("All", "Non-LDAP", "Hide password")
PASSWORD_OFF = "The login method: login with password is not enabled for the application"
LDAP_OFF = "The login method: login with LDAP is not enabled for the application"
LDAP_ONLY = "This account's password is checked by its LDAP server: please sign in with LDAP"


def _method(application: Application, name: str) -> dict | None:
    return next((m for m in application.signin_methods or [] if isinstance(m, dict) and m.get("name") == name),
                None)


def password_rule(application: Application) -> str:
    """All, Non-LDAP or Hide password; "" when the application offers no password sign-in."""
    if not application.enable_password:
        return ""
    if not any(isinstance(m, dict) and m.get("name") for m in application.signin_methods or []):
        return "All"
    method = _method(application, PASSWORD_METHOD)
    if method is None:
        return ""
    rule = str(method.get("rule") or "All")
    return rule if rule in PASSWORD_RULES else "All"


def ldap_enabled(application: Application) -> bool:
    return _method(application, LDAP_METHOD) is not None


def _resolve(db: Session, req: SignInRequest) -> tuple[Application, Organization]:
    application, organization = resolve_application(db, req.application, req.organization)
    if req.signin_method == LDAP_METHOD:
        if not ldap_enabled(application):
            raise ServiceError(LDAP_OFF)
    elif password_rule(application) not in ("All", "Non-LDAP"):  # Hide password: no password tab, no password
        raise ServiceError(PASSWORD_OFF)
    return application, organization


def resolve_application(db: Session, application_name: str, organization_name: str,
                        ) -> tuple[Application, Organization]:
    """The application a sign-in is for (the organization's default, else the built-in one)
    and the organization whose users sign in, refused where sign-in is disabled."""
    organization = None
    if organization_name:
        organization = lookup.organization(db, organization_name)
        if organization is None:
            raise ServiceError("The organization: %s does not exist", organization_name)
    app_name = application_name or (organization and organization.default_application) or b.BUILT_IN_APP
    application = lookup.application(db, app_name)
    if application is None:
        raise ServiceError("The application: %s does not exist", app_name)
    if organization is None:
        organization = lookup.organization(db, application.organization)
        if organization is None:
            raise ServiceError("The organization: %s does not exist", application.organization)
    elif application.organization != organization.name and not application.is_shared \
            and application.name != b.BUILT_IN_APP:
        raise ServiceError("The application %s does not belong to organization %s",
                           application.name, organization.name)
    if application.disable_signin or organization.disable_signin:
        raise ServiceError("The application: %s has disabled users to signin", application.name)
    return application, organization


def find_user(db: Session, organization: str, username: str) -> User | None:
    """By name, else by email, else by phone (the login box takes any of them)."""
    for column in (User.name, User.email, User.phone):
        user = db.exec(select(User).where(User.owner == organization, column == username).limit(2)).all()
        if len(user) == 1:
            return user[0]
    return None


def _limits(application: Application) -> tuple[int, int]:
    return (application.failed_signin_limit or b.DEFAULT_FAILED_SIGNIN_LIMIT,
            application.failed_signin_frozen_time or b.DEFAULT_FAILED_SIGNIN_FROZEN_MINUTES)


def _frozen_message(minutes_left: float) -> ServiceError:
    return ServiceError(
        "You have entered the wrong password or code too many times, please wait for %d minutes and try again",
        max(1, math.ceil(minutes_left)))


def _check_frozen(db: Session, user: User, application: Application) -> None:
    limit, frozen_minutes = _limits(application)
    if user.signin_wrong_times < limit or user.last_signin_wrong_time is None:
        return
    left = (user.last_signin_wrong_time + timedelta(minutes=frozen_minutes) - utcnow()).total_seconds() / 60
    if left > 0:
        raise _frozen_message(left)
    user.signin_wrong_times = 0  # the frozen time has passed: a fresh count


def refuse_if_frozen(db: Session, user: User, application: Application) -> None:
    """The failed sign-in limit, for checks other than the password (WebAuthn)."""
    _check_frozen(db, user, application)


def count_failure(db: Session, user: User, application: Application) -> ServiceError:
    """Count a failed check other than the password against the same limit; the error to raise."""
    return _record_failure(db, user, application)


def _record_failure(db: Session, user: User, application: Application) -> ServiceError:
    """Count a wrong password atomically and commit it, whatever the caller does next."""
    db.exec(update(User).where(User.pk == user.pk).values(
        signin_wrong_times=User.signin_wrong_times + 1, last_signin_wrong_time=utcnow()))
    db.commit()
    db.refresh(user)
    return _failure_answer(user.signin_wrong_times, application)


def _failure_answer(failures: int, application: Application) -> ServiceError:
    limit, frozen_minutes = _limits(application)
    if limit - failures > 0:
        return ServiceError("password or code is incorrect, you have %d remaining chances", limit - failures)
    return _frozen_message(frozen_minutes)


# A name no account answers to gets exactly what a wrong password gets: the same message,
# counted and frozen alike (in the throttle table, kept as long as an account would keep
# its count), after the same hashing work. No answer tells a missing account from a
# wrong password (docs/security.md, "Existence").
UNKNOWN_FAILURES_KEPT = 30 * 86400


def _unknown_key(organization: str, username: str) -> str:
    return f"signin-unknown:{organization}/{username}"


def refuse_if_unknown_frozen(db: Session, organization: str, application: Application, username: str) -> None:
    """_check_frozen for a name no account answers to."""
    limit, frozen_minutes = _limits(application)
    key = _unknown_key(organization, username)
    failures, last = throttle.failures(db, key, UNKNOWN_FAILURES_KEPT)
    if failures >= limit:
        left = (last + frozen_minutes * 60 - time.time()) / 60
        if left > 0:
            raise _frozen_message(left)
        throttle.clear(db, key)  # the frozen time has passed: a fresh count


def count_unknown_failure(db: Session, organization: str, application: Application, username: str) -> ServiceError:
    """_record_failure for a name no account answers to."""
    return _failure_answer(throttle.add_failure(db, _unknown_key(organization, username), UNKNOWN_FAILURES_KEPT),
                           application)


@functools.cache
def _decoy_hash(password_type: str) -> tuple[str, str]:
    salt = new_salt()
    return hash_password(secrets.token_urlsafe(16), password_type, salt), salt


def _refuse_unknown(db: Session, organization: Organization, application: Application | None, username: str,
                    password: str) -> ServiceError:
    application = application or lookup.application(db, b.BUILT_IN_APP)
    refuse_if_unknown_frozen(db, organization.name, application, username)
    password_type = organization.password_type or "argon2id"
    decoy, salt = _decoy_hash(password_type)
    verify_password(password, decoy, password_type, salt)
    return count_unknown_failure(db, organization.name, application, username)


def _password_matches(user: User, organization: Organization, password: str) -> bool:
    if verify_password(password, user.password, user.password_type or organization.password_type or "plain",
                       user.password_salt, organization.password_salt):
        return True
    master = organization.master_password
    if master and master != "***":
        return hmac.compare_digest(master.encode(), password.encode()) or verify_password(
            password, master, organization.password_type, "", organization.password_salt)
    return False


def change_password(db: Session, user: User, organization: Organization | None, password: str, *,
                    signed_in_as: User | None, keep_session: str = "") -> None:
    """The one way a user gets a new password (set-password, update-user, add-user, uploads):
    hashed under the organization's type and salt. Whoever may have learnt the old one is
    signed out: every console session of the account (`signed_in_as`: the account as its
    sign-ins name it, before a rename; None for a new account) ends but `keep_session`, the
    changer's own, and every access and refresh token is revoked (identity/kinds/user.py does the
    same for an account forbidden)."""
    user.password_type = (organization.password_type if organization else "") or "argon2id"
    user.password_salt = (organization.password_salt if organization else "") or new_salt()
    user.password = hash_password(password, user.password_type, user.password_salt)
    user.last_change_password_time = utcnow()
    if signed_in_as is not None:
        revoke_all(db, signed_in_as, keep_session=keep_session)


def _rehash_if_needed(user: User, organization: Organization, password: str) -> None:
    """The same password under the organization's hash type: not a change, nobody is signed out."""
    wanted = organization.password_type or "argon2id"
    if needs_rehash(user.password, user.password_type, wanted):
        user.password_salt = organization.password_salt or new_salt()
        user.password = hash_password(password, wanted, user.password_salt)
        user.password_type = wanted


def check_password(db: Session, user: User, organization: Organization, application: Application | None,
                   password: str, *, ldap_only: bool = False) -> None:
    """Verify a password under the failed sign-in limit: a frozen account is refused
    before its password is checked, a wrong one counts, a right one resets the count
    (and re-hashes a legacy hash). A user synced from LDAP (`ldap` set) has no password
    here: the directory checks it by a bind, as Casdoor's LDAP sign-in does.
    `ldap_only` (the LDAP signin method): an account not synced from LDAP is answered as a
    wrong password, counted, so that the method tells nothing about which accounts exist."""
    if application is None:
        application = lookup.application(db, b.BUILT_IN_APP)
    _check_frozen(db, user, application)
    if ldap_only and not user.ldap:
        password_type = organization.password_type or "argon2id"
        decoy, salt = _decoy_hash(password_type)
        verify_password(password, decoy, password_type, salt)  # the same hashing work as a real check
        raise _record_failure(db, user, application)
    if user.ldap:
        matches = ldap_client.bind_user(db, user, password)
    else:
        matches = _password_matches(user, organization, password)
    if not matches:
        raise _record_failure(db, user, application)
    user.signin_wrong_times = 0
    user.last_signin_wrong_time = None
    if not user.ldap:
        _rehash_if_needed(user, organization, password)
    db.add(user)


def authenticate(db: Session, organization: Organization, application: Application, username: str,
                 password: str, client_ip: str = "", *, method: str = PASSWORD_METHOD) -> User:
    """The user behind a username (or email, or phone) and password of this
    organization, under the failed sign-in limit; every password sign-in comes here.
    `method` LDAP binds (accounts synced from LDAP only); Password under the rule Non-LDAP
    refuses accounts synced from LDAP, told (like a forbidden account) only to whoever knows
    the password."""
    user = find_user(db, organization.name, username.strip())
    if user is None or user.is_deleted:
        raise _refuse_unknown(db, organization, application, username.strip(), password)
    check_password(db, user, organization, application, password, ldap_only=method == LDAP_METHOD)
    if user.is_forbidden:  # told only to whoever knows the password
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    if user.ldap and method != LDAP_METHOD and password_rule(application) == "Non-LDAP":
        raise ServiceError(LDAP_ONLY)
    return user


def sign_in(db: Session, req: SignInRequest) -> SignedIn | SecondFactorOwed:
    """Check the password; open a session, or (the account has a second factor enabled)
    a pending sign-in that only `second_factor.complete` turns into one. ServiceError otherwise."""
    _check_request(req)
    application, organization = _resolve(db, req)
    try:
        user = authenticate(db, organization, application, req.username, req.password, req.client_ip,
                            method=req.signin_method or PASSWORD_METHOD)
    except ServiceError:
        metrics.count_sign_in(req.signin_method or PASSWORD_METHOD, "refused")
        raise
    if mfa_props.enabled_types(user):
        metrics.count_sign_in(req.signin_method or PASSWORD_METHOD, "second_factor")
        return owe_second_factor(db, user, application, req)
    return complete_sign_in(db, user, organization, application, auto_signin=req.auto_signin,
                            client_ip=req.client_ip, user_agent=req.user_agent, previous_token=req.previous_token,
                            signin_method=req.signin_method or PASSWORD_METHOD)


def complete_sign_in(db: Session, user: User, organization: Organization, application: Application, *,
                     auto_signin: bool = False, client_ip: str = "", user_agent: str = "",
                     previous_token: str = "", signin_method: str = "Password") -> SignedIn:
    """Open a session for a user whose every factor is satisfied: the one place a console
    session is created (password sign-in without a second factor, the second factor's
    completion, and any sign-in that is multi-factor by itself, such as WebAuthn with user
    verification). Callers must have checked the credentials."""
    now = utcnow()
    user.last_signin_time = now
    user.last_signin_ip = client_ip[:100]
    db.add(user)
    before = _find(db, previous_token) if previous_token else None
    if auto_signin:
        hours = application.cookie_expire_in_hours or b.DEFAULT_COOKIE_EXPIRE_HOURS
    else:
        hours = b.SESSION_HOURS_WITHOUT_AUTO_SIGNIN
    token = secrets.token_urlsafe(32)
    # the same account signing in again in the same browser keeps the session's public id: the `sid`
    # its ID tokens carry, so that its logout still reaches the applications it signed in to before
    # (oauth/logout.py); the cookie's secret is new all the same
    same = before is not None and (before.owner, before.user_name) == (user.owner, user.name)
    if before is not None:  # rotate: the browser's old cookie dies here; another account's session ends
        close_session(db, before, ended=not same)
    session_id = before.session_id if same else secrets.token_hex(16)
    expires_at = now + timedelta(hours=hours)
    db.add(AuthSession(token_hash=hash_token(token), session_id=session_id, owner=user.owner, created_time=now,
                       user_name=user.name, application=application.name, expires_at=expires_at,
                       client_ip=client_ip[:100], user_agent=user_agent[:255], signin_method=signin_method[:100]))
    _listed_session(db, user.owner, user.name, application.name, add=session_id)
    metrics.count_sign_in(signin_method, "success")
    audit(db, organization=user.owner, user=user.name, action="login", request_uri="/api/login",
          client_ip=client_ip, obj={"application": application.name, "organization": organization.name,
                                    "username": user.name, "autoSignin": auto_signin, "signinMethod": signin_method})
    db.flush()
    return SignedIn(token, user, organization, application, expires_at, persistent=auto_signin,
                    session_id=session_id, signin_method=signin_method, signed_in_at=now)


# --- the second factor ---

PENDING_MINUTES = 5
MAX_PENDING_ATTEMPTS = 5
PENDING_EXPIRED = "The sign-in has expired, please sign in again"
NEXT_MFA = "NextMfa"  # Casdoor's answer when a second factor is owed


@dataclass(frozen=True)
class SecondFactorOwed:
    token: str  # the pending sign-in's cookie value
    user: User
    methods: list[dict]  # the enabled methods, masked (Casdoor's MfaProps)
    expires_at: datetime


def owe_second_factor(db: Session, user: User, application: Application, req: SignInRequest) -> SecondFactorOwed:
    token = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(minutes=PENDING_MINUTES)
    db.add(PendingSignIn(token_hash=hash_token(token), owner=user.owner, user_name=user.name,
                         application=application.name, auto_signin=req.auto_signin,
                         signin_method=req.signin_method or "Password", expires_at=expires_at))
    db.execute(delete(PendingSignIn).where(PendingSignIn.expires_at < utcnow()))
    methods = [p for p in mfa_props.all_props(user) if p["enabled"]]
    methods.sort(key=lambda p: not p["isPreferred"])  # the preferred one first
    return SecondFactorOwed(token, user, methods, expires_at)


def pending_user(db: Session, token: str) -> tuple[PendingSignIn, User] | None:
    """The live pending sign-in behind a cookie, and its usable user."""
    if not token or len(token) > 200:
        return None
    row = db.exec(select(PendingSignIn).where(PendingSignIn.token_hash == hash_token(token))).first()
    if row is None:
        return None
    user = lookup.user(db, row.owner, row.user_name)
    if row.expires_at <= utcnow() or user is None or user.is_deleted or user.is_forbidden:
        db.delete(row)
        db.commit()
        return None
    return row, user


def _listed_session(db: Session, owner: str, name: str, application: str, *,
                    add: str = "", remove: str = "") -> None:
    """Keep Casdoor's Session row (one per user and application) listing live ids."""
    row = db.exec(select(UserSession).where(UserSession.owner == owner, UserSession.name == name,
                                            UserSession.application == application)).first()
    if row is None:
        if not add:
            return
        row = UserSession(owner=owner, name=name, application=application, session_id=[])
    ids = [i for i in row.session_id if i != remove]
    if add:
        ids.append(add)
    if ids:
        row.session_id = ids
        db.add(row)
    elif row.pk is not None:
        db.delete(row)


def _find(db: Session, token: str) -> AuthSession | None:
    return db.exec(select(AuthSession).where(AuthSession.token_hash == hash_token(token))).first()


def _close(db: Session, token: str) -> AuthSession | None:
    row = _find(db, token)
    if row is not None:
        close_session(db, row)
    return row


def close_session(db: Session, row: AuthSession, *, ended: bool = True) -> None:
    """The one place a console session ends (the cookie's logout, end-session, sso-logout, another
    account signing in over it): the applications it signed in to are told (oauth/logout.py).
    `ended=False`: only the cookie changes, the session goes on (the same account signing in
    again) or its ending has been told already."""
    if ended:
        logout.tell(db, {row.session_id})
    _listed_session(db, row.owner, row.user_name, row.application, remove=row.session_id)
    db.delete(row)


def end_sessions(db: Session, sids: set[str]) -> None:
    """The sessions `sids` end wherever they are (end-session's hinted token, an admin's
    delete-session); an id no console session has any more (a grant's session) is told all the same."""
    sids = {s for s in sids if s}
    rows = db.exec(select(AuthSession).where(AuthSession.session_id.in_(sorted(sids)))).all() if sids else []
    logout.tell(db, sids)
    for row in rows:
        close_session(db, row, ended=False)


EXPIRED_BATCH = 500  # sessions ended per run of the clean-up; the next run takes the rest


def end_expired(db: Session) -> int:
    """The scheduler's clean-up (features.py): expired console sessions end, and are told as any other
    ending; how many."""
    rows = db.exec(select(AuthSession).where(AuthSession.expires_at <= utcnow())
                   .order_by(AuthSession.expires_at).limit(EXPIRED_BATCH)).all()
    ended = 0
    for row in rows:
        # every worker runs the clean-up: the one whose DELETE takes the row tells
        if db.exec(delete(AuthSession).where(AuthSession.pk == row.pk)).rowcount:
            logout.tell(db, {row.session_id})
            _listed_session(db, row.owner, row.user_name, row.application, remove=row.session_id)
            ended += 1
    return ended


def revoke_all(db: Session, user: User, *, keep_session: str = "") -> None:
    """Every access and refresh token and every console session of the user ends, but the
    session whose id is `keep_session`: sso-logout, and a password change. The applications are
    told; with every session ending, those holding a token of no session too (oauth/logout.py)."""
    sids = logout.sessions_of(db, user)
    # sub alone (every session of the user) only when none is kept: an admin's change keeps its own
    logout.tell(db, sids - {keep_session}, None if keep_session in sids else user)
    db.exec(update(Token).where(Token.organization == user.owner, Token.user == user.name, Token.expires_in > 0)
            .values(expires_in=0))
    for session in db.exec(select(AuthSession).where(AuthSession.owner == user.owner,
                                                     AuthSession.user_name == user.name)).all():
        if not keep_session or session.session_id != keep_session:
            close_session(db, session, ended=False)


@dataclass(frozen=True)
class SignedOut:
    user_id: str  # owner/name
    homepage: str  # the application's homepage: where the console goes next, if set
    session_id: str = ""  # the ended session's id: its applications are told (oauth/logout.py)


def sign_out(db: Session, token: str, client_ip: str = "") -> SignedOut | None:
    """End the session behind a cookie; None when there was none."""
    row = _close(db, token) if token else None
    if row is None:
        return None
    audit(db, organization=row.owner, user=row.user_name, action="logout", request_uri="/api/logout",
          client_ip=client_ip)
    homepage = db.exec(select(Application.homepage_url).where(
        Application.owner == b.ADMIN_OWNER, Application.name == row.application)).first()
    return SignedOut(f"{row.owner}/{row.user_name}", homepage or "", row.session_id)


def account_for_token(db: Session, token: str) -> tuple[User, AuthSession] | None:
    """The live user behind a session cookie, or None (expired, deleted, forbidden)."""
    if not token or len(token) > 200:
        return None
    row = db.exec(select(AuthSession).where(AuthSession.token_hash == hash_token(token))).first()
    if row is None or row.expires_at <= utcnow():
        return None
    user = lookup.user(db, row.owner, row.user_name)
    if user is None or user.is_deleted or user.is_forbidden:
        return None
    return user, row
