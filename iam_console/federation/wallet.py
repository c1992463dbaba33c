"""Wallet sign-in (Web3 providers MetaMask and Web3Onboard; docs/security.md, "Wallet sign-in").

1. `issue_nonce` (/api/web3/nonce): for an application, one of its providers of category Web3 and
   the wallet's address, a random nonce and the EIP-712 typed data holding it with its creation
   time, the domain naming this server; the wallet signs that (eth_signTypedData_v4). The nonce is
   kept (hashed) for 5 minutes and works once.
2. `sign_in` (/api/login with `provider` and `code`, the Web3 auth token as JSON: address, nonce,
   createAt, typedData, signature, walletType): the nonce is spent first, whatever follows; the
   signed data must be the data issued for it, and its signature must recover to the address.
   Then the address is an upstream identity of the provider (federation/federation.py): the
   account linked to it signs in, or one is signed up where the application's provider row
   allows it; a second factor is owed as after a password."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import secrets
import sys
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

from sqlmodel import Session, delete, select, update

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import page_script, throttle
from iam_console.core.errors import ServiceError
from iam_console.core.json_input import parse_json
from iam_console.federation import federation
from iam_console.models.base import utcnow
from iam_console.operations import metrics
from iam_console.settings import settings
from iam_console.signin import auth, mfa_props

# eth-account's py_ecc raises the interpreter's recursion limit to 100,000 when it is imported,
# for the whole process. The C JSON parser recurses on the C stack up to that limit, so a deeply
# nested request body would crash the worker instead of raising RecursionError: the limit is put
# back (docs/security.md, "Input").
_RECURSION_LIMIT = sys.getrecursionlimit()
from eth_account import Account  # noqa: E402
from eth_account.messages import encode_typed_data  # noqa: E402

sys.setrecursionlimit(_RECURSION_LIMIT)


CATEGORY = "Web3"
METHOD = "Web3"  # the sign-in method sessions and records name
NONCE_MINUTES = 5
NONCES_PER_CLIENT = (30, 600)  # nonces a client address may ask for per 10 minutes
MAX_TOKEN = 20_000  # characters of the Web3 auth token a sign-in may post
ADDRESS = re.compile(r"0x[0-9a-fA-F]{40}")
PROMPT = ("In order to authenticate to this website, sign this request and your public address will be sent to "
          "the server in a verifiable way.")
TYPES = {
    "EIP712Domain": [{"name": "name", "type": "string"}, {"name": "version", "type": "string"},
                     {"name": "chainId", "type": "uint256"}],
    "AuthRequest": [{"name": "prompt", "type": "string"}, {"name": "application", "type": "string"},
                    {"name": "nonce", "type": "string"}, {"name": "createAt", "type": "string"}],
}

BAD_TOKEN = "The Web3 auth token is not valid"
UNKNOWN_NONCE = "The nonce is unknown or has already been used, please sign in again"
EXPIRED_NONCE = "The nonce has expired, please sign in again"
OTHER_DATA = "The signed data is not the data issued for this nonce"
BAD_SIGNATURE = "The signature does not match the address"


def _hash(nonce: str) -> str:
    return hashlib.sha256(nonce.encode()).hexdigest()


def _address(value: Any) -> str:
    if not isinstance(value, str) or not ADDRESS.fullmatch(value):
        raise ServiceError("The address is not a valid Ethereum address")
    return value.lower()


def _chain_id(value: Any) -> int:
    """The wallet's chain (eth_chainId: a hex string; a number is taken too)."""
    try:
        chain = int(value, 16) if isinstance(value, str) and value.lower().startswith("0x") else int(value)
    except (TypeError, ValueError, OverflowError):
        raise ServiceError("The chain id is not valid") from None
    if isinstance(value, bool) or not 0 < chain < 2**63:
        raise ServiceError("The chain id is not valid")
    return chain


