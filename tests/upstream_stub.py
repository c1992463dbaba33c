"""A local stand-in for an upstream OAuth provider's endpoints (GitHub's or Google's shapes), on
127.0.0.1 and a free port, keeping every request it receives: the token endpoint answers a code
with an access token (and `id_token` when set), the user info endpoints answer the bearer of that
token, /jwks the public keys of `signer` (an IdTokenSigner: the stand-in's ID token keys).

As Google One Tap's stand-in: /gsi/client is a fake of Google Identity Services' script (its
google.accounts.id), whose prompt asks /one-tap-credential for a credential signed by `signer`
(with the client id and nonce the page initialized it with, and the claims in the page's
window.iamFakeGoogleUser) and hands it to the page's callback."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

FAKE_GSI_CLIENT = """(function () {
  const stub = new URL(document.currentScript.src).origin;
  let config = null;
  window.google = { accounts: { id: {
    initialize(options) { config = options; },
    async prompt() {
      const wanted = window.iamFakeGoogleUser || {};
      const query = new URLSearchParams({ aud: config.client_id, nonce: config.nonce || "", ...wanted });
      const answer = await fetch(stub + "/one-tap-credential?" + query.toString());
      config.callback({ credential: await answer.text(), select_by: "auto" });
    },
  } } };
})();
"""
GOOGLE_ISSUER = "https://accounts.google.com"

ACCESS_TOKEN = "upstream-access-token-1"


class IdTokenSigner:
    """RSA keys that sign ID tokens, and their public key set; `rotate` adds a new signing key."""

    def __init__(self) -> None:
        from joserfc.jwk import RSAKey

        self.keys = [RSAKey.generate_key(2048, auto_kid=True)]

    def rotate(self) -> None:
        from joserfc.jwk import RSAKey

        self.keys.append(RSAKey.generate_key(2048, auto_kid=True))

    def jwks(self) -> dict:
        return {"keys": [k.as_dict(private=False) for k in self.keys]}

    def sign(self, claims: dict, *, key=None, kid: str | None = None, alg: str = "RS256") -> str:
        from joserfc import jwt

        key = key or self.keys[-1]
        kid = kid or key.kid
        return jwt.encode({"alg": alg, **({"kid": kid} if kid else {})}, claims, key)

    @staticmethod
    def claims(issuer: str, audience: str, nonce: str, sub: str = "108234", **over) -> dict:
        now = int(time.time())
        return {"iss": issuer, "aud": audience, "sub": sub, "nonce": nonce, "iat": now, "exp": now + 600,
                "email": "gina@example.com", "email_verified": True, **over}


@dataclass
class Call:
    method: str
    path: str
    headers: dict[str, str]
    form: dict[str, str]


class UpstreamStub:
    def __init__(self, *, user: dict | None = None, emails: list | None = None, code: str = "the-code") -> None:
        self.calls: list[Call] = []
        self.user = user or {}
        self.emails = emails or []
        self.code = code
        self.discovery: dict | None = None
        self.signer = IdTokenSigner()
        self.id_token: str | None = None  # the token endpoint's id_token, when set
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _text(self, body: str, content_type: str) -> None:
                data = body.encode()
                self.send_response(200)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.send_header("Access-Control-Allow-Origin", "*")
                self.end_headers()
                self.wfile.write(data)

            def _one_tap_credential(self) -> None:
                from joserfc.jwk import RSAKey

                asked = {k: v[0] for k, v in parse_qs(urlsplit(self.path).query).items()}
                forged = asked.pop("forged", "") == "1"
                claims = stub.signer.claims(GOOGLE_ISSUER, asked.pop("aud", ""), asked.pop("nonce", ""))
                claims.update(asked)
                key = RSAKey.generate_key(2048) if forged else None
                self._text(stub.signer.sign(claims, key=key, kid=stub.signer.keys[-1].kid), "text/plain")

            def _record(self) -> Call:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length).decode() if length else ""
                call = Call(self.command, urlsplit(self.path).path, {k.lower(): v for k, v in self.headers.items()},
                            {k: v[0] for k, v in parse_qs(raw).items()})
                stub.calls.append(call)
                return call

            def do_POST(self) -> None:
                call = self._record()
                if call.path.endswith(("/token", "/access_token")):
                    if call.form.get("code") != stub.code:
                        return self._answer(400, {"error": "invalid_grant", "error_description": "bad code"})
                    token = {"access_token": ACCESS_TOKEN, "token_type": "bearer", "scope": "read:user user:email"}
                    if stub.id_token is not None:
                        token["id_token"] = stub.id_token
                    return self._answer(200, token)
                self._answer(404, {})

            def do_GET(self) -> None:
                call = self._record()
                if call.path.endswith("/.well-known/openid-configuration") and stub.discovery is not None:
                    return self._answer(200, stub.discovery)
                if call.path.endswith("/jwks"):
                    return self._answer(200, stub.signer.jwks())
                if call.path == "/gsi/client":
                    return self._text(FAKE_GSI_CLIENT, "application/javascript")
                if call.path == "/one-tap-credential":
                    return self._one_tap_credential()
                if call.headers.get("authorization") != f"Bearer {ACCESS_TOKEN}":
                    return self._answer(401, {"message": "Requires authentication"})
                if call.path.endswith("/emails"):
                    return self._answer(200, stub.emails)
                if call.path.endswith(("/user", "/userinfo")):
                    return self._answer(200, stub.user)
                self._answer(404, {})

            def log_message(self, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> UpstreamStub:
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def to(self, suffix: str) -> list[Call]:
        return [c for c in self.calls if c.path.endswith(suffix)]
