"""What the production server answers other origins, and the headers every answer carries:
no page of another origin (a same-site one included: another port, a sibling subdomain,
which the SameSite=Lax cookie goes to) reads the API as the user, the public OAuth endpoints
answer any origin without credentials, and pages cannot be framed by other sites."""

from __future__ import annotations

import urllib.error
import urllib.request

from tests.e2e.test_websocket_origin import SESSION_COOKIE, _sign_in


def _answer(server, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str]]:
    request = urllib.request.Request(server.url(path), method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}


def test_no_other_origin_reads_the_api_with_the_users_cookie(server, accounts):
    """A same-site page (another port, a sibling subdomain) sends the SameSite=Lax cookie along:
    no answer may let it read what comes back, preflight or not; the public OAuth endpoints
    answer any origin, without credentials."""
    cookie = f"{SESSION_COOKIE}={_sign_in(server, accounts)}"
    for foreign in (f"http://localhost:{server.port + 1}", f"http://evil.localhost:{server.port}"):
        status, headers = _answer(server, "GET", "/api/get-account", {"Cookie": cookie, "Origin": foreign})
        assert status == 200 and "access-control-allow-origin" not in headers, headers
        assert "access-control-allow-credentials" not in headers, headers
        _, headers = _answer(server, "OPTIONS", "/api/get-users", {
            "Origin": foreign, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "x-a"})
        assert "access-control-allow-origin" not in headers, headers
    for path, method in (("/api/userinfo", "GET"), ("/api/login/oauth/access_token", "POST")):
        status, headers = _answer(server, "OPTIONS", path, {
            "Origin": "https://rp.example.com", "Access-Control-Request-Method": method,
            "Access-Control-Request-Headers": "authorization"})
        assert status == 204 and headers["access-control-allow-origin"] == "*", (path, headers)
        assert "access-control-allow-credentials" not in headers, headers
    status, headers = _answer(server, "GET", "/.well-known/openid-configuration", {"Origin": "https://rp.example.com"})
    assert status == 200 and headers["access-control-allow-origin"] == "*", headers


def test_every_answer_carries_the_security_headers(server):
    for path in ("/", "/login", "/login/oauth/authorize?client_id=x", "/api/get-account"):
        _, headers = _answer(server, "GET", path, {})
        assert headers["x-content-type-options"] == "nosniff", (path, headers)
        assert headers["x-frame-options"] == "SAMEORIGIN", (path, headers)
        assert "frame-ancestors 'self'" in headers["content-security-policy"], (path, headers)
        assert headers["referrer-policy"] == "same-origin", (path, headers)
        assert "strict-transport-security" not in headers  # the test server's origin is http://
    _, headers = _answer(server, "GET", "/api/get-account", {})
    assert headers["cache-control"] == "no-store", headers
