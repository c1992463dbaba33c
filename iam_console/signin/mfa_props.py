"""Casdoor's MfaProps of a user, from the user's own fields (no other service needed,
so saving a user can keep its `multiFactorAuths` list current: identity/kinds/user.py).

One entry per type, in Casdoor's order (sms, email, app): {enabled, isPreferred,
mfaType, secret, countryCode, url, recoveryCodes, mfaRememberInHours}; the secret is
the masked phone or email, never a TOTP seed."""

from __future__ import annotations

from iam_console.models import User

SMS, EMAIL, APP = "sms", "email", "app"
TYPES = (SMS, EMAIL, APP)


def mask_email(email: str) -> str:
    name, at, domain = email.partition("@")
    if not at:
        return mask_phone(email)
    return (name[:1] + "***" + name[-1:] if len(name) > 2 else name[:1] + "***") + "@" + domain


def mask_phone(phone: str) -> str:
    return phone[:3] + "****" + phone[-4:] if len(phone) > 7 else "***"


def enabled(user: User, mfa_type: str) -> bool:
    if mfa_type == SMS:
        return bool(user.mfa_phone_enabled)
    if mfa_type == EMAIL:
        return bool(user.mfa_email_enabled)
    return mfa_type == APP and bool(user.totp_secret)


def enabled_types(user: User) -> list[str]:
    return [t for t in TYPES if enabled(user, t)]


def props(user: User, mfa_type: str) -> dict:
    on = enabled(user, mfa_type)
    entry = {"enabled": on, "isPreferred": on and user.preferred_mfa_type == mfa_type, "mfaType": mfa_type,
             "mfaRememberInHours": 0}
    if on and mfa_type == SMS:
        entry.update(secret=mask_phone(user.phone), countryCode=user.country_code)
    elif on and mfa_type == EMAIL:
        entry["secret"] = mask_email(user.email)
    return entry


def all_props(user: User) -> list[dict]:
    return [props(user, t) for t in TYPES]
