"""Captchas (Casdoor's get-captcha and verify-captcha) for the Default type: a picture of
five digits drawn on the server (the `captcha` library). The answer never leaves the
server: the captcha id carries a nonce, an expiry and an HMAC of both with the answer under
a server key, so any worker can check an answer, and a nonce is good for one verification,
right or wrong. Other captcha types are third-party services: their settings are answered
(secrets masked), and verifying them here is refused."""

from __future__ import annotations

import base64
import hashlib
import hmac
import ipaddress
import secrets
import time
from typing import Any

from captcha.image import ImageCaptcha
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import lookup, server_keys, throttle
from iam_console.core.errors import ServiceError

DEFAULT = "Default"
DIGITS = 5
LIFETIME_SECONDS = 300
PER_ADDRESS = (60, 600)  # pictures a client address may ask for per window
WIDTH, HEIGHT = 200, 80
_drawer = ImageCaptcha(width=WIDTH, height=HEIGHT)


def _answer() -> str:
    return "".join(secrets.choice("0123456789") for _ in range(DIGITS))


def _mac(db: Session, nonce: str, expires: int, answer: str) -> str:
    key = server_keys.derived_key(db, "captcha")
    return hmac.new(key, f"{nonce}.{expires}.{answer}".encode(), hashlib.sha256).hexdigest()[:32]


def _first_captcha(db: Session, application: m.Application) -> tuple[m.Provider | None, str]:
    """The application's first Captcha provider (its organization's or a shared one) and its rule."""
    for item in application.providers or []:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        provider = db.exec(select(m.Provider).where(
            m.Provider.name == item["name"], m.Provider.category == "Captcha",
            m.Provider.owner.in_((application.organization, b.ADMIN_OWNER)))).first()
        if provider is not None:
            return provider, str(item.get("rule") or "")
    return None, ""


def _internal(client_ip: str) -> bool:
    try:
        return not ipaddress.ip_address(client_ip).is_global
    except ValueError:
        return False


def _asked_of(db: Session, application: m.Application, client_ip: str) -> m.Provider | None:
    """The captcha provider a client must pass on the application's pages, or None (rule None,
    or Internet-Only for a client on an internal address)."""
    provider, rule = _first_captcha(db, application)
    if provider is None or rule in ("", "None") or (rule == "Internet-Only" and _internal(client_ip)):
        return None
    return provider


def check(db: Session, application: m.Application, client_ip: str, captcha_type: str, token: str,
          captcha_id: str) -> None:
    """Refuse a request the application's captcha asks for, unless it carries a solved one
    (send-verification-code's captchaType, captchaToken and, for Default, the captcha id as
    clientSecret). A third-party type cannot be checked here, so it is refused."""
    provider = _asked_of(db, application, client_ip)
    if provider is None:
        return
    if captcha_type != provider.type or provider.type != DEFAULT or not verify(db, DEFAULT, token, captcha_id):
        raise ServiceError("Turing test failed.")


def challenge(db: Session, application_id: str, client_ip: str) -> dict[str, Any]:
    """get-captcha: what the application's sign-up or sign-in page shows: none (rule None, or
    Internet-Only for a client on an internal address), a Default picture, or another type's
    public settings."""
    name = application_id.split("/", 1)[1] if "/" in application_id else application_id
    application = lookup.application(db, name) if name else None
    if application is None:
        raise ServiceError("The application: %s does not exist", application_id[:200])
    provider = _asked_of(db, application, client_ip)
    if provider is None:
        return {"type": "none"}
    answer = {"owner": provider.owner, "name": provider.name, "type": provider.type}
    if provider.type != DEFAULT:
        return {**answer, "subType": provider.sub_type, "clientId": provider.client_id, "clientSecret": "***",
                "clientId2": provider.client_id2, "clientSecret2": "***"}
    return {**answer, **picture(db, client_ip)}


def picture(db: Session, client_ip: str) -> dict[str, str]:
    """A new Default captcha: its id (what verify checks an answer against) and its picture
    (PNG, base64), counted against the asking address."""
    throttle.hit(db, f"captcha:{client_ip}", *PER_ADDRESS, throttle.TOO_MANY_REQUESTS)
    digits, nonce, expires = _answer(), secrets.token_hex(12), int(time.time()) + LIFETIME_SECONDS
    drawn = _drawer.generate(digits).getvalue()
    return {"captchaId": f"{nonce}.{expires}.{_mac(db, nonce, expires, digits)}",
            "captchaImage": base64.b64encode(drawn).decode()}


def verify(db: Session, captcha_type: str, token: str, captcha_id: str) -> bool:
    """verify-captcha: whether `token` is the answer of `captcha_id`; the id is spent either way."""
    if captcha_type != DEFAULT:
        raise ServiceError("The captcha type %s is not supported here", captcha_type[:100])
    if not token or not captcha_id:
        raise ServiceError("The captcha id and answer cannot be empty")
    nonce, _, rest = captcha_id.partition(".")
    expires_text, _, mac = rest.partition(".")
    if not expires_text.isdigit() or not mac or len(nonce) != 24:
        return False
    expires = int(expires_text)
    if expires < time.time() or not throttle.claim(db, f"captcha-used:{nonce}", LIFETIME_SECONDS):
        return False
    return hmac.compare_digest(mac, _mac(db, nonce, expires, token.strip()))
