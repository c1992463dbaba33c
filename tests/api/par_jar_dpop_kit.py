"""What the PAR, JAR and DPoP tests share (test_par_jar.py, test_dpop.py): client keys, signed
request objects and DPoP proofs built here with PyJWT and cryptography, as any client builds them."""

from __future__ import annotations

import base64
import hashlib
import json
import time
import uuid
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fastapi.testclient import TestClient
from sqlmodel import func, select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope

ISSUER = "http://testserver"
TOKEN_URL = f"{ISSUER}/api/login/oauth/access_token"
PAR_URL = f"{ISSUER}/api/login/oauth/par"
USERINFO_URL = f"{ISSUER}/api/userinfo"
INTROSPECT_URL = f"{ISSUER}/api/login/oauth/introspect"


def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key, kid: str = "") -> dict[str, Any]:
    elliptic = isinstance(key, ec.EllipticCurvePrivateKey)
    algorithm = jwt.algorithms.ECAlgorithm if elliptic else jwt.algorithms.RSAAlgorithm
    jwk = json.loads(algorithm.to_jwk(key.public_key()))
    return {**jwk, **({"kid": kid} if kid else {})}


def jkt(key) -> str:
    """The RFC 7638 thumbprint of the key's public half."""
    jwk = public_jwk(key)
    members = ("crv", "kty", "x", "y") if jwk["kty"] == "EC" else ("e", "kty", "n")
    canonical = json.dumps({k: jwk[k] for k in members}, separators=(",", ":"), sort_keys=True)
    return base64.urlsafe_b64encode(hashlib.sha256(canonical.encode()).digest()).rstrip(b"=").decode()


def request_object(key, client_id: str, parameters: dict[str, Any], *, alg: str = "ES256", kid: str = "",
                   **claims: Any) -> str:
    now = int(time.time())
    body = {"iss": client_id, "aud": ISSUER, "client_id": client_id, "iat": now, "exp": now + 300,
            "jti": uuid.uuid4().hex, **parameters, **claims}
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg,
                      headers={"kid": kid} if kid else None)


def proof(key, htm: str, htu: str, *, access_token: str = "", alg: str = "ES256", header: dict | None = None,
          **claims: Any) -> str:
    """A DPoP proof (RFC 9449 §4.2) by `key`, whose public half rides in its header."""
    body = {"jti": uuid.uuid4().hex, "htm": htm, "htu": htu, "iat": int(time.time()), **claims}
    if access_token:
        body["ath"] = base64.urlsafe_b64encode(hashlib.sha256(access_token.encode()).digest()).rstrip(b"=").decode()
    return jwt.encode({k: v for k, v in body.items() if v is not None}, key, algorithm=alg,
                      headers={"typ": "dpop+jwt", "jwk": public_jwk(key), **(header or {})})


def client() -> TestClient:
    return TestClient(api)


def rows(model) -> int:
    with session_scope() as db:
        return db.exec(select(func.count()).select_from(model)).one()


def token_rows() -> int:
    return rows(m.Token)