def _provider(db: Session, application_name: str, organization_name: str, provider_name: str,
              ) -> tuple[m.Application, m.Organization, m.Provider, federation.ProviderRow]:
    application, organization = auth.resolve_application(db, application_name, organization_name)
    provider, row = federation.provider_of(db, application, provider_name, (CATEGORY,))
    return application, organization, provider, row


def is_wallet(db: Session, application_name: str, organization_name: str, provider_name: str) -> bool:
    """Whether /api/login's `provider` names a Web3 provider (the application's own, or shared)."""
    try:
        application, _ = auth.resolve_application(db, application_name, organization_name)
    except ServiceError:
        return False
    provider = db.exec(select(m.Provider.category).where(
        m.Provider.name == provider_name[:100],
        m.Provider.owner.in_((application.organization, b.ADMIN_OWNER)))).first()
    return provider == CATEGORY


def typed_data(application: m.Application, nonce: str, created: str, chain_id: int) -> dict:
    """What the wallet signs: the domain names this server (its host), the message the
    application signed in to, the nonce and when it was issued."""
    return {"types": TYPES, "primaryType": "AuthRequest",
            "domain": {"name": urlsplit(settings.origin).netloc or settings.origin, "version": "1",
                       "chainId": chain_id},
            "message": {"prompt": PROMPT, "application": application.name, "nonce": nonce, "createAt": created}}


def issue_nonce(db: Session, application_name: str, organization_name: str, provider_name: str, address: Any,
                chain_id: Any, client_ip: str = "") -> dict:
    """A nonce for one wallet sign-in, and the typed data to sign (as a JSON string, the way
    eth_signTypedData_v4 takes it)."""
    checked_address, chain = _address(address), _chain_id(chain_id)
    application, _, provider, row = _provider(db, application_name, organization_name, provider_name)
    if not row.can_sign_in:
        raise ServiceError(federation.NO_SIGN_IN, provider.name, application.name)
    throttle.hit(db, f"web3-nonce:{client_ip}", *NONCES_PER_CLIENT, throttle.TOO_MANY_REQUESTS)
    now = utcnow()
    db.exec(delete(m.Web3Nonce).where(m.Web3Nonce.expires_at <= now))
    nonce = secrets.token_urlsafe(24)
    data = json.dumps(typed_data(application, nonce, now.strftime("%Y-%m-%dT%H:%M:%SZ"), chain),
                      separators=(",", ":"))
    db.add(m.Web3Nonce(nonce_hash=_hash(nonce), application=application.name, provider=provider.name,
                       address=checked_address, typed_data=data, client_ip=client_ip[:100], created_at=now,
                       expires_at=now + timedelta(minutes=NONCE_MINUTES)))
    return {"nonce": nonce, "typedData": data, "createAt": int(now.timestamp())}


def _token(code: str) -> dict:
    if not isinstance(code, str) or len(code) > MAX_TOKEN:
        raise ServiceError(BAD_TOKEN)
    try:
        token = parse_json(code)
    except ValueError:
        raise ServiceError(BAD_TOKEN) from None
    if not isinstance(token, dict) or not all(isinstance(token.get(k), str) and token.get(k)
                                              for k in ("address", "nonce", "typedData", "signature")):
        raise ServiceError(BAD_TOKEN)
    return token


def _spend(db: Session, nonce: str, application: m.Application, provider: m.Provider) -> m.Web3Nonce:
    """The nonce's row, marked used (committed at once: a refused signature still spends it)."""
    row = db.exec(select(m.Web3Nonce).where(m.Web3Nonce.nonce_hash == _hash(nonce))).first()
    if row is None or row.used or row.application != application.name or row.provider != provider.name:
        raise ServiceError(UNKNOWN_NONCE)
    if row.expires_at <= utcnow():
        db.delete(row)
        db.commit()
        raise ServiceError(EXPIRED_NONCE)
    taken = db.exec(update(m.Web3Nonce).where(m.Web3Nonce.pk == row.pk, m.Web3Nonce.used.is_(False))
                    .values(used=True)).rowcount
    db.commit()
    if taken != 1:  # another request spent it first
        raise ServiceError(UNKNOWN_NONCE)
    return row


