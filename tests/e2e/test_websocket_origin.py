"""The console's websocket (/_event, Reflex's socket.io endpoint) against the production
server: it acts as the session cookie's user, so a page of another origin, a same-site
one included, must not open it (cross-site websocket hijacking). The console's own page
still does. And the server's log carries none of the secrets sent in request URIs."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import urllib.error
import urllib.request

from playwright.sync_api import expect

SESSION_COOKIE = "iam_session"


def _sign_in(server, accounts) -> str:
    """The admin's session cookie, from POST /api/login sent as the console's page sends it."""
    body = json.dumps({"organization": accounts.admin.organization, "username": accounts.admin.username,
                       "password": accounts.admin.password, "type": "login"}).encode()
    request = urllib.request.Request(server.url("/api/login"), data=body, method="POST", headers={
        "Content-Type": "application/json", "Origin": server.base_url})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.load(response)["status"] == "ok"
        cookie = response.headers["Set-Cookie"]
    name, _, rest = cookie.partition("=")
    assert name == SESSION_COOKIE
    return rest.split(";", 1)[0]


def _handshake(server, headers: dict[str, str]) -> int:
    """The HTTP status of a websocket opening handshake on /_event, as a browser sends it."""
    lines = [
        "GET /_event/?EIO=4&transport=websocket HTTP/1.1", f"Host: localhost:{server.port}", "Upgrade: websocket",
        "Connection: Upgrade", f"Sec-WebSocket-Key: {base64.b64encode(os.urandom(16)).decode()}",
        "Sec-WebSocket-Version: 13", *(f"{name}: {value}" for name, value in headers.items()),
    ]
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as connection:
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        status_line = connection.makefile("rb").readline().decode()
    return int(status_line.split()[1])


def test_a_websocket_from_another_origin_is_refused(server, accounts):
    cookie = {"Cookie": f"{SESSION_COOKIE}={_sign_in(server, accounts)}"}
    own = server.base_url
    for foreign in (f"http://localhost:{server.port + 1}", f"http://evil.localhost:{server.port}",
                    "https://evil.example", "null"):
        assert _handshake(server, {**cookie, "Origin": foreign}) == 403, foreign
        assert _handshake(server, {"Origin": foreign}) == 403, foreign  # anonymous too: no use for it
    assert _handshake(server, {**cookie, "Origin": own}) == 101
    assert _handshake(server, {**cookie, "Origin": f"http://127.0.0.1:{server.port}"}) == 101


def test_the_console_still_opens_its_websocket(visit, page, api_login, accounts):
    api_login(accounts.admin)
    visit("/")
    expect(page.locator("#shell-header")).to_be_visible()


def test_secrets_in_request_uris_stay_out_of_the_server_log(server):
    secrets = {"clientId": "e2e-client", "clientSecret": "e2e-log-secret-1", "access_token": "e2e-log-token-2",
               "password": "e2e-log-password-3", "code_verifier": "e2e-log-verifier-4"}
    query = "&".join(f"{name}={value}" for name, value in secrets.items())
    for method, path in (("GET", "/api/get-account"), ("GET", "/api/get-users"),
                         ("POST", "/api/login/oauth/access_token")):
        request = urllib.request.Request(server.url(f"{path}?{query}"), method=method)
        with contextlib.suppress(urllib.error.HTTPError):  # refused or not, what matters is the log
            urllib.request.urlopen(request, timeout=10).close()
    log = server.log_path.read_text(errors="replace")
    assert [value for value in secrets.values() if value.startswith("e2e-log") and value in log] == []

