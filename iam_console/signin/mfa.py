"""Multi-factor authentication: setting a second factor up, and checking its codes
(Casdoor's mfa/setup/*, set-preferred-mfa, delete-mfa).

- Types: app (TOTP through pyotp), email and sms (codes sent through the organization's
  providers and recorded as Verifications, signin/verifications.py). One method per
  type, at most one preferred; delete removes them all.
- Setup is the user's own: initiate, verify a code, enable. The secret lives server-side
  between initiate and enable (an MfaSetup row, 10 minutes): the TOTP seed the server
  chose, or the user's own email or phone. A secret sent back by the client is only
  accepted when it is that one, and enable stores only a setup a code has proven.
- An admin of the user's organization may enable email or sms for another user (their
  address must be set: 'Please input your Email!' / 'Please input your phone
  number!'), never the app type, and cannot set anything up for them.
- One recovery code is made at initiate, shown once (initiate's answer), stored as its
  SHA-256: it is a random UUID (122 bits), so a slow password hash would add nothing but
  cost; a fast hash keeps the check cheap and the stored value useless. It works once.
- Every code check (setup or sign-in, a code or a recovery code) counts against the
  account and against the client address before anything is compared
  (core/throttle.py); a TOTP code works once in its time step; email and SMS codes
  expire after 10 minutes and work once (signin/verifications.py).
"""

from __future__ import annotations

import hashlib
import hmac
import time
import uuid
from datetime import timedelta
from urllib.parse import quote

import pyotp
from sqlmodel import Session, delete, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import lookup, throttle
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request
from iam_console.core.errors import ServiceError, Unauthorized
from iam_console.models.base import utcnow
from iam_console.signin import verifications
from iam_console.signin.mfa_props import (
    APP,
    EMAIL,
    SMS,
    TYPES,
    all_props,
    enabled,
    enabled_types,
    mask_email,
    mask_phone,
)

SETUP_MINUTES = 10
TOTP_STEP = 30
# every code check, per account and per client address, in a 10-minute window
CHECKS_PER_ACCOUNT = 10
CHECKS_PER_ADDRESS = 30
CHECK_WINDOW_SECONDS = 600
QR_URL_LIMIT = 2000
KIND_OF = {EMAIL: verifications.EMAIL_KIND, SMS: verifications.PHONE_KIND}
NO_EMAIL = "Please input your Email!"
NO_PHONE = "Please input your phone number!"
WRONG_CODE = "The passcode is incorrect"
NOT_VERIFIED = "Please verify the passcode first: the setup was not started, has expired or is not proven"


def check_type(mfa_type: str) -> str:
    if mfa_type not in TYPES:
        raise ServiceError("Invalid multi-factor authentication type")
    return mfa_type


def hash_recovery_code(code: str) -> str:
    return "sha256:" + hashlib.sha256(code.strip().lower().encode()).hexdigest()


def _target(db: Session, actor: Actor, owner: str, name: str) -> tuple[m.User, bool]:
    """The user named, and whether the caller is that user. Others: an admin of the user's
    organization (or a global admin). Nobody learns whether a user they may not manage exists."""
    if actor.is_anonymous:
        raise Unauthorized()
    if not owner or not name:
        raise ServiceError("Bad Request")
    is_self = actor.user is not None and (actor.user.owner, actor.user.name) == (owner, name)
    if not is_self and not (actor.is_global_admin or (actor.is_org_admin and actor.organization == owner)):
        raise ServiceError("Unauthorized operation")
    user = lookup.user(db, owner, name)
    if user is None or user.is_deleted:
        raise ServiceError("User doesn't exist")
    return user, is_self


def _address(user: m.User, mfa_type: str) -> str:
    """Where email and sms codes go: the account's own address, which must be set."""
    if mfa_type == EMAIL:
        if not user.email:
            raise ServiceError(NO_EMAIL)
        return user.email
    if not user.phone:
        raise ServiceError(NO_PHONE)
    return user.phone


def _receiver(db: Session, user: m.User, mfa_type: str) -> verifications.Receiver:
    organization = lookup.organization(db, user.owner)
    return verifications.receiver(Actor(user=user), organization, KIND_OF[mfa_type], _address(user, mfa_type),
                                  user.country_code)


