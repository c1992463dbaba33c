"""Verification codes: a signed-in user proves a new email address or phone number
with a code sent there, then sets it on their account (Casdoor's send-verification-code and
reset-email-or-phone).

- The provider: the Email (or SMS) providers listed by the organization's default
  application (or the application the caller names, which must be of the caller's
  organization), in their order, whose rule allows a reset (and, for SMS, whose country
  codes include the number's); otherwise the organization's own provider of that category,
  else a shared one (owner 'admin'). Only the organization's own and shared providers are
  ever used. Sending is signin/delivery.py.
- A code is 6 digits from `secrets`, stored in a Verification row (the Verifications
  screen lists them, as Casdoor does) owned by the user's organization, with the user,
  the provider, the receiver (an email address, or a phone number in E.164) and the
  sender's IP.
- Limits: one code per receiver, and per user and category, every 60 s (an application's
  codeResendTimeout overrides it); a code lives 10 minutes and works once, for the user it
  was sent for; each check counts against the code before the comparison, and after 5 the
  code is void (parallel guesses cannot pass the limit); a receiver whose last code was
  voided that way gets no new code until that one would have expired: at most 5 guesses
  per receiver every 10 minutes.
- `send_code` serves the 'reset' method (the console's dialogs); forgotten passwords are
  signin/recovery.py, which also checks the application's captcha; signup and login codes
  belong with those flows.
"""

from __future__ import annotations

import hmac
import math
import secrets
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass

import phonenumbers
import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, policy
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.core.wire import EMAIL
from iam_console.identity import accounts
from iam_console.signin import delivery

EMAIL_KIND, PHONE_KIND = "email", "phone"
CATEGORIES = {EMAIL_KIND: "Email", PHONE_KIND: "SMS"}
EMPTY_DEST = {EMAIL_KIND: "Email cannot be empty", PHONE_KIND: "Phone cannot be empty"}
METHODS = ("reset",)
RESEND_SECONDS = 60
LIFETIME_MINUTES = 10
MAX_ATTEMPTS = 5
CODE_DIGITS = 6
# the application provider rules that allow a code, by purpose (Casdoor also matches an empty rule, All and None)
RULES = {"reset": frozenset({"", "all", "none", "reset"}), "mfa": frozenset({"", "all", "none", "mfa"}),
         "invitation": frozenset({"", "all", "none", "invitation"}),
         "forget": frozenset({"", "all", "none", "forget"}), "signup": frozenset({"", "all", "none", "signup"}),
         "login": frozenset({"", "all", "none", "login"})}
NOT_SENT = "Code has not been sent yet!"
FROZEN = "You have entered the wrong password or code too many times, please wait for %d minutes and try again"
# the attributes a checked code proves, by kind (accounts.locked_attributes)
PROVES = {EMAIL_KIND: frozenset({"email"}), PHONE_KIND: frozenset({"phone"})}


@dataclass(frozen=True)
class Receiver:
    kind: str
    address: str  # where the code goes and what the row records: an email, or a phone in E.164
    value: str  # what the user's field becomes: the email, or the national number
    region: str = ""  # a phone's country code (US, CN...)


def _now() -> int:
    return int(time.time())


def _check_kind(kind: str) -> str:
    if kind not in CATEGORIES:
        raise ServiceError("Unknown type")
    return kind


def _region(actor: Actor, organization: m.Organization | None, country_code: str) -> str:
    if country_code:
        return country_code.strip().upper()[:10]
    if actor.user is not None and actor.user.country_code:
        return actor.user.country_code.upper()
    codes = organization.country_codes if organization is not None else []
    return str(codes[0]).upper() if codes else ""


