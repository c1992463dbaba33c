"""Forgotten passwords: Casdoor's forget flow, in four calls, for a visitor who is not signed in.

1. `contacts` (get-email-and-phone): the account a name, email or phone answers to, with its
   email and phone masked unless the visitor typed that address itself.
2. `send_code` (send-verification-code, method forget): a code to the account's own email or
   phone, never to another address; the destination may be given masked, as step 1 showed it.
   The application must offer "Forgot password?" (when it lists signin items) and its captcha
   rule is enforced.
3. `verify` (verify-code): the code checked (and spent) under signin/verifications.py's
   limits; the answer is a grant: a random token the browser keeps in an HttpOnly cookie,
   whose hash (bound to the account and the code) lives 10 minutes as a one-time mark.
4. `set_password` (set-password with code): the grant taken once, then the organization's
   password rules; every session and token of the account ends.

An account whose password the LDAP server keeps cannot recover it here. Steps 1 and 2 count
against the client address (lookups and sends), so the flow cannot be used to walk through an
organization's accounts fast; an account that exists is still told apart from one that does
not, as Casdoor's pages need.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

from sqlmodel import Session

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import lookup, throttle
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request
from iam_console.core.errors import ServiceError
from iam_console.identity import users as user_service
from iam_console.signin import auth, captcha, verifications
from iam_console.signin.mfa_props import mask_email, mask_phone

GRANT_SECONDS = 10 * 60
PER_ADDRESS = (30, 600)  # lookups and sends a client address may make per window
LDAP_MANAGED = ("the password of the LDAP user: %s is managed by the LDAP server, please contact your "
                "administrator to reset it")
NO_ACCOUNT = "the user does not exist, please sign up first"
FORGET_ITEM = "Forgot password?"


@dataclass(frozen=True)
class Solved:
    """A captcha as send-verification-code carries it (for Default, the id is the clientSecret)."""
    type: str = ""
    token: str = ""
    captcha_id: str = ""


def _account(db: Session, organization: str, username: str) -> m.User:
    username = username.strip()[:255]
    user = auth.find_user(db, organization, username) if username else None
    if user is None or user.is_deleted:
        raise ServiceError("The user: %s doesn't exist", f"{organization}/{username}")
    if user.ldap:
        raise ServiceError(LDAP_MANAGED, user.name)
    return user


def contacts(db: Session, organization: str, username: str, client_ip: str) -> tuple[dict, str]:
    """(the account's name, email and phone, how `username` named it: email, phone or username)."""
    throttle.hit(db, f"recovery:{client_ip}", *PER_ADDRESS, throttle.TOO_MANY_REQUESTS)
    user = _account(db, organization, username)
    typed = username.strip()
    if user.email and typed.lower() == user.email.lower():
        return {"owner": user.owner, "name": user.name, "email": user.email, "phone": ""}, "email"
    if user.phone and typed == user.phone:
        return {"owner": user.owner, "name": user.name, "email": "", "phone": user.phone}, "phone"
    return {"owner": user.owner, "name": user.name, "email": mask_email(user.email) if user.email else "",
            "phone": mask_phone(user.phone) if user.phone else ""}, "username"


def application_for(db: Session, application_id: str) -> m.Application:
    """The application a forget page or send is for; it must offer "Forgot password?"."""
    name = application_id.split("/", 1)[1] if "/" in application_id else application_id
    application = lookup.application(db, name) if name else None
    if application is None:
        raise ServiceError("The application: %s does not exist", application_id[:200])
    items = [item for item in application.signin_items or [] if isinstance(item, dict)]
    if items and not any(item.get("name") == FORGET_ITEM and item.get("visible") for item in items):
        raise ServiceError("The forgot password feature is disabled")
    return application


def _address(user: m.User, kind: str) -> str:
    return user.email if kind == verifications.EMAIL_KIND else user.phone


def _same_address(user: m.User, kind: str, given: str) -> bool:
    """`given` is the account's address of that kind, as typed or as step 1 masked it."""
    address = _address(user, kind)
    if not address or not given:
        return False
    masked = mask_email(address) if kind == verifications.EMAIL_KIND else mask_phone(address)
    given = given.strip()
    return given == masked or (given.lower() == address.lower() if kind == verifications.EMAIL_KIND
                               else given == address)


def _addressed(db: Session, organization: str, check_user: str, kind: str, dest: str) -> m.User:
    """The account a code is for: the one named (whose own address `dest` must be), or the
    one `dest` belongs to."""
    user = _account(db, organization, check_user or dest)
    if not _same_address(user, kind, dest):
        raise ServiceError(NO_ACCOUNT)
    return user


def send_code(db: Session, application_id: str, check_user: str, dest: str, kind: str, *, country_code: str = "",
              solved: Solved = Solved(), client_ip: str = "", request: Request = NO_REQUEST) -> None:
    """A code for the forget flow, to the account's own address of that kind."""
    if kind not in verifications.CATEGORIES:
        raise ServiceError("Unknown type")
    if not dest.strip():
        raise ServiceError(verifications.EMPTY_DEST[kind])
    application = application_for(db, application_id)
    captcha.check(db, application, client_ip, solved.type, solved.token, solved.captcha_id)
    throttle.hit(db, f"recovery:{client_ip}", *PER_ADDRESS, throttle.TOO_MANY_REQUESTS)
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise ServiceError("Organization does not exist")
    user = _addressed(db, organization.name, check_user, kind, dest)
    if user.is_forbidden:
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    owner = Actor(user=user)
    to = verifications.receiver(owner, organization, kind, _address(user, kind), country_code or user.country_code)
    verifications.deliver(db, owner, organization, to, application_id=application.name, method="forget",
                          client_ip=client_ip, request=request)


def _grant_key(user: m.User, token: str, code: str) -> str:
    digest = hashlib.sha256(f"{user.owner}/{user.name}\n{token}\n{code.strip()}".encode()).hexdigest()
    return f"reset-grant:{digest}"


def verify(db: Session, organization: str, name: str, username: str, code: str, *,
           country_code: str = "") -> str:
    """Check the forget code sent to the account's address; the grant token for step 4."""
    kind = verifications.EMAIL_KIND if "@" in username else verifications.PHONE_KIND
    user = _addressed(db, organization, name, kind, username)
    owner = Actor(user=user)
    to = verifications.receiver(owner, lookup.organization(db, user.owner), kind, _address(user, kind),
                                country_code or user.country_code)
    verifications.spend(db, verifications.check_code(db, owner, to, code))
    token = secrets.token_urlsafe(32)
    throttle.claim(db, _grant_key(user, token, code), GRANT_SECONDS)
    return token


def set_password(db: Session, owner: str, name: str, new: str, code: str, token: str, *,
                 request: Request = NO_REQUEST) -> None:
    """The new password of an account whose forget code this browser verified (the grant
    works once); the organization's password rules apply."""
    if not name or not new:
        raise ServiceError("Empty input!")
    user = lookup.user(db, owner, name)
    if user is None or user.is_deleted:
        raise ServiceError("The user: %s doesn't exist", f"{owner}/{name}")
    if user.ldap:
        raise ServiceError(LDAP_MANAGED, user.name)
    user_service.check_new_password(db, owner, new)  # before the grant is spent: a weak password costs no code
    if not token or not throttle.take(db, _grant_key(user, token, code)):
        raise ServiceError("The verification code has not been verified, or it has expired")
    auth.change_password(db, user, lookup.organization(db, owner), new, signed_in_as=user)
    user.need_update_password = False
    db.add(user)
    audit(db, organization=owner, user=f"{owner}/{name}", action="set-password", request_uri=request.uri,
          client_ip=request.client_ip, obj={"userOwner": owner, "userName": name, "method": "forget"})
