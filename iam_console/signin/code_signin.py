"""Sign-in with a verification code: the application's signin method "Verification code"
(rule All, Email only or Phone only; docs/api.md, "Signing in with a code").

1. `send_code` (send-verification-code, method login): a code to the email or phone a visitor
   typed, when it is the address of an account of the application's organization; after the
   application's captcha, and counted against the client address.
2. `sign_in` (/api/login with signinMethod "Verification code", `username` the address and
   `code`): the account's latest code for that address, checked and spent under the code limits
   and the failed sign-in limit; an email proven this way becomes verified. An account with a
   second factor owes it, as after a password."""

from __future__ import annotations

import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import lookup, throttle
from iam_console.core.access import Actor
from iam_console.core.crud import NO_REQUEST, Request
from iam_console.core.errors import ServiceError
from iam_console.signin import auth, captcha, mfa_props, verifications

METHOD = "Verification code"
KINDS_BY_RULE = {"All": {"email", "phone"}, "Email only": {"email"}, "Phone only": {"phone"}}
NOT_ENABLED = {"email": "The login method: login with email is not enabled for the application",
               "phone": "The login method: login with SMS is not enabled for the application"}
SENDS_PER_ADDRESS = (30, 600)


def kinds(application: m.Application) -> set[str]:
    """The addresses the application's "Verification code" method signs in with."""
    for method in application.signin_methods or []:
        if isinstance(method, dict) and method.get("name") == METHOD:
            return set(KINDS_BY_RULE.get(str(method.get("rule") or "All"), set()))
    return set()


def kind_of(address: str) -> str:
    return verifications.EMAIL_KIND if "@" in address else verifications.PHONE_KIND


def _account(db: Session, application: m.Application, organization: m.Organization, address: str,
             country_code: str) -> tuple[m.User, verifications.Receiver]:
    """The account whose own email or phone `address` is (an email in any case, a phone in any
    format of its number), and that address as a receiver."""
    kind = kind_of(address)
    if kind not in kinds(application):
        raise ServiceError(NOT_ENABLED[kind])
    typed = address.strip()[:100]
    to = verifications.receiver(Actor(), organization, kind, typed, country_code)
    if kind == verifications.EMAIL_KIND:
        match = [sa.func.lower(m.User.email) == to.address.lower()]
    else:
        match = [m.User.phone.in_((to.value, to.address)), m.User.country_code.in_((to.region, ""))]
    users = db.exec(select(m.User).where(m.User.owner == organization.name, *match).limit(2)).all()
    if len(users) != 1 or users[0].is_deleted:
        raise ServiceError("The user: %s doesn't exist", f"{organization.name}/{typed}")
    user = users[0]
    own = user.email if kind == verifications.EMAIL_KIND else user.phone
    return user, verifications.receiver(Actor(user=user), organization, kind, own, user.country_code or to.region)


def send_code(db: Session, application_id: str, address: str, *, country_code: str = "", captcha_type: str = "",
              captcha_token: str = "", captcha_id: str = "", client_ip: str = "",
              request: Request = NO_REQUEST) -> None:
    name = application_id.split("/", 1)[1] if "/" in application_id else application_id
    application = lookup.application(db, name[:100]) if name else None
    if application is None:
        raise ServiceError("The application: %s does not exist", application_id[:200])
    if not address.strip():
        raise ServiceError(verifications.EMPTY_DEST[kind_of(address)])
    captcha.check(db, application, client_ip, captcha_type, captcha_token, captcha_id)
    throttle.hit(db, f"code-signin:{client_ip}", *SENDS_PER_ADDRESS, throttle.TOO_MANY_CODES)
    organization = lookup.organization(db, application.organization)
    if organization is None:
        raise ServiceError("The organization: %s does not exist", application.organization)
    user, to = _account(db, application, organization, address, country_code)
    if user.is_forbidden:
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    verifications.deliver(db, Actor(user=user), organization, to, application_id=application.name, method="login",
                          client_ip=client_ip, request=request)


def sign_in(db: Session, req: auth.SignInRequest, code: str, country_code: str = "",
            ) -> auth.SignedIn | auth.SecondFactorOwed:
    application, organization = auth.resolve_application(db, req.application, req.organization)
    user, to = _account(db, application, organization, req.username, country_code)
    auth.refuse_if_frozen(db, user, application)
    row = verifications.check_code(db, Actor(user=user), to, code)
    verifications.spend(db, row)
    if user.is_forbidden:
        raise ServiceError("The user is forbidden to sign in, please contact the administrator")
    if to.kind == verifications.EMAIL_KIND and not user.email_verified:
        user.email_verified = True
        db.add(user)
    if mfa_props.enabled_types(user):
        return auth.owe_second_factor(db, user, application, req)
    return auth.complete_sign_in(db, user, organization, application, auto_signin=req.auto_signin,
                                 client_ip=req.client_ip, user_agent=req.user_agent,
                                 previous_token=req.previous_token, signin_method=METHOD)