def _setup(db: Session, user: m.User, mfa_type: str) -> m.MfaSetup | None:
    row = db.exec(select(m.MfaSetup).where(m.MfaSetup.owner == user.owner, m.MfaSetup.user_name == user.name,
                                           m.MfaSetup.mfa_type == mfa_type)).first()
    if row is not None and row.expires_at <= utcnow():
        db.delete(row)
        db.flush()
        return None
    return row


def _save(db: Session, user: m.User) -> None:
    user.multi_factor_auths = all_props(user)
    user.updated_time = utcnow()
    db.add(user)


def _audit(db: Session, actor: Actor, user: m.User, action: str, request: Request, **obj: object) -> None:
    audit(db, organization=user.owner, user=actor.id, action=action, request_uri=request.uri,
          client_ip=request.client_ip, language=request.language,
          obj={"owner": user.owner, "name": user.name, **obj})


# --- checks shared by setup and sign-in ---

def limit_checks(db: Session, user: m.User, client_ip: str) -> None:
    """Count one code check against the account and the client address (committed);
    refuse it past either limit, before anything is compared."""
    throttle.hit(db, f"code-check:user:{user.owner}/{user.name}", CHECKS_PER_ACCOUNT, CHECK_WINDOW_SECONDS,
                 throttle.FROZEN)
    throttle.hit(db, f"code-check:ip:{client_ip or '-'}", CHECKS_PER_ADDRESS, CHECK_WINDOW_SECONDS,
                 throttle.FROZEN)


def _totp_matches(db: Session, user: m.User, secret: str, passcode: str) -> bool:
    """The code of the current time step or a neighbour (valid_window=1), each step once:
    a code already used is refused even while it is still current."""
    code = "".join(passcode.split())
    if not code.isdigit() or len(code) != 6:
        return False
    totp = pyotp.TOTP(secret)
    now = int(time.time()) // TOTP_STEP
    for step in (now, now - 1, now + 1):
        if hmac.compare_digest(totp.at(step * TOTP_STEP), code):
            if not throttle.claim(db, f"totp-used:{user.owner}/{user.name}:{step}", 3 * TOTP_STEP):
                raise ServiceError("This code has already been used, please wait for the next one")
            return True
    return False


def _code_matches(db: Session, user: m.User, mfa_type: str, passcode: str) -> bool:
    """An email or SMS code sent to the account's address: the latest one, unexpired, once."""
    row = verifications.check_code(db, Actor(user=user), _receiver(db, user, mfa_type), passcode.strip())
    verifications.spend(db, row)
    return True


def check_sign_in_code(db: Session, user: m.User, mfa_type: str, passcode: str, client_ip: str) -> bool:
    """Whether `passcode` is the account's second factor of that (enabled) type."""
    check_type(mfa_type)
    if not enabled(user, mfa_type):
        raise ServiceError("The multi-factor authentication type %s is not enabled for this account", mfa_type)
    if not passcode:
        raise ServiceError("missing passcode or recovery code")
    limit_checks(db, user, client_ip)
    if mfa_type == APP:
        return _totp_matches(db, user, user.totp_secret, passcode)
    try:
        return _code_matches(db, user, mfa_type, passcode)
    except ServiceError as exc:
        if exc.template.startswith("password or code is incorrect"):
            return False  # the caller counts it as a failed sign-in
        raise


def use_recovery_code(db: Session, user: m.User, code: str, client_ip: str) -> bool:
    """Whether `code` is one of the account's recovery codes; a right one is spent."""
    if not code:
        raise ServiceError("missing passcode or recovery code")
    limit_checks(db, user, client_ip)
    wanted = hash_recovery_code(code[:100])
    stored = [c for c in user.recovery_codes or [] if isinstance(c, str)]
    if not any(hmac.compare_digest(c.encode(), wanted.encode()) for c in stored):
        return False
    # two requests racing with the same code: only one claims it
    if not throttle.claim(db, f"recovery-used:{user.owner}/{user.name}:{wanted}", 86400):
        return False
    user.recovery_codes = [c for c in stored if c != wanted]
    _save(db, user)
    return True


def send_code(db: Session, user: m.User, mfa_type: str, *, client_ip: str = "",
              request: Request = NO_REQUEST) -> str:
    """Send an email or SMS code to the account's own address (setup or sign-in);
    the masked address it went to."""
    if check_type(mfa_type) == APP:
        raise ServiceError("The app type needs no code to be sent")
    organization = lookup.organization(db, user.owner)
    to = _receiver(db, user, mfa_type)
    verifications.deliver(db, Actor(user=user), organization, to, method="mfaAuth", client_ip=client_ip,
                          request=request)
    return mask_email(to.address) if mfa_type == EMAIL else mask_phone(to.address)


