"""The one way out: every connection the server opens to a destination that someone configured
(SMS and notification gateways, SMTP servers, LDAP directories; webhooks, syncers, OAuth and
SAML providers, anything fetched by URL) is opened here. docs/architecture.md, 'Outbound
connections', says how new code uses it.

The rule:
- The host is resolved once, and every address it resolves to must be public: not loopback,
  private, shared (100.64/10), link-local, site-local, multicast, reserved, unspecified or
  documentation, in IPv4 or IPv6. An IPv4-mapped or NAT64 address is judged by the IPv4 address
  it carries, a 6to4 address by both. One internal address refuses the host: nothing is sent.
- Unless IAM_OUTBOUND_ALLOW lists the destination: a host name (as written in the
  configuration or URL, case and a final dot aside), or an IP address or network (CIDR) that
  holds the address.
- The connection goes to the address that was checked; the name is never resolved again, so a
  DNS answer that changes between the check and the connection (rebinding) cannot swap it.
  HTTP's Host header and TLS (SNI, certificate verification) still use the name.
- HTTP redirects are followed (at most MAX_REDIRECTS): each hop opens its connection here, so
  each hop is checked. An LDAP directory's referrals are not followed.
- Every call has a time limit (`time_limit`): name resolution, connecting and every read and
  write of the connections a call opens; when it passes, those connections are shut down, so a
  server that answers one byte at a time cannot hold a worker. An HTTP answer is read whole
  within it, up to `max_bytes`. LDAP, whose directory sync streams for as long as the directory
  is large, has ldap3's limits per operation instead (to connect, to receive).
- A host is a host name or an IP address written the usual way (`check_host`): the other
  spellings of IPv4 that resolvers take (0177.0.0.1, 0x7f.1, 127.1, 2130706433, 127.000.000.001)
  are refused, as is a port outside 0-65535. The same check refuses them when an administrator
  saves a destination (`check_url`, `check_host`; each kind's rules).

An organization's calls are counted (`on_behalf_of`, around each exchange with a destination an
organization's record names; else each call within a time limit counts against the caller's
organization, `note_caller`): at most IAM_OUTBOUND_PER_ORGANIZATION of them at once in a process,
one more being refused at once. The calls run on worker threads (iam_console/workers.py), and a
call waiting on a slow destination parks its thread for up to its time limit: the cap keeps one
organization from parking them all (docs/security.md, "Availability").

A refused destination, a malformed host or URL, an unknown host, a passed time limit, an
oversized answer or a call beyond the organization's cap is an OutboundError (a ServiceError: its
message reaches the caller and names the host or the organization), whichever library would have
raised.
"""

from __future__ import annotations

import functools
import ipaddress
import logging
import re
import select
import smtplib
import socket
import ssl
import threading
import time
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import httpcore
import httpx
import ldap3

from iam_console import fair_share
from iam_console.core.errors import ServiceError
from iam_console.settings import settings

TIMEOUT_SECONDS = 10
MAX_REDIRECTS = 5
MAX_ANSWER_BYTES = 10 * 1024 * 1024
ALLOW_VARIABLE = "IAM_OUTBOUND_ALLOW"

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
NAT64 = ipaddress.IPv6Network("64:ff9b::/96")  # RFC 6052's well-known prefix: the last 32 bits are IPv4
LABEL = r"[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?"
HOST_NAME = re.compile(rf"(?=.{{1,253}}$){LABEL}(\.{LABEL})*")


class OutboundError(ServiceError):
    """A destination the guard refuses, or a call it cut short."""


# --- the policy ---

def host_key(host: str) -> str:
    """A host as the allow list compares it: lower case, without a final dot or IPv6 brackets."""
    return host.strip().lower().rstrip(".").removeprefix("[").removesuffix("]")