def receiver(actor: Actor, organization: m.Organization | None, kind: str, dest: str,
             country_code: str = "") -> Receiver:
    """The destination checked and normalized; an empty one is refused with Casdoor's messages."""
    dest = (dest or "").strip()
    if not dest:
        raise ServiceError(EMPTY_DEST[_check_kind(kind)])
    _check_kind(kind)
    if kind == EMAIL_KIND:
        if len(dest) > 100 or not EMAIL.match(dest):
            raise ServiceError("Email is invalid")
        return Receiver(kind, dest, dest)
    region = _region(actor, organization, country_code)
    try:
        number = phonenumbers.parse(dest[:30], region or None)
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise ServiceError("Phone number is invalid in your region %s", region)
    e164 = phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)
    return Receiver(kind, e164, str(number.national_number),
                    phonenumbers.region_code_for_number(number) or region)


def _organization(db: Session, actor: Actor) -> m.Organization:
    policy.require_user(actor)
    organization = lookup.organization(db, actor.organization)
    if organization is None:
        raise ServiceError("organization is null")
    return organization


def _check_unique(db: Session, actor: Actor, to: Receiver) -> None:
    """Casdoor's rule: no other user of the organization holds the address."""
    user = m.User
    same = [user.email == to.value] if to.kind == EMAIL_KIND else [user.phone == to.value,
                                                                     user.country_code.in_((to.region, ""))]
    other = db.exec(select(user.pk).where(user.owner == actor.organization, user.name != actor.name, *same)
                    .limit(1)).first()
    if other is not None:
        raise ServiceError("Email already exists" if to.kind == EMAIL_KIND else "Phone already exists")


def _check_allowed(db: Session, actor: Actor, organization: m.Organization, to: Receiver) -> None:
    """May this user set that address on their account once it is proven: the organization's
    item rules (and its regex) for the field."""
    attribute = next(iter(PROVES[to.kind]))
    if attribute in accounts.locked_attributes(actor, organization, actor.user, PROVES[to.kind]):
        raise ServiceError("You are not allowed to change the field: %s", m.wire_name(m.User, attribute))
    pattern = accounts.item_patterns(organization).get("Email" if to.kind == EMAIL_KIND else "Phone")
    if pattern:
        accounts.check_pattern(pattern, to.value, "Email" if to.kind == EMAIL_KIND else "Phone")


def may_reset(db: Session, actor: Actor, kind: str) -> bool:
    """Whether the reset dialog of that kind serves this viewer (the console shows its button)."""
    if actor.user is None:
        return False
    organization = lookup.organization(db, actor.organization)
    attribute = next(iter(PROVES[_check_kind(kind)]))
    return attribute not in accounts.locked_attributes(actor, organization, actor.user, PROVES[kind])


# --- the provider ---

def _application(db: Session, actor: Actor, organization: m.Organization, application_id: str) -> m.Application | None:
    if application_id:
        name = application_id.split("/", 1)[1] if "/" in application_id else application_id
        application = lookup.application(db, name)
        if application is None or application.organization != organization.name:  # one answer for both
            raise ServiceError("The application: %s does not exist", application_id[:200])
        return application
    return default_application(db, organization)


def default_application(db: Session, organization: m.Organization | None) -> m.Application | None:
    """The organization's default application (app-built-in for the built-in organization)."""
    if organization is None:
        return None
    name = organization.default_application or (b.BUILT_IN_APP if organization.name == b.BUILT_IN_ORG else "")
    return lookup.application(db, name) if name else None


def _applies(item: dict, to: Receiver, purpose: str) -> bool:
    if str(item.get("rule") or "").lower() not in RULES[purpose]:
        return False
    codes = item.get("countryCodes") or []
    return to.kind != PHONE_KIND or not codes or "All" in codes or to.region in codes