# --- setup ---

def initiate(db: Session, actor: Actor, owner: str, name: str, mfa_type: str,
             request: Request = NO_REQUEST) -> dict:
    """Start setting a type up for yourself: a new TOTP seed (with its otpauth URL) or the
    account's address, and the recovery code, shown here once."""
    check_type(mfa_type)
    user, is_self = _target(db, actor, owner, name)
    if not is_self:
        raise ServiceError("Only the user may set up multi-factor authentication for their account")
    if enabled(user, mfa_type):
        raise ServiceError("The multi-factor authentication type %s is already enabled", mfa_type)
    organization = lookup.organization(db, user.owner)
    issuer = (organization.display_name or organization.name) if organization else user.owner
    url = ""
    if mfa_type == APP:
        secret = pyotp.random_base32()
        url = pyotp.TOTP(secret).provisioning_uri(name=f"{user.owner}/{user.name}", issuer_name=issuer)
    else:
        secret = _address(user, mfa_type)
    recovery_code = str(uuid.uuid4())
    db.exec(delete(m.MfaSetup).where(m.MfaSetup.owner == user.owner, m.MfaSetup.user_name == user.name,
                                     m.MfaSetup.mfa_type == mfa_type))
    db.add(m.MfaSetup(owner=user.owner, user_name=user.name, mfa_type=mfa_type, secret=secret,
                      recovery_code_hash=hash_recovery_code(recovery_code), verified=False,
                      expires_at=utcnow() + timedelta(minutes=SETUP_MINUTES)))
    _audit(db, actor, user, "mfa-setup-initiate", request, mfaType=mfa_type)
    shown = secret if mfa_type == APP else (mask_email(secret) if mfa_type == EMAIL else mask_phone(secret))
    props = {"enabled": False, "isPreferred": False, "mfaType": mfa_type, "secret": shown, "url": url,
             "recoveryCodes": [recovery_code],
             "mfaRememberInHours": organization.mfa_remember_in_hours if organization else 0}
    if mfa_type == SMS:
        props["countryCode"] = user.country_code
    return props


def send_setup_code(db: Session, actor: Actor, mfa_type: str, *, client_ip: str = "",
                    request: Request = NO_REQUEST) -> str:
    """The code of an email or sms setup the signed-in user initiated, to its address."""
    if actor.user is None:
        raise Unauthorized() if actor.is_anonymous else ServiceError("Unauthorized operation")
    user = actor.user
    setup = _setup(db, user, check_type(mfa_type))
    if setup is None:
        raise ServiceError(NOT_VERIFIED)
    return send_code(db, user, mfa_type, client_ip=client_ip, request=request)


def verify(db: Session, actor: Actor, owner: str, name: str, mfa_type: str, passcode: str, *,
           secret: str = "", client_ip: str = "") -> None:
    """Prove the setup in progress with a code: from the authenticator app for the seed
    issued at initiate, or the one sent to the account's address."""
    check_type(mfa_type)
    if not passcode:
        raise ServiceError("missing auth type or passcode")
    user, is_self = _target(db, actor, owner, name)
    if not is_self:
        raise ServiceError("Only the user may set up multi-factor authentication for their account")
    setup = _setup(db, user, mfa_type)
    if setup is None:
        raise ServiceError(NOT_VERIFIED)
    if mfa_type == APP and secret and not hmac.compare_digest(secret.encode(), setup.secret.encode()):
        raise ServiceError("The secret is not the one issued for this setup")
    limit_checks(db, user, client_ip)
    if mfa_type == APP:
        if not _totp_matches(db, user, setup.secret, passcode):
            raise ServiceError(WRONG_CODE)
    else:
        _code_matches(db, user, mfa_type, passcode)
    setup.verified = True
    db.add(setup)


