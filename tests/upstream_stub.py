"""A local stand-in for an upstream OAuth provider's endpoints (GitHub's or Google's shapes), on
127.0.0.1 and a free port, keeping every request it receives: the token endpoint answers a code
with an access token, the user info endpoints answer the bearer of that token."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

ACCESS_TOKEN = "upstream-access-token-1"


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
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

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
                    return self._answer(200, {"access_token": ACCESS_TOKEN, "token_type": "bearer",
                                              "scope": "read:user user:email"})
                self._answer(404, {})

            def do_GET(self) -> None:
                call = self._record()
                if call.path.endswith("/.well-known/openid-configuration") and stub.discovery is not None:
                    return self._answer(200, stub.discovery)
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
