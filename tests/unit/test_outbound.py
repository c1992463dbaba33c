"""The outbound guard (core/outbound.py): which addresses are internal, the allow list,
resolving once and connecting to the checked address, TLS on the name, the time limit and
the size limit, against real local servers. The scenarios through the API are in
tests/api/test_outbound.py."""

from __future__ import annotations

import ast
import ipaddress
import os
import re
import socket
import ssl
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from iam_console.core import outbound
from iam_console.core.outbound import AllowList, OutboundError
from tests.ldap_server import _certificate
from tests.sinks import HttpSink

PROJECT = Path(__file__).resolve().parents[2]
def exactly(text: str) -> str:
    return f"^{re.escape(text)}$"


REFUSED = "Refused to connect to %s: an internal address, not listed in IAM_OUTBOUND_ALLOW"


# --- the policy ---

@pytest.mark.parametrize("address", [
    "127.0.0.1", "127.1.2.3", "10.1.2.3", "172.16.0.1", "172.31.255.255", "192.168.1.1", "169.254.169.254",
    "100.64.0.1", "0.0.0.0", "192.0.0.1", "192.0.2.1", "198.18.0.1", "198.51.100.1", "203.0.113.1",
    "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255",
    "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "fec0::1", "ff02::1", "ff0e::1", "2001:db8::1", "2001::1",
    "100::1",
    "::ffff:127.0.0.1", "::ffff:10.0.0.1", "::ffff:169.254.169.254",  # IPv4-mapped
    "::127.0.0.1",  # IPv4-compatible (deprecated)
    "64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "64:ff9b:1::a00:1",  # NAT64 of internal IPv4
    "2002:7f00:1::1", "2002:a00:1::1",  # 6to4 of internal IPv4
])
def test_internal_addresses_are_not_public(address):
    assert not outbound.is_public(ipaddress.ip_address(address))


@pytest.mark.parametrize("address", [
    "8.8.8.8", "1.1.1.1", "93.184.215.14", "2606:4700::1111", "2001:4860:4860::8888",
    "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::1",
])
def test_public_addresses_are(address):
    assert outbound.is_public(ipaddress.ip_address(address))


def test_the_allow_list_takes_hosts_addresses_and_networks():
    allowed = AllowList.parse(" 127.0.0.1, 10.0.0.0/8 ,Smtp.Corp.Test., [::1], fd00::/8, 192.168.1.7/24,, ")
    assert allowed.hosts == {"smtp.corp.test"}
    assert [str(n) for n in allowed.networks] == ["127.0.0.1/32", "10.0.0.0/8", "::1/128", "fd00::/8",
                                                  "192.168.1.0/24"]
    ip = ipaddress.ip_address
    assert allowed.allows("anything", ip("10.9.8.7")) and allowed.allows("x", ip("192.168.1.200"))
    assert allowed.allows("x", ip("::ffff:127.0.0.1"))  # the mapped address is the IPv4 one
    assert allowed.allows("x", ip("fd12::1")) and allowed.allows("x", ip("::1"))
    assert not allowed.allows("x", ip("127.0.0.2")) and not allowed.allows("x", ip("172.16.0.1"))
    # a host entry is a name: it allows that name (whatever it resolves to), not its addresses
    assert allowed.allows("SMTP.corp.test.", ip("172.16.0.1"))
    assert not allowed.allows("mail.corp.test", ip("172.16.0.1"))
    assert AllowList.parse("") == AllowList()


@pytest.mark.parametrize("entry", ["http://mail.test", "a b", "10.0.0.0/33", "mail.test:25", "*.corp.test",
                                   "-bad.test", "[mail.test]", "256.1.1.1/8", "x" * 254])
def test_a_bad_allow_entry_is_refused_by_name(entry):
    with pytest.raises(ValueError, match=r"IAM_OUTBOUND_ALLOW: .* is neither a host name nor an IP address"):
        AllowList.parse(f"127.0.0.1, {entry}")