def enable(db: Session, actor: Actor, owner: str, name: str, mfa_type: str, *, secret: str = "",
           recovery_code: str = "", request: Request = NO_REQUEST) -> None:
    """Turn a type on: your own proven setup, or (an admin, for another user) email or sms
    at the address the account already has."""
    check_type(mfa_type)
    user, is_self = _target(db, actor, owner, name)
    if is_self:
        setup = _setup(db, user, mfa_type)
        if setup is None or not setup.verified:
            raise ServiceError(NOT_VERIFIED)
        if mfa_type == APP and secret and not hmac.compare_digest(secret.encode(), setup.secret.encode()):
            raise ServiceError("The secret is not the one issued for this setup")
        if recovery_code and not hmac.compare_digest(hash_recovery_code(recovery_code[:100]).encode(),
                                                     setup.recovery_code_hash.encode()):
            raise ServiceError("The recovery code is not the one issued for this setup")
        if mfa_type != APP and setup.secret != _address(user, mfa_type):
            raise ServiceError(NOT_VERIFIED)  # the address changed since the code proved it
        user.recovery_codes = [setup.recovery_code_hash]
        db.delete(setup)
        if mfa_type == APP:
            user.totp_secret = setup.secret
    elif mfa_type == APP:
        raise ServiceError("An admin cannot enable the app type for another user: only the user can set it up")
    else:
        _address(user, mfa_type)
    if mfa_type == EMAIL:
        user.mfa_email_enabled = True
    elif mfa_type == SMS:
        user.mfa_phone_enabled = True
    if not enabled(user, user.preferred_mfa_type):
        user.preferred_mfa_type = mfa_type
    _save(db, user)
    _audit(db, actor, user, "mfa-setup-enable", request, mfaType=mfa_type)


def set_preferred(db: Session, actor: Actor, owner: str, name: str, mfa_type: str,
                  request: Request = NO_REQUEST) -> list[dict]:
    check_type(mfa_type)
    user, _ = _target(db, actor, owner, name)
    if not enabled(user, mfa_type):
        raise ServiceError("The multi-factor authentication type %s is not enabled for this account", mfa_type)
    user.preferred_mfa_type = mfa_type
    _save(db, user)
    _audit(db, actor, user, "set-preferred-mfa", request, mfaType=mfa_type)
    return all_props(user)


def delete_all(db: Session, actor: Actor, owner: str, name: str, request: Request = NO_REQUEST) -> list[dict]:
    """Disable: every method, the preference and the recovery codes go."""
    user, _ = _target(db, actor, owner, name)
    user.preferred_mfa_type = ""
    user.recovery_codes = []
    user.totp_secret = ""
    user.mfa_email_enabled = user.mfa_phone_enabled = False
    db.exec(delete(m.MfaSetup).where(m.MfaSetup.owner == user.owner, m.MfaSetup.user_name == user.name))
    _save(db, user)
    _audit(db, actor, user, "delete-mfa", request)
    return all_props(user)


# --- the organization's MFA items ---

ITEM_TYPES = {"Phone": SMS, "Email": EMAIL, "App": APP}


def rule_for(organization: m.Organization | None, user: m.User) -> str:
    """'Required' when an item the user has not enabled is Required, else 'Prompt' when one
    is Prompt, else ''. A user with any method enabled meets both."""
    if organization is None or enabled_types(user):
        return ""
    rules = {str(item.get("rule")) for item in organization.mfa_items or []
             if isinstance(item, dict) and item.get("name") in ITEM_TYPES}
    return "Required" if "Required" in rules else "Prompt" if "Prompt" in rules else ""


def setup_type(organization: m.Organization | None) -> str:
    """The type the Required (else Prompt) item names: where the console sends the user."""
    items = [i for i in (organization.mfa_items if organization else []) or [] if isinstance(i, dict)]
    for rule in ("Required", "Prompt"):
        for item in items:
            if item.get("rule") == rule and item.get("name") in ITEM_TYPES:
                return ITEM_TYPES[item["name"]]
    return APP


def required_setup_path(organization: m.Organization | None, user: m.User, return_path: str) -> str:
    """Where an account that must set up MFA goes instead of an application (the authorize
    page issues no code until then), coming back to `return_path`; '' when nothing is owed."""
    if rule_for(organization, user) != "Required":
        return ""
    return f"/mfa/setup?mfaType={setup_type(organization)}&from={quote(return_path, safe='')}"


def qr_svg(url: str) -> str:
    """The QR code of an otpauth URL, as SVG markup made here (no network)."""
    import io

    import qrcode
    import qrcode.image.svg

    if not url:
        raise ServiceError("Access token is empty")
    if len(url) > QR_URL_LIMIT:
        raise ServiceError("QR code is too large")
    out = io.BytesIO()
    qrcode.make(url, image_factory=qrcode.image.svg.SvgPathImage, box_size=8).save(out)
    return out.getvalue().decode()
