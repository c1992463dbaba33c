"""A software WebAuthn authenticator for the API tests: one ES256 key pair per
credential, attestation 'none', assertions signed as a real authenticator signs them
(authenticator data, then the SHA-256 of the client data). Its knobs make the bad
cases: another origin or rp id, an old challenge, a sign count that does not grow,
no user verification."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from webauthn.helpers import encode_cbor

FLAG_UP, FLAG_UV, FLAG_AT = 0x01, 0x04, 0x40


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass
class SoftCredential:
    credential_id: bytes
    key: ec.EllipticCurvePrivateKey
    rp_id: str
    user_handle: bytes
    sign_count: int = 0


@dataclass
class SoftAuthenticator:
    origin: str
    credentials: list[SoftCredential] = field(default_factory=list)
    aaguid: bytes = bytes(16)

    @property
    def rp_id(self) -> str:
        return urlsplit(self.origin).hostname or ""

    def _client_data(self, kind: str, challenge: str, origin: str | None) -> bytes:
        return json.dumps({"type": kind, "challenge": challenge, "origin": origin or self.origin,
                           "crossOrigin": False}).encode()

    def create(self, options: dict, *, origin: str | None = None, rp_id: str | None = None,
               challenge: str | None = None, user_verified: bool = True) -> tuple[dict, SoftCredential]:
        """The answer of navigator.credentials.create() to the options ({"publicKey": ...})."""
        public = options["publicKey"]
        rp = rp_id or public["rp"].get("id") or self.rp_id
        key = ec.generate_private_key(ec.SECP256R1())
        numbers = key.public_key().public_numbers()
        cose = encode_cbor({1: 2, 3: -7, -1: 1, -2: numbers.x.to_bytes(32, "big"), -3: numbers.y.to_bytes(32, "big")})
        credential = SoftCredential(os.urandom(32), key, rp, unb64url(public["user"]["id"]))
        flags = FLAG_UP | FLAG_AT | (FLAG_UV if user_verified else 0)
        auth_data = (hashlib.sha256(rp.encode()).digest() + bytes([flags]) + (0).to_bytes(4, "big")
                     + self.aaguid + len(credential.credential_id).to_bytes(2, "big") + credential.credential_id + cose)
        attestation = encode_cbor({"fmt": "none", "attStmt": {}, "authData": auth_data})
        client_data = self._client_data("webauthn.create", challenge or public["challenge"], origin)
        self.credentials.append(credential)
        return {
            "id": b64url(credential.credential_id), "rawId": b64url(credential.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "attestationObject": b64url(attestation),
                         "transports": ["internal"]},
            "authenticatorAttachment": "platform", "clientExtensionResults": {},
        }, credential

    def get(self, options: dict, credential: SoftCredential | None = None, *, origin: str | None = None,
            rp_id: str | None = None, challenge: str | None = None, sign_count: int | None = None,
            user_verified: bool = True, user_handle: bytes | None = None) -> dict:
        """The answer of navigator.credentials.get(); the credential's count grows by one unless told."""
        public = options["publicKey"]
        credential = credential or self.credentials[-1]
        credential.sign_count = credential.sign_count + 1 if sign_count is None else sign_count
        rp = rp_id or credential.rp_id
        flags = FLAG_UP | (FLAG_UV if user_verified else 0)
        auth_data = hashlib.sha256(rp.encode()).digest() + bytes([flags]) + credential.sign_count.to_bytes(4, "big")
        client_data = self._client_data("webauthn.get", challenge or public["challenge"], origin)
        signature = credential.key.sign(auth_data + hashlib.sha256(client_data).digest(), ec.ECDSA(hashes.SHA256()))
        return {
            "id": b64url(credential.credential_id), "rawId": b64url(credential.credential_id), "type": "public-key",
            "response": {"clientDataJSON": b64url(client_data), "authenticatorData": b64url(auth_data),
                         "signature": b64url(signature),
                         "userHandle": b64url(credential.user_handle if user_handle is None else user_handle)},
            "authenticatorAttachment": "platform", "clientExtensionResults": {},
        }
