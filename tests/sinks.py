"""Real local receivers for what the server sends out: an SMTP server and an HTTP
endpoint, each on 127.0.0.1 (or another local address) and a free port, keeping what they
receive and counting the connections made to them (`connections`); and a bare TCP listener
that only counts them.

The SMTP sink speaks enough of RFC 5321 for smtplib and any ordinary client: EHLO/HELO,
AUTH PLAIN and LOGIN (checked against the credentials it was given, if any), MAIL, RCPT,
DATA with dot-unstuffing, RSET, NOOP, QUIT. No TLS: providers under test disable SSL."""

from __future__ import annotations

import asyncio
import base64
import email
import email.policy
import json
import re
import socket
import ssl
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Mail:
    mail_from: str
    recipients: list[str]
    data: bytes
    login: tuple[str, str] | None  # the AUTH credentials the client gave

    @property
    def message(self) -> email.message.EmailMessage:
        return email.message_from_bytes(self.data, policy=email.policy.default)

    @property
    def body(self) -> str:
        return self.message.get_body(("html", "plain")).get_content()


def code_in(text: str, digits: int = 6) -> str:
    found = re.search(rf"(?<!\d)\d{{{digits}}}(?!\d)", text)
    assert found, f"no {digits}-digit code in {text!r}"
    return found.group(0)


def _wait(find, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        found = find()
        if found is not None:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"nothing received for {what} within {timeout} s")
        time.sleep(0.05)


wait_until = _wait  # find() until it answers something other than None, for at most timeout seconds