def first_provider(db: Session, organization: str, application: m.Application | None, category: str,
                   listed: Callable[[dict], bool] = lambda item: True) -> m.Provider | None:
    """The provider of a category a message goes through: the first of the application's
    Providers list that `listed` takes, else the organization's own, else a shared one (the
    organization's own before a shared one of the same name)."""
    usable = select(m.Provider).where(m.Provider.owner.in_((organization, b.ADMIN_OWNER)),
                                      m.Provider.category == category)
    own_first = sa.case((m.Provider.owner == organization, 0), else_=1)
    names = [item["name"] for item in (application.providers if application else []) or []
             if isinstance(item, dict) and isinstance(item.get("name"), str) and listed(item)]
    if names:
        by_name: dict[str, m.Provider] = {}
        for row in db.exec(usable.where(m.Provider.name.in_(names)).order_by(own_first)).all():
            by_name.setdefault(row.name, row)
        for name in names:
            if name in by_name:
                return by_name[name]
    return db.exec(usable.order_by(own_first, m.Provider.created_time, m.Provider.pk).limit(1)).first()


def find_provider(db: Session, organization: m.Organization, application: m.Application | None,
                  to: Receiver, purpose: str = "reset") -> m.Provider:
    row = first_provider(db, organization.name, application, CATEGORIES[to.kind],
                         lambda item: _applies(item, to, purpose))
    if row is not None:
        return row
    if application is not None:
        if to.kind == EMAIL_KIND:
            raise ServiceError('please add an Email provider to the "Providers" list for the application: %s',
                               application.name)
        raise ServiceError('please add a SMS provider to the "Providers" list for the application: %s',
                           application.name)
    raise ServiceError("please set an Email provider first" if to.kind == EMAIL_KIND
                       else "please set a SMS provider first")


# --- limits ---

def _latest(db: Session, *where: sa.ColumnElement) -> m.Verification | None:
    return db.exec(select(m.Verification).where(*where)
                   .order_by(m.Verification.time.desc(), m.Verification.pk.desc()).limit(1)).first()


def _frozen(row: m.Verification, now: int) -> ServiceError:
    return ServiceError(FROZEN, max(1, math.ceil((row.time + LIFETIME_MINUTES * 60 - now) / 60)))


def _expired(row: m.Verification, now: int) -> bool:
    return now - row.time > LIFETIME_MINUTES * 60


def _check_resend(db: Session, actor: Actor, to: Receiver, wait: int, now: int) -> None:
    by_receiver = _latest(db, m.Verification.receiver == to.address)
    # a visitor (sign-up) is nobody yet: counted per receiver here, and per client address by the caller
    by_user = None if actor.is_anonymous else _latest(db, m.Verification.user == actor.id,
                                                      m.Verification.type == CATEGORIES[to.kind])
    for latest in (by_receiver, by_user):
        if latest is not None and now - latest.time < wait:
            raise ServiceError("you can only send one code in %ds", wait)
    if (by_receiver is not None and by_receiver.attempts >= MAX_ATTEMPTS and not by_receiver.is_used
            and not _expired(by_receiver, now)):
        raise _frozen(by_receiver, now)


# --- the two steps ---

def send_code(db: Session, actor: Actor, dest: str, kind: str, *, country_code: str = "",
              application_id: str = "", method: str = "reset", client_ip: str = "",
              request: Request = NO_REQUEST) -> m.Verification:
    """Send a new code to `dest` for the signed-in user, and record it. The message goes out
    before the row is written: a failed send records nothing and costs no wait."""
    organization = _organization(db, actor)
    if method not in METHODS:
        raise ServiceError("The verification method %s is not supported here", str(method)[:50])
    to = receiver(actor, organization, kind, dest, country_code)
    _check_allowed(db, actor, organization, to)
    _check_unique(db, actor, to)
    return deliver(db, actor, organization, to, application_id=application_id, method=method, client_ip=client_ip,
                   request=request)