def judged(address: IPAddress) -> tuple[IPAddress, ...]:
    """The addresses a connection to `address` really reaches."""
    if address.version == 6:
        if address.ipv4_mapped is not None:
            return (address.ipv4_mapped,)
        if address in NAT64:
            return (ipaddress.IPv4Address(int(address) & 0xFFFFFFFF),)
        if address.sixtofour is not None:
            return address, address.sixtofour
    return (address,)


def is_public(address: IPAddress) -> bool:
    """A globally routable unicast address (IANA's special-purpose registries: is_global)."""
    return all(a.is_global and not (a.is_multicast or a.is_reserved or (a.version == 6 and a.is_site_local))
               for a in judged(address))


@dataclass(frozen=True)
class AllowList:
    """IAM_OUTBOUND_ALLOW: comma-separated host names and IP addresses or networks (CIDR)."""

    hosts: frozenset[str] = frozenset()
    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def parse(cls, text: str) -> AllowList:
        hosts, networks = set(), []
        for entry in filter(None, (e.strip() for e in text.split(","))):
            try:
                networks.append(ipaddress.ip_network(host_key(entry), strict=False))
                continue
            except ValueError:
                pass
            if not HOST_NAME.fullmatch(host_key(entry)) or entry.startswith("["):
                raise ValueError(f"{ALLOW_VARIABLE}: {entry!r} is neither a host name nor an IP address or "
                                 f"network (CIDR)")
            hosts.add(host_key(entry))
        return cls(frozenset(hosts), tuple(networks))

    def allows(self, host: str, address: IPAddress) -> bool:
        return host_key(host) in self.hosts or any(a in n for a in (address, *judged(address))
                                                   for n in self.networks)


ALLOWED = AllowList.parse(settings.outbound_allow)


# --- calls per organization ---

PER_ORGANIZATION = settings.outbound_per_organization
_in_progress: Counter[str] = Counter()
_counting = threading.Lock()
_serving: ContextVar[str | None] = ContextVar("outbound_serving", default=None)


@contextmanager
def on_behalf_of(organization: str) -> Iterator[None]:
    """The outbound calls inside serve a record of `organization` (its provider, directory,
    syncer): while they run they count against its PER_ORGANIZATION, and beyond it the call is
    refused at once rather than parking another worker thread. Inside another, the outer one
    counts; the server's own calls (no organization's record) are not counted."""
    if _serving.get() is not None or not organization:
        yield
        return
    with _counting:
        if _in_progress[organization] >= PER_ORGANIZATION:
            raise OutboundError("The organization %s already has %d outbound calls in progress: try again when "
                                "one has finished", organization, PER_ORGANIZATION)
        _in_progress[organization] += 1
    token = _serving.set(organization)
    try:
        yield
    finally:
        with _counting:
            _in_progress[organization] -= 1
            if not _in_progress[organization]:
                del _in_progress[organization]
        # a generator (ldap_client.users) closed from another context cannot reset it there
        with suppress(ValueError):
            _serving.reset(token)


_caller = fair_share.CALLER


def note_caller(organization: str, *, takes_turns: bool = True) -> None:
    """The organization of the caller a request or console event serves (api/callers.py, the
    console's viewer, an OAuth client): a call that no record's organization claims
    (on_behalf_of) counts against it, and so does the processor time the work uses
    (iam_console/fair_share.py: an organization over its share waits here first). `takes_turns`
    off, for the console's viewer: neither charged nor made to wait. Set in the context of that
    one request or event."""
    fair_share.serving(organization, charged=takes_turns)
    if takes_turns:
        fair_share.wait_for_turn(organization)


def in_progress(organization: str) -> int:
    """How many of the organization's outbound calls are running in this process."""
    with _counting:
        return _in_progress[organization]


# --- the shape of a destination ---

# a name whose last label is a number is an IPv4 address to URL parsers (the WHATWG URL standard)
NUMERIC_LABEL = re.compile(r"0x[0-9a-f]*|[0-9]+")
USUAL_IPV4 = ("The host %s is not an IP address as usually written: an IPv4 address is four decimal "
              "numbers from 0 to 255 without leading zeros")