def test_a_bad_allow_list_stops_the_server_from_starting():
    env = {**os.environ, "IAM_OUTBOUND_ALLOW": "127.0.0.1, 10.0.0.0/33"}
    run = subprocess.run([sys.executable, "-c", "import iam_console.core.outbound"], cwd=PROJECT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode != 0
    assert "IAM_OUTBOUND_ALLOW: '10.0.0.0/33' is neither a host name nor an IP address" in run.stderr


# --- resolving ---

@pytest.mark.parametrize("host", ["localhost", "127.0.0.1", "[::1]", "::ffff:127.0.0.1", "0.0.0.0", "LOCALHOST."])
def test_every_spelling_of_loopback_is_refused(allow, host):
    with pytest.raises(OutboundError) as refused:
        outbound.resolve(host, 80)
    assert str(refused.value) == REFUSED % outbound.host_key(host)


UNUSUAL_IPV4 = ["2130706433", "0x7f000001", "127.1", "0177.0.0.1", "127.000.000.001", "0x7f.1", "0X7F.0.0.1",
                "010.8.8.8", "134744072", "8.8.2056", "1.2.3.04", "example.0x1f"]


@pytest.mark.parametrize("host", UNUSUAL_IPV4)
def test_the_other_spellings_of_ipv4_are_refused_even_when_allowed(allow, host):
    """The resolver reads them as IPv4 addresses (loopback, or public ones), libraries disagree on
    which: the guard refuses them, before resolving, whatever the allow list says."""
    allow("0.0.0.0/0, ::/0")
    message = exactly(outbound.USUAL_IPV4 % host.lower())
    with pytest.raises(OutboundError, match=message):
        outbound.resolve(host, 80)
    with pytest.raises(OutboundError, match=message):
        outbound.check_url(f"http://{host}/x", "webhook URL")


@pytest.mark.parametrize("host", ["example.com", "EXAMPLE.com.", "mail_1.corp.test", "8.8.8.8", "[2001:db8::1]",
                                  "::ffff:127.0.0.1", "bücher.example", "123.example", "0x.example"])
def test_usual_hosts_pass_the_shape_check(host):
    assert outbound.check_host(host) == outbound.host_key(host)
    outbound.check_url(f"https://{host if ':' not in host or host.startswith('[') else f'[{host}]'}:443/p", "URL")


@pytest.mark.parametrize(("url", "message"), [
    ("ftp://example.com/x", "The webhook URL must be an http or https URL: ftp://example.com/x"),
    ("example.com/x", "The webhook URL must be an http or https URL: example.com/x"),
    ("http:///x", "The webhook URL has no host: http:///x"),
    (" https://example.com", "The webhook URL cannot start or end with a space"),
    ("http://exa mple.com/", "The host exa%20mple.com is not a valid host name or IP address"),
    ("http://a..b/", "The host a..b is not a valid host name or IP address"),
    ("http://example.com:99999/", "The port 99999 is not between 0 and 65535"),
    ("http://[::1/", "The webhook URL is not a valid URL: Invalid port: ':1'"),
    ("http://example.com/\x00", "The webhook URL is not a valid URL: Invalid non-printable ASCII character in URL, "
                                "'\\x00' at position 19."),
])
def test_a_url_the_client_cannot_call_is_refused_clearly(url, message):
    with pytest.raises(OutboundError, match=exactly(message)):
        outbound.check_url(url, "webhook URL")


@pytest.mark.parametrize(("url", "message"), [
    ("http://0177.0.0.1/x", outbound.USUAL_IPV4 % "0177.0.0.1"),  # httpx.InvalidURL
    ("http://127.000.000.001/x", outbound.USUAL_IPV4 % "127.000.000.001"),
    ("http://127.1/x", outbound.USUAL_IPV4 % "127.1"),  # resolvable: refused before resolving
    ("http://[::1/", "The URL is not valid: Invalid port: ':1'"),
    ("ftp://example.com/", "The URL must be an http or https URL: Request URL has an unsupported protocol 'ftp://'."),
    ("http://127.0.0.1:99999/", "The port 99999 is not between 0 and 65535"),  # would wrap around to 34463
])
def test_the_client_refuses_a_bad_url_with_an_outbound_error(allow, url, message):
    """Whatever httpx raises about an address (InvalidURL is not even an httpx.HTTPError) reaches
    the caller as the guard's OutboundError: every channel answers it as an error."""
    allow("127.0.0.0/8")
    with outbound.http_client() as client, pytest.raises(OutboundError, match=exactly(message)):
        client.post(url, content=b"x")


def test_a_redirect_to_an_unusual_address_is_refused_at_the_hop(allow):
    allow("127.0.0.0/8")
    with HttpSink(status=307, location="http://127.1:9/x") as hop, outbound.http_client() as client:
        with pytest.raises(OutboundError, match=exactly(outbound.USUAL_IPV4 % "127.1")):
            client.get(f"{hop.url}/start")
        assert len(hop.calls) == 1


def test_one_internal_address_refuses_the_host(allow, fake_dns):
    answers, _ = fake_dns
    answers["mixed.test"] = [["8.8.8.8", "10.0.0.1"]]
    answers["public.test"] = [["8.8.8.8", "2606:4700::1111"]]
    with pytest.raises(OutboundError, match=exactly(REFUSED % "mixed.test")):
        outbound.resolve("mixed.test", 443)
    assert [entry[4][0] for entry in outbound.resolve("public.test", 443)] == ["8.8.8.8", "2606:4700::1111"]


def test_allowed_by_name_or_by_network(allow, fake_dns):
    answers, _ = fake_dns
    answers["mail.corp.test"] = [["10.1.2.3"]]
    with pytest.raises(OutboundError):
        outbound.resolve("mail.corp.test", 25)
    allow("Mail.Corp.Test")
    assert outbound.resolve("mail.corp.test.", 25)[0][4] == ("10.1.2.3", 25)
    with pytest.raises(OutboundError):
        outbound.resolve("10.1.2.3", 25)  # the name was allowed, not the address
    allow("10.0.0.0/8")
    assert outbound.resolve("10.1.2.3", 25)[0][4] == ("10.1.2.3", 25)


def test_an_unknown_host_is_a_clear_error(allow):
    with pytest.raises(OutboundError, match=exactly("Cannot resolve the host no-such-host.invalid")):
        outbound.resolve("no-such-host.invalid", 80)
    with pytest.raises(OutboundError, match=exactly("The destination has no host")):
        outbound.resolve(" ", 80)


# --- connecting to the checked address ---

def test_the_connection_goes_to_the_address_that_was_checked(allow, fake_dns):
    """DNS rebinding: the name answers an allowed address to the check and an internal one
    afterwards. The guard resolves once and connects to what it checked."""
    answers, asked = fake_dns
    allow("127.0.0.1")
    with HttpSink() as checked, HttpSink(host="127.0.0.2", port=checked.port) as internal:
        answers["rebind.test"] = [["127.0.0.1"], ["127.0.0.2"]]
        with outbound.http_client() as client:
            assert client.get(f"http://rebind.test:{checked.port}/a").status_code == 200
        assert asked["rebind.test"] == 1
        assert internal.connections == 0
        [call] = checked.calls
        assert call.headers["Host"] == f"rebind.test:{checked.port}"


def test_tls_verifies_the_name_while_connecting_to_the_checked_address(allow, fake_dns, tmp_path):
    """The certificate is valid for localhost and 127.0.0.1; a name that resolves to 127.0.0.1
    but is not in the certificate must fail, and SNI carries the name."""
    cert, key = _certificate(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    names: list[str | None] = []
    server.sni_callback = lambda sock, name, context: names.append(name)
    trusting = ssl.create_default_context(cafile=str(cert))
    answers, _ = fake_dns
    answers["other.test"] = [["127.0.0.1"]]
    allow("127.0.0.1")
    with HttpSink(tls=server) as sink, outbound.http_client(verify=trusting) as client:
        assert client.get(f"https://localhost:{sink.port}/ok").status_code == 200
        assert sink.calls[0].headers["Host"] == f"localhost:{sink.port}"
        with pytest.raises(httpx.ConnectError, match="Hostname mismatch"):
            client.get(f"https://other.test:{sink.port}/no")
        assert len(sink.calls) == 1
    assert names[:2] == ["localhost", "other.test"]


def test_redirects_are_followed_a_bounded_number_of_times(allow):
    allow("127.0.0.1")
    with HttpSink(status=302, location="/again") as loop, outbound.http_client() as client:
        with pytest.raises(httpx.TooManyRedirects):
            client.get(f"{loop.url}/start")
        assert len(loop.calls) == outbound.MAX_REDIRECTS + 1


def test_the_client_cannot_be_given_another_transport():
    for option in ({"transport": httpx.HTTPTransport()}, {"mounts": {"all://": httpx.HTTPTransport()}},
                   {"proxy": "http://127.0.0.1:3128"}, {"trust_env": True}):
        with pytest.raises(TypeError, match="chooses the transport itself"):
            outbound.http_client(**option)


# --- limits ---

class SlowServer:
    """Accepts connections and sends `opening`; then one byte of `drip` every 0.2 s until the
    client goes away (every read succeeds in time, only a limit on the whole call ends it),
    or without `drip`, reads what the client sends until it closes."""

    def __init__(self, opening: bytes, drip: bytes = b"") -> None:
        self.opening, self.drip = opening, drip
        self._socket = socket.create_server(("127.0.0.1", 0))
        self.port = self._socket.getsockname()[1]
        self._stop = threading.Event()

    def _serve(self, connection: socket.socket) -> None:
        with connection:
            try:
                connection.sendall(self.opening)
                while self.drip and not self._stop.wait(0.2):
                    connection.sendall(self.drip)
                while connection.recv(65536):
                    pass
            except OSError:
                return

    def _accept(self) -> None:
        self._socket.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return  # closed
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def __enter__(self) -> SlowServer:
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._socket.close()


def test_an_http_server_answering_byte_by_byte_is_cut_at_the_time_limit(allow):
    allow("127.0.0.1")
    with SlowServer(b"HTTP/1.1 200 OK\r\nX-Slow: ", drip=b"a") as slow:
        started = time.monotonic()
        with pytest.raises(OutboundError, match=exactly("The host 127.0.0.1 did not answer within 1 seconds")), \
                outbound.http_client(timeout=1) as client:
            client.get(f"http://127.0.0.1:{slow.port}/")
        assert time.monotonic() - started < 2.5


def test_an_smtp_server_answering_byte_by_byte_is_cut_at_the_time_limit(allow):
    allow("127.0.0.1")
    with SlowServer(b"220-", drip=b"a") as slow:
        started = time.monotonic()
        with pytest.raises(OutboundError, match=exactly("The host 127.0.0.1 did not answer within 1 seconds")), \
                outbound.smtp("127.0.0.1", slow.port, implicit_tls=False, context=ssl.create_default_context(),
                              timeout=1):
            pass
        assert time.monotonic() - started < 2.5


def test_an_answer_is_read_up_to_its_limit(allow):
    allow("127.0.0.1")
    body = b"x" * 200_000
    with SlowServer(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)) as big:
        with outbound.http_client(max_bytes=len(body)) as client:
            assert client.get(f"http://127.0.0.1:{big.port}/").content == body
        with pytest.raises(OutboundError, match=exactly("The answer of 127.0.0.1 is larger than 199,999 bytes")), \
                outbound.http_client(max_bytes=len(body) - 1) as client:
            client.get(f"http://127.0.0.1:{big.port}/")


# --- one way out ---

# what opens a connection by itself: modules, and the names of modules that are used for more
GUARD = PROJECT / "iam_console" / "core" / "outbound.py"
CONNECTING_MODULES = ("urllib.request", "http.client", "requests", "aiohttp", "urllib3", "httpcore", "ftplib",
                      "imaplib", "poplib", "telnetlib", "xmlrpc.client", "websockets")
CONNECTING_NAMES = {
    "smtplib": {"SMTP", "SMTP_SSL", "LMTP"},
    "httpx": {"Client", "AsyncClient", "HTTPTransport", "AsyncHTTPTransport", "get", "post", "put", "patch",
              "delete", "head", "options", "request", "stream"},
    "socket": {"socket", "create_connection", "getaddrinfo", "gethostbyname"},
    "ldap3": {"Server", "ServerPool", "Connection"},
    "ssl": {"get_server_certificate"},
}


def _qualified(node, aliases: dict[str, str]) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return ""
    return ".".join([aliases[node.id], *reversed(parts)])


def _forbidden(name: str) -> bool:
    module, _, attribute = name.rpartition(".")
    return (any(name == m or name.startswith(m + ".") for m in CONNECTING_MODULES)
            or attribute in CONNECTING_NAMES.get(module, ()))


def bypasses(source: str) -> list[str]:
    """What a module's code calls, or imports, that would open a connection without the guard."""
    tree, aliases, found = ast.parse(source), {}, []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                bound = alias.asname or alias.name.split(".")[0]  # `import a.b` binds a, `as c` binds a.b
                aliases[bound] = alias.name if alias.asname else bound
                if _forbidden(alias.name):
                    found.append(f"line {node.lineno}: import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                aliases[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _forbidden(name := _qualified(node.func, aliases)):
            found.append(f"line {node.lineno}: {name}(...)")
        elif isinstance(node, ast.ImportFrom) and node.module and _forbidden(node.module):
            found.append(f"line {node.lineno}: from {node.module} import ...")
    return found


@pytest.mark.parametrize("source", [
    "import smtplib\nsmtplib.SMTP('h', 25)",
    "import smtplib as s\ns.SMTP_SSL('h')",
    "from smtplib import SMTP\nSMTP('h')",
    "import httpx\nhttpx.post('http://h')",
    "import httpx\nwith httpx.Client() as c: pass",
    "from httpx import AsyncClient as C\nC()",
    "import urllib.request\nurllib.request.urlopen('http://h')",
    "from urllib.request import urlopen",
    "import http.client",
    "import socket\nsocket.create_connection(('h', 80))",
    "from ldap3 import Server, Connection\nConnection(Server('h'))",
    "import ldap3\nldap3.Connection('ldap://h')",
    "import requests",
])
def test_the_scan_finds_a_bypass(source):
    assert bypasses(source)


def test_the_scan_leaves_the_harmless_alone():
    assert bypasses("import httpx, smtplib, socket\nfrom urllib.parse import quote\nfrom ldap3 import Tls, SUBTREE\n"
                    "try:\n    pass\nexcept (httpx.HTTPError, smtplib.SMTPException, socket.timeout):\n    pass\n"
                    "Tls(validate=0)\nquote('x')") == []


def test_outbound_connections_are_opened_by_the_guard_only():
    """Every connection to a configured destination goes through core/outbound.py: no other
    module of the server constructs a client, a socket or a server object of its own."""
    found = {str(path.relative_to(PROJECT)): hits for path in sorted((PROJECT / "iam_console").rglob("*.py"))
             if path != GUARD and (hits := bypasses(path.read_text()))}
    assert found == {}
    assert bypasses(GUARD.read_text())  # the guard itself is where they are