def recover(data: dict, signature: str) -> str:
    """The address whose key made `signature` over the EIP-712 typed data (lower-cased)."""
    try:
        signable = encode_typed_data(full_message=data)
        return Account.recover_message(signable, signature=bytes.fromhex(signature.removeprefix("0x"))).lower()
    except Exception:
        raise ServiceError(BAD_SIGNATURE) from None


def verified_address(db: Session, application: m.Application, provider: m.Provider, code: str) -> str:
    """The address a Web3 auth token proves, its nonce spent; ServiceError otherwise."""
    token = _token(code)
    row = _spend(db, token["nonce"], application, provider)
    address = _address(token["address"])
    if address != row.address:
        raise ServiceError(BAD_SIGNATURE)
    try:
        signed = json.loads(token["typedData"])
    except ValueError:
        raise ServiceError(OTHER_DATA) from None
    issued = json.loads(row.typed_data)
    if signed != issued:
        raise ServiceError(OTHER_DATA)
    if recover(issued, token["signature"]) != address:
        raise ServiceError(BAD_SIGNATURE)
    return address


def sign_in(db: Session, req: auth.SignInRequest, provider_name: str, code: str, invitation_code: str = "",
            ) -> auth.SignedIn | auth.SecondFactorOwed:
    """/api/login with a Web3 provider; `invitation_code` (the body's invitationCode) is spent
    when the address signs a user up."""
    application, organization, provider, row = _provider(db, req.application, req.organization, provider_name)
    try:
        address = verified_address(db, application, provider, code)
    except ServiceError:
        metrics.count_sign_in(METHOD, "refused")
        raise
    identity = federation.UpstreamIdentity(provider_type=provider.type, id=address, username=address,
                                           display_name=address, avatar="")
    user = federation.resolve(db, application, provider, row, identity, client_ip=req.client_ip,
                              invitation_code=invitation_code).user
    auth.refuse_if_frozen(db, user, application)
    req = dataclasses.replace(req, signin_method=METHOD)
    if mfa_props.enabled_types(user):
        metrics.count_sign_in(METHOD, "second_factor")
        return auth.owe_second_factor(db, user, application, req)
    return auth.complete_sign_in(db, user, organization, application, auto_signin=req.auto_signin,
                                 client_ip=req.client_ip, user_agent=req.user_agent,
                                 previous_token=req.previous_token, signin_method=METHOD)


def buttons(db: Session, application: m.Application | None) -> list[dict[str, str]]:
    """The sign-in page's wallet buttons: the application's Web3 providers whose row allows sign-in,
    in the row order (name, type, and the label: the provider's display name, else its type)."""
    if application is None:
        return []
    rows = [item for item in application.providers or [] if isinstance(item, dict) and item.get("canSignIn") is True
            and isinstance(item.get("name"), str)]
    if not rows:
        return []
    found = {p.name: p for p in db.exec(select(m.Provider).where(
        m.Provider.name.in_([item["name"] for item in rows]), m.Provider.category == CATEGORY,
        m.Provider.owner.in_((application.organization, b.ADMIN_OWNER)))).all()}
    return [{"name": p.name, "type": p.type, "label": p.display_name or p.type}
            for p in (found.get(item["name"]) for item in rows) if p is not None]


def finish_script(arguments: list, authorize: bool) -> str:
    """The page's call of window.iamWalletFinish (assets/iam.js) when it comes back with
    web3AuthTokenKey: run from on_load, which may come before the page's scripts have loaded,
    so it waits for them (5 seconds at most)."""
    return page_script.call("iamWalletFinish", *arguments, authorize)