def check_host(host: str) -> str:
    """The host as the guard judges it (host_key), when it is a host name (an internationalized
    one in its ASCII form) or an IP address written the usual way; OutboundError otherwise.
    Resolvers also read 0177.0.0.1 (octal), 0x7f.1 (hex), 127.1 (short), 2130706433 (one number)
    and 127.000.000.001 (leading zeros) as IPv4 addresses, and libraries disagree on them (httpx
    refuses some; the C resolver reads 010 as 8): such a host names no address for certain, so
    it is refused before anything is resolved."""
    name = host_key(host)
    if not name:
        raise OutboundError("The destination has no host")
    try:
        ipaddress.ip_address(name)  # four decimal numbers without leading zeros, or IPv6
        return name
    except ValueError:
        pass
    try:
        ascii_name = name.encode("idna").decode("ascii")
    except UnicodeError:
        raise OutboundError("The host %s is not a valid host name or IP address", name[:200]) from None
    if NUMERIC_LABEL.fullmatch(ascii_name.rsplit(".", 1)[-1]):
        raise OutboundError(USUAL_IPV4, name[:200])
    if not HOST_NAME.fullmatch(ascii_name):
        raise OutboundError("The host %s is not a valid host name or IP address", name[:200])
    return name


def check_port(port: int) -> None:
    if not 0 <= port <= 65535:  # the resolver would wrap a larger one around to another port
        raise OutboundError("The port %d is not between 0 and 65535", port)


def _check_host_of(url: str) -> None:
    """check_host on a URL httpx refused, whose refusal says best what is wrong with its host."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return
    if host:
        check_host(host)


def check_url(url: str, what: str) -> None:
    """A URL the guarded HTTP client can call: http or https, with a host check_host takes and a
    valid port. `what` names the field in the refusal ("webhook URL")."""
    if url != url.strip():
        raise OutboundError("The %s cannot start or end with a space", what)
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL as exc:
        _check_host_of(url)
        raise OutboundError("The %s is not a valid URL: %s", what, str(exc)[:200]) from None
    if parsed.scheme not in ("http", "https"):
        raise OutboundError("The %s must be an http or https URL: %s", what, url[:200])
    if not parsed.raw_host:
        raise OutboundError("The %s has no host: %s", what, url[:200])
    check_host(parsed.raw_host.decode("ascii"))
    if parsed.port is not None:
        check_port(parsed.port)


# --- the time limit ---

class _Deadline:
    """A call's time limit. When it passes, the connections the call opened are shut down: a
    read or write blocked on one ends at once (shutdown acts on the connection, so a duplicate
    of the socket reaches it even after TLS has wrapped the original)."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self._sockets: list[socket.socket] = []
        self._lock = threading.Lock()
        self._passed = False
        self._timer = threading.Timer(seconds, self._cut)
        self._timer.daemon = True
        self._timer.start()

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            self._sockets.append(sock.dup())
            if self._passed:
                _shut(self._sockets[-1])

    def _cut(self) -> None:
        with self._lock:
            self._passed = True
            for sock in self._sockets:
                _shut(sock)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            for sock in self._sockets:
                sock.close()


def _shut(sock: socket.socket) -> None:
    with suppress(OSError):  # already closed by its owner
        sock.shutdown(socket.SHUT_RDWR)


_deadline: ContextVar[_Deadline | None] = ContextVar("outbound_deadline", default=None)


@contextmanager
def time_limit(host: str, seconds: float = TIMEOUT_SECONDS) -> Iterator[None]:
    """Everything inside (resolving, connecting, the connections opened here) ends within
    `seconds`, or raises OutboundError. Inside another limit, the outer one holds."""
    if _deadline.get() is not None:
        yield
        return
    with on_behalf_of(_caller.get()):  # unless a record's organization counts it already
        deadline = _Deadline(seconds)
        token = _deadline.set(deadline)
        try:
            yield
        except Exception as exc:
            if time.monotonic() >= deadline.at:
                raise OutboundError("The host %s did not answer within %s seconds", host, f"{seconds:g}") from exc
            raise
        finally:
            _deadline.reset(token)
            deadline.close()


