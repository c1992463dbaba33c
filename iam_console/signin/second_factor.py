"""The second step of a sign-in: a pending sign-in (what `auth.sign_in` opens for an account
with a second factor) finished with a code of an enabled method or a recovery code, which
opens the console session through `auth.complete_sign_in` as a password alone would."""

from __future__ import annotations

from dataclasses import dataclass

from sqlmodel import Session, update

from iam_console.core import lookup
from iam_console.core.errors import ServiceError
from iam_console.models import PendingSignIn
from iam_console.signin import auth, mfa, mfa_props


@dataclass(frozen=True)
class Answer:
    pending_token: str
    passcode: str = ""
    mfa_type: str = ""
    recovery_code: str = ""
    application: str = ""  # when given (an authorization request's), the pending sign-in must be for it
    client_ip: str = ""
    user_agent: str = ""
    previous_token: str = ""


def send_code(db: Session, token: str, mfa_type: str, client_ip: str = "") -> str:
    """An email or SMS code for a pending sign-in, to the account's own address (masked in the answer)."""
    found = auth.pending_user(db, token)
    if found is None:
        raise ServiceError(auth.PENDING_EXPIRED)
    _, user = found
    if not mfa_props.enabled(user, mfa.check_type(mfa_type)):
        raise ServiceError("The multi-factor authentication type %s is not enabled for this account", mfa_type)
    return mfa.send_code(db, user, mfa_type, client_ip=client_ip)


def complete(db: Session, answer: Answer) -> auth.SignedIn:
    """Finish a pending sign-in with a code of an enabled method (the preferred one when no
    type is named) or a recovery code. Each try counts against the pending sign-in (5 at
    most), the account's failed sign-in limit, and the code-check limits of signin/mfa.py."""
    found = auth.pending_user(db, answer.pending_token)
    if found is None:
        raise ServiceError(auth.PENDING_EXPIRED)
    row, user = found
    if answer.application and answer.application != row.application:
        raise ServiceError("The sign-in in progress is for another application")
    application = lookup.application(db, row.application)
    organization = lookup.organization(db, user.owner)
    if application is None or organization is None:
        raise ServiceError(auth.PENDING_EXPIRED)
    auth.refuse_if_frozen(db, user, application)
    passcode, recovery_code = answer.passcode.strip(), answer.recovery_code.strip()
    if not (passcode or recovery_code):  # nothing to compare: costs no attempt
        raise ServiceError("missing passcode or recovery code")
    counted = db.exec(update(PendingSignIn).where(PendingSignIn.pk == row.pk,
                                                  PendingSignIn.attempts < auth.MAX_PENDING_ATTEMPTS)
                      .values(attempts=PendingSignIn.attempts + 1))
    db.commit()
    if counted.rowcount != 1:
        db.delete(row)
        db.commit()
        raise ServiceError(auth.PENDING_EXPIRED)
    if passcode:
        mfa_type = answer.mfa_type or user.preferred_mfa_type or (mfa_props.enabled_types(user) or [""])[0]
        passed = mfa.check_sign_in_code(db, user, mfa_type, passcode[:100], answer.client_ip)
        method = mfa_type
    else:
        passed = mfa.use_recovery_code(db, user, recovery_code, answer.client_ip)
        method = "recovery"
    if not passed:
        raise auth.count_failure(db, user, application)
    user.signin_wrong_times = 0
    user.last_signin_wrong_time = None
    db.delete(row)
    return auth.complete_sign_in(db, user, organization, application, auto_signin=row.auto_signin,
                                 client_ip=answer.client_ip, user_agent=answer.user_agent,
                                 previous_token=answer.previous_token,
                                 signin_method=f"{row.signin_method}+{method}")