class SmtpSink:
    def __init__(self, username: str = "", password: str = "") -> None:
        self.credentials = (username, password) if username else None
        self.mails: list[Mail] = []
        self.refused_logins = 0
        self.connections = 0
        self._lock = threading.Lock()
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.base_events.Server | None = None
        self.port = 0

    def __enter__(self) -> SmtpSink:
        self._thread.start()
        self._server = asyncio.run_coroutine_threadsafe(
            asyncio.start_server(self._session, "127.0.0.1", 0), self._loop).result(10)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    def __exit__(self, *exc) -> None:
        async def close() -> None:
            self._server.close()
            await self._server.wait_closed()
        asyncio.run_coroutine_threadsafe(close(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def to(self, recipient: str) -> list[Mail]:
        with self._lock:
            return [m for m in self.mails if recipient in m.recipients]

    def wait_for(self, recipient: str, count: int = 1, timeout: float = 15) -> Mail:
        """The count-th message to the recipient (waiting for it)."""
        return _wait(lambda: (self.to(recipient)[count - 1:count] or [None])[0], timeout, recipient)

    async def _session(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        def say(line: str) -> None:
            writer.write(line.encode() + b"\r\n")

        async def read() -> str:
            return (await reader.readline()).decode(errors="replace").rstrip("\r\n")

        with self._lock:
            self.connections += 1
        login: tuple[str, str] | None = None
        mail_from, recipients = "", []
        say("220 sink ESMTP")
        try:
            while True:
                await writer.drain()
                line = await read()
                if not line and reader.at_eof():
                    return
                verb, _, rest = line.partition(" ")
                verb = verb.upper()
                if verb == "EHLO":
                    say("250-sink")
                    say("250-AUTH PLAIN LOGIN")
                    say("250 8BITMIME")
                elif verb == "HELO":
                    say("250 sink")
                elif verb == "AUTH":
                    mechanism, _, initial = rest.partition(" ")
                    if mechanism.upper() == "PLAIN":
                        if not initial:
                            say("334 ")
                            await writer.drain()
                            initial = await read()
                        _, user, password = base64.b64decode(initial).decode().split("\0")
                    else:
                        say("334 VXNlcm5hbWU6")
                        await writer.drain()
                        user = base64.b64decode(await read()).decode()
                        say("334 UGFzc3dvcmQ6")
                        await writer.drain()
                        password = base64.b64decode(await read()).decode()
                    if self.credentials is None or (user, password) == self.credentials:
                        login = (user, password)
                        say("235 2.7.0 Authentication successful")
                    else:
                        with self._lock:
                            self.refused_logins += 1
                        say("535 5.7.8 Authentication credentials invalid")
                elif verb == "MAIL":
                    if self.credentials is not None and login is None:
                        say("530 5.7.0 Authentication required")
                        continue
                    mail_from, recipients = rest.split(":", 1)[1].strip().strip("<>"), []
                    say("250 OK")
                elif verb == "RCPT":
                    recipients.append(rest.split(":", 1)[1].strip().strip("<>"))
                    say("250 OK")
                elif verb == "DATA":
                    say("354 End data with <CR><LF>.<CR><LF>")
                    await writer.drain()
                    lines = []
                    while True:
                        raw = await reader.readline()
                        if raw in (b".\r\n", b".\n", b""):
                            break
                        lines.append(raw[1:] if raw.startswith(b"..") else raw)
                    with self._lock:
                        self.mails.append(Mail(mail_from, recipients, b"".join(lines), login))
                    say("250 OK: queued")
                elif verb in ("RSET", "NOOP"):
                    say("250 OK")
                elif verb == "QUIT":
                    say("221 Bye")
                    await writer.drain()
                    return
                else:
                    say("502 Command not implemented")
        finally:
            writer.close()


@dataclass
class HttpCall:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    fields: dict[str, str] = field(default_factory=dict)  # the form, JSON or query fields


class _CountingServer(ThreadingHTTPServer):
    def __init__(self, host: str, port: int, handler) -> None:
        self.address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.connections = 0
        super().__init__((host, port), handler)

    def verify_request(self, request, client_address) -> bool:
        self.connections += 1
        return True


class HttpSink:
    """An HTTP endpoint on `host` (and `port`, else a free one; HTTPS with `tls`) answering every
    request with `status` and `body` (and a Location header when `location` is set: a redirect)
    and keeping it. `first`: the statuses of the first requests, one each, before `status`."""

    def __init__(self, status: int = 200, host: str = "127.0.0.1", port: int = 0, location: str = "",
                 tls: ssl.SSLContext | None = None, body: bytes = b'{"ok": true}',
                 first: tuple[int, ...] = ()) -> None:
        self.status = status
        self.first = list(first)
        self.location = location
        self.body = body
        self.calls: list[HttpCall] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                split = urlsplit(self.path)
                query = parse_qs(split.query)
                content_type = self.headers.get("content-type", "")
                if content_type.startswith("application/json"):
                    fields = {k: str(v) for k, v in json.loads(body or b"{}").items()}
                elif body:
                    fields = {k: v[0] for k, v in parse_qs(body.decode()).items()}
                else:
                    fields = {k: v[0] for k, v in query.items()}
                sink.calls.append(HttpCall(self.command, split.path, query, dict(self.headers.items()), body, fields))
                self.send_response(sink.first.pop(0) if sink.first else sink.status)
                if sink.location:
                    self.send_header("Location", sink.location)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(sink.body)

            do_GET = do_POST = do_PUT = do_DELETE = _handle

            def log_message(self, *args) -> None:
                pass

        self._server = _CountingServer(host, port, Handler)
        if tls is not None:
            self._server.socket = tls.wrap_socket(self._server.socket, server_side=True)
        self.port = self._server.server_address[1]
        self.url = f"{'https' if tls else 'http'}://{f'[{host}]' if ':' in host else host}:{self.port}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> HttpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)

    @property
    def connections(self) -> int:
        return self._server.connections

    def to(self, phone: str) -> list[HttpCall]:
        return [c for c in list(self.calls) if phone in c.fields.values()]

    def wait_for(self, phone: str, count: int = 1, timeout: float = 15) -> HttpCall:
        """The count-th call naming the phone (waiting for it)."""
        return _wait(lambda: (self.to(phone)[count - 1:count] or [None])[0], timeout, phone)

    def wait_at(self, path: str, count: int = 1, timeout: float = 15) -> HttpCall:
        """The count-th call to the path (waiting for it)."""
        return _wait(lambda: ([c for c in list(self.calls) if c.path == path][count - 1:count] or [None])[0],
                     timeout, path)


class TcpSink:
    """A TCP listener on `host` that accepts connections, counts them and closes them."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self._socket = socket.create_server((host, 0))
        self._socket.settimeout(0.1)
        self.port = self._socket.getsockname()[1]
        self.connections = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            self.connections += 1
            connection.close()

    def __enter__(self) -> TcpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(10)
        self._socket.close()


class HoldingHttpSink:
    """An HTTP receiver that holds every request until `release()` (or until `hold_seconds` pass,
    so that a test that fails cannot hang), then answers 200. `arrived` counts the requests
    that are being held; `timed_out` says whether a hold ran out before it was released: the
    availability tests assert by order (what completed while the receiver still held its caller),
    not by timing."""

    def __init__(self, hold_seconds: float = 8.0) -> None:
        self.hold_seconds = hold_seconds
        self.arrived = threading.Semaphore(0)
        self.timed_out = False
        self._released = threading.Event()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                if length:
                    self.rfile.read(length)
                sink.arrived.release()
                if not sink._released.wait(sink.hold_seconds):
                    sink.timed_out = True
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_GET = do_POST = _handle

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def wait_arrived(self, timeout: float = 15) -> None:
        assert self.arrived.acquire(timeout=timeout), "the held request never reached the receiver"

    def release(self) -> None:
        self._released.set()

    def __enter__(self) -> HoldingHttpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.release()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(10)