def deliver(db: Session, actor: Actor, organization: m.Organization, to: Receiver, *, application_id: str = "",
            method: str = "reset", client_ip: str = "", request: Request = NO_REQUEST) -> m.Verification:
    """Send a new code to a checked receiver through the organization's provider, under the
    resend limits, and record it (also the second factor's codes: signin/mfa.py)."""
    application = _application(db, actor, organization, application_id)
    purpose = "mfa" if method.startswith("mfa") else method if method in RULES else "reset"
    provider = find_provider(db, organization, application, to, purpose)
    now = _now()
    wait = application.code_resend_timeout if application is not None and application.code_resend_timeout > 0 \
        else RESEND_SECONDS
    _check_resend(db, actor, to, wait, now)
    code = f"{secrets.randbelow(10 ** CODE_DIGITS):0{CODE_DIGITS}d}"
    if to.kind == EMAIL_KIND:
        body = delivery.render(provider.content or f"Your verification code is %s. It expires in "
                                                   f"{LIFETIME_MINUTES} minutes.", code)
        delivery.send_email(provider, to.address, provider.title or "Verification code", body,
                            organization.display_name or organization.name)
    else:
        delivery.send_sms(provider, to.address, delivery.render(provider.template_code or "%s", code), code)
    row = m.Verification(owner=organization.name, name=str(uuid.uuid4()), remote_addr=client_ip[:100],
                         type=provider.category, user=actor.id, provider=provider.name, receiver=to.address,
                         code=code, time=now, is_used=False)
    db.add(row)
    audit(db, organization=organization.name, user=actor.id, action="send-verification-code",
          request_uri=request.uri, client_ip=client_ip, language=request.language,
          obj={"type": to.kind, "dest": to.address, "provider": provider.name, "method": method})
    return row


def check_code(db: Session, actor: Actor, to: Receiver, code: str) -> m.Verification:
    """The user's latest code for that receiver, if `code` is it. Each check is counted (and
    committed) before the comparison; a wrong code says how many checks are left."""
    if not code:
        raise ServiceError("Empty code")
    row = _latest(db, m.Verification.receiver == to.address, m.Verification.user == actor.id)
    now = _now()
    if row is None or row.is_used:
        raise ServiceError(NOT_SENT)
    if _expired(row, now):
        raise ServiceError("You should verify your code in %d min!", LIFETIME_MINUTES)
    if row.attempts >= MAX_ATTEMPTS:
        raise _frozen(row, now)
    verification = m.Verification.__table__
    counted = db.execute(sa.update(verification).where(verification.c.pk == row.pk,
                                                       verification.c.attempts < MAX_ATTEMPTS)
                         .values(attempts=verification.c.attempts + 1))
    db.commit()
    db.refresh(row)
    if counted.rowcount != 1:
        raise _frozen(row, now)
    if not hmac.compare_digest(row.code.encode(), code.strip().encode()[:100]):
        left = MAX_ATTEMPTS - row.attempts
        if left <= 0:
            raise _frozen(row, now)
        raise ServiceError("password or code is incorrect, you have %d remaining chances", left)
    return row


def spend(db: Session, row: m.Verification) -> None:
    """A checked code works once, even for two requests racing with it."""
    verification = m.Verification.__table__
    spent = db.execute(sa.update(verification).where(verification.c.pk == row.pk, verification.c.is_used.is_(False))
                       .values(is_used=True))
    if spent.rowcount != 1:
        raise ServiceError(NOT_SENT)


def reset(db: Session, actor: Actor, dest: str, kind: str, code: str, *, country_code: str = "",
          request: Request = NO_REQUEST) -> str:
    """reset-email-or-phone: the signed-in user's own email (then verified) or phone becomes
    `dest`, proven by the code, through update-user's rules (the organization's items and
    regexes). Admins set other users' addresses in the user form instead."""
    organization = _organization(db, actor)
    to = receiver(actor, organization, kind, dest, country_code)
    if not code:
        raise ServiceError("Empty code")
    _check_allowed(db, actor, organization, to)
    _check_unique(db, actor, to)
    spend(db, check_code(db, actor, to, code))
    changes = {"email": to.value, "emailVerified": True} if kind == EMAIL_KIND else \
        {"phone": to.value, "countryCode": to.region or actor.user.country_code}
    user = actor.user
    crud.update_record(db, actor, REGISTRY["user"], user.owner, user.name, changes, request, proven=PROVES[kind])
    return crud.AFFECTED