def _remaining(timeout: float | None) -> float:
    """The time an operation may take: its own timeout, within the call's limit."""
    timeout = timeout or TIMEOUT_SECONDS
    deadline = _deadline.get()
    if deadline is None:
        return timeout
    left = deadline.at - time.monotonic()
    if left <= 0:
        raise TimeoutError("the call's time limit has passed")
    return min(timeout, left)


def _watch(sock: socket.socket) -> None:
    deadline = _deadline.get()
    if deadline is not None:
        deadline.watch(sock)


# --- resolving and connecting ---

_resolver = ThreadPoolExecutor(max_workers=4, thread_name_prefix="outbound-resolve")


def resolve(host: str, port: int, timeout: float | None = None) -> list[tuple]:
    """getaddrinfo's TCP entries for host and port, every address checked; the connection must
    go to one of these. OutboundError when the host is refused or does not resolve in time."""
    name = check_host(host)
    check_port(port)
    wait = _remaining(timeout)
    lookup = _resolver.submit(socket.getaddrinfo, name, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    try:
        entries = list(dict.fromkeys(lookup.result(wait)))
    except FutureTimeout:
        raise OutboundError("The host %s did not resolve within %s seconds", name, f"{wait:g}") from None
    except (OSError, UnicodeError):
        raise OutboundError("Cannot resolve the host %s", name) from None
    if not entries:
        raise OutboundError("Cannot resolve the host %s", name)
    for *_, sockaddr in entries:
        address = ipaddress.ip_address(sockaddr[0])
        if not (is_public(address) or ALLOWED.allows(name, address)):
            raise OutboundError("Refused to connect to %s: an internal address, not listed in %s", name,
                                ALLOW_VARIABLE)
    return entries


def connect(host: str, port: int, timeout: float | None = None) -> socket.socket:
    """A TCP connection to the first checked address of host that answers."""
    failure: OSError | None = None
    for family, kind, proto, _, sockaddr in resolve(host, port, timeout):
        sock = socket.socket(family, kind, proto)
        try:
            sock.settimeout(_remaining(timeout))
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            failure = exc
            continue
        sock.settimeout(timeout or TIMEOUT_SECONDS)
        _watch(sock)
        return sock
    raise failure


# --- HTTP (httpx) ---

class _Network(httpcore.SyncBackend):
    """httpcore's network, connecting to checked addresses (TLS and Host stay on the name)."""

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options=None) -> httpcore.NetworkStream:
        failure: httpcore.ConnectError | httpcore.ConnectTimeout | None = None
        for *_, sockaddr in resolve(host, port, timeout):
            try:
                stream = super().connect_tcp(sockaddr[0], port, _remaining(timeout), local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            _watch(stream.get_extra_info("socket"))
            return stream
        raise failure


class _Transport(httpx.HTTPTransport):
    """httpx's transport on the guarded network, reading each answer whole (within the call's
    time limit, up to max_bytes). No keep-alive: every connection a call uses is its own."""

    def __init__(self, verify: ssl.SSLContext | bool, max_bytes: int) -> None:
        # not super().__init__(): that would build the pool on the unguarded network
        self._pool = httpcore.ConnectionPool(ssl_context=httpx.create_ssl_context(verify=verify),
                                             max_keepalive_connections=0, network_backend=_Network())
        self._max_bytes = max_bytes

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        answer = super().handle_request(request)
        body = bytearray()
        try:
            for chunk in answer.stream:
                body += chunk
                if len(body) > self._max_bytes:
                    raise OutboundError("The answer of %s is larger than %d bytes", request.url.host, self._max_bytes)
        finally:
            answer.stream.close()
        return httpx.Response(answer.status_code, headers=answer.headers, content=bytes(body),
                              extensions=answer.extensions)


UNGUARDED_OPTIONS = frozenset({"transport", "mounts", "proxy", "trust_env", "app"})


def http_client(*, timeout: float = TIMEOUT_SECONDS, verify: ssl.SSLContext | bool = True,
                max_bytes: int = MAX_ANSWER_BYTES, **options) -> httpx.Client:
    """An httpx.Client whose every request goes through the guard, `timeout` seconds at most
    from the request to the whole answer. It follows up to MAX_REDIRECTS redirects (pass
    follow_redirects=False to refuse them) and ignores proxy variables: the guard must see the
    destination. `options` are httpx.Client's (headers, auth, base_url, ...)."""
    if options.keys() & UNGUARDED_OPTIONS:
        raise TypeError(f"http_client() chooses the transport itself: {sorted(options.keys() & UNGUARDED_OPTIONS)}")
    return guarded_client(httpx.Client, timeout=timeout, verify=verify, max_bytes=max_bytes, **options)


@contextmanager
def _url_errors(url: object = "") -> Iterator[None]:
    """httpx's refusals of a URL (a malformed one, another scheme) as OutboundError, the error
    every caller of the guard handles (httpx.InvalidURL is no httpx.HTTPError)."""
    try:
        yield
    except httpx.InvalidURL as exc:
        _check_host_of(str(url))
        raise OutboundError("The URL is not valid: %s", str(exc)[:200]) from None
    except httpx.UnsupportedProtocol as exc:
        raise OutboundError("The URL must be an http or https URL: %s", str(exc)[:200]) from None


@functools.cache
def _guarded(client_class: type[httpx.Client]) -> type[httpx.Client]:
    """client_class whose every send, the redirects' hops included, runs within one time limit.
    Built once per class."""
    class Guarded(client_class):  # type: ignore[valid-type, misc]
        def __init__(self, *, time_limit: float, **options) -> None:
            super().__init__(**options)
            self._time_limit = time_limit

        def build_request(self, method: str, url: httpx.URL | str, **options) -> httpx.Request:
            with _url_errors(url):
                return super().build_request(method, url, **options)

        def send(self, request: httpx.Request, **options) -> httpx.Response:
            with _url_errors(), time_limit(request.url.host, self._time_limit):
                return super().send(request, **options)

    Guarded.__name__ = Guarded.__qualname__ = f"Guarded{client_class.__name__}"
    return Guarded


def guarded_client(client_class: type[httpx.Client], *, timeout: float = TIMEOUT_SECONDS,
                   verify: ssl.SSLContext | bool = True, max_bytes: int = MAX_ANSWER_BYTES, **options) -> httpx.Client:
    """As http_client, an instance of a library's subclass of httpx.Client (Authlib's OAuth2Client
    for the upstream identity providers): the same transport, time limit and redirects.
    `options` are the class's own (client_id, scope...) and httpx.Client's."""
    if options.keys() & UNGUARDED_OPTIONS:
        raise TypeError(f"guarded_client() chooses the transport itself: {sorted(options.keys() & UNGUARDED_OPTIONS)}")
    return _guarded(client_class)(time_limit=timeout, transport=_Transport(verify, max_bytes), timeout=timeout,
                                  trust_env=False,
                                  **{"follow_redirects": True, "max_redirects": MAX_REDIRECTS, **options})


# --- SMTP (smtplib) ---

class _SMTP(smtplib.SMTP):
    def _get_socket(self, host: str, port: int, timeout: float | None) -> socket.socket:
        return connect(host, port, timeout)  # STARTTLS verifies self._host, the name


class _SMTPS(smtplib.SMTP_SSL, _SMTP):
    """SMTP_SSL wraps the socket of _SMTP._get_socket, verifying the name."""


@contextmanager
def smtp(host: str, port: int, *, implicit_tls: bool, context: ssl.SSLContext,
         timeout: float = TIMEOUT_SECONDS) -> Iterator[smtplib.SMTP]:
    """An smtplib client connected to a checked address of host (SMTPS when implicit_tls),
    the whole conversation within `timeout` seconds; closed on leaving."""
    with time_limit(host, timeout):
        client = (_SMTPS(host, port, timeout=timeout, context=context) if implicit_tls
                  else _SMTP(host, port, timeout=timeout))
        with client:
            yield client


# --- LDAP (ldap3) ---

class _PinnedServer(ldap3.Server):
    """An ldap3 Server that connects to the addresses the guard checked and never resolves its
    name again; TLS verifies the name (ldap3 checks the certificate against Server.host)."""

    def __init__(self, host: str, addresses: list[tuple], **options) -> None:
        super().__init__(host, **options)
        self._pinned = [[*entry, None, None] for entry in addresses]  # ldap3's availability fields

    @property
    def address_info(self) -> list[list]:
        return self._pinned


def ldap_connection(host: str, port: int, *, use_ssl: bool, tls: ldap3.Tls | None, connect_timeout: float,
                    **options) -> ldap3.Connection:
    """An ldap3 Connection (not yet bound) to a checked address of host; referrals are not
    followed, so a directory cannot send the server elsewhere. `options` are ldap3.Connection's."""
    server = _PinnedServer(host, resolve(host, port, connect_timeout), port=port, use_ssl=use_ssl, tls=tls,
                           get_info=ldap3.NONE, connect_timeout=connect_timeout)
    return ldap3.Connection(server, auto_referrals=False, **options)


# --- SSH tunnels (paramiko) ---

log = logging.getLogger(__name__)


class SshTunnel:
    """A local port (127.0.0.1:`port`) forwarded through an SSH connection (paramiko) to
    `target`, as the SSH server reaches it (a syncer's database behind a bastion). The SSH host is
    checked and connected as any destination; the target is the SSH server's to reach. Authenticated
    with a password or a private key (a paramiko PKey); `close()` ends it."""

    def __init__(self, host: str, port: int, user: str, target: tuple[str, int], *, password: str | None = None,
                 key=None) -> None:
        import paramiko  # only syncers over SSH need it

        self._paramiko = paramiko
        self.target = target
        with time_limit(host):
            sock = connect(host, port)
        self.transport = paramiko.Transport(sock)
        try:
            self.transport.start_client(timeout=TIMEOUT_SECONDS)
            if key is not None:
                self.transport.auth_publickey(user, key)
            else:
                self.transport.auth_password(user, password or "")
        except (paramiko.SSHException, OSError) as exc:
            self.transport.close()
            raise OutboundError("SSH connection to %s failed: %s", host, str(exc) or type(exc).__name__) from None
        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(8)
        self.port = self.listener.getsockname()[1]
        self._closed = False
        threading.Thread(target=self._accept, daemon=True, name="syncer-ssh").start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, peer = self.listener.accept()
            except OSError:
                return
            try:
                channel = self.transport.open_channel("direct-tcpip", self.target, peer,
                                                      timeout=TIMEOUT_SECONDS)
            except (self._paramiko.SSHException, OSError) as exc:
                log.warning("SSH forward to %s:%s refused: %s", *self.target, exc)
                client.close()
                continue
            threading.Thread(target=self._pump, args=(client, channel), daemon=True).start()

    @staticmethod
    def _pump(client: socket.socket, channel: Any) -> None:
        try:
            while True:
                ready, _, _ = select.select([client, channel], [], [], 1.0)
                if client in ready:
                    data = client.recv(65536)
                    if not data:
                        break
                    channel.sendall(data)
                if channel in ready:
                    data = channel.recv(65536)
                    if not data:
                        break
                    client.sendall(data)
                if channel.closed:
                    break
        except OSError:
            pass
        finally:
            channel.close()
            client.close()

    def close(self) -> None:
        self._closed = True
        self.listener.close()
        self.transport.close()
