"""Shared fixtures for the unit and API suites.

The environment is set before anything imports iam_console, whose settings are
read once at import: every test session gets its own SQLite file."""

from __future__ import annotations

import os
import socket
import tempfile
import uuid
from collections import Counter
from pathlib import Path

_TMP = Path(tempfile.mkdtemp(prefix="iam-tests-"))
os.environ["IAM_DATABASE_URL"] = f"sqlite:///{_TMP / 'iam.db'}"
os.environ["IAM_ORIGIN"] = "http://testserver"
os.environ["IAM_FILES_DIR"] = str(_TMP / "files")
os.environ["IAM_ADMIN_PASSWORD"] = ADMIN_PASSWORD = "admin-test-password"
# the SMTP, HTTP and LDAP servers of the tests listen on loopback: the outbound guard lets
# them through (tests/api/test_outbound.py narrows it again to prove the refusals)
os.environ["IAM_OUTBOUND_ALLOW"] = OUTBOUND_ALLOW = "127.0.0.1"

import fastapi.testclient  # noqa: E402
import httpx  # noqa: E402
import pytest  # noqa: E402
import starlette.testclient  # noqa: E402
from sqlmodel import Session, select  # noqa: E402

from iam_console.core.seed import ensure_first_start_data  # noqa: E402
from iam_console.db import engine, migrate, session_scope  # noqa: E402
from iam_console.identity.passwords import hash_password  # noqa: E402
from iam_console.models import Organization, User  # noqa: E402


class BrowserLikeClient(starlette.testclient.TestClient):
    """The test client sending Origin on an unsafe request, as every current browser does:
    the CSRF guard refuses a cookie-authenticated write without Origin or Referer
    (docs/security.md, "Cross-site requests"). The Origin is the request's own origin, as
    from a page of the server, unless the request names one (or a Referer). origin=False:
    a client that sends none, as a script would."""

    UNSAFE = frozenset({"POST", "PUT", "PATCH", "DELETE"})

    def __init__(self, *args, origin: bool = True, **options) -> None:
        super().__init__(*args, **options)
        self._sends_origin = origin

    def build_request(self, method: str, url, **options) -> httpx.Request:
        request = super().build_request(method, url, **options)
        if (self._sends_origin and request.method in self.UNSAFE
                and "origin" not in request.headers and "referer" not in request.headers):
            port = f":{request.url.port}" if request.url.port else ""
            request.headers["origin"] = f"{request.url.scheme}://{request.url.host}{port}"
        return request


# one place for every test module's `from fastapi.testclient import TestClient` (this file is
# imported before them): a new test gets the browser-like client without asking for it
fastapi.testclient.TestClient = starlette.testclient.TestClient = BrowserLikeClient

def casbin_model(matcher: str, policy: str = "sub, obj, act") -> str:
    """A Casbin model without roles: requests (sub, obj, act), the policy's fields, allow-override,
    and the matcher."""
    return (f"[request_definition]\nr = sub, obj, act\n[policy_definition]\np = {policy}\n"
            f"[policy_effect]\ne = some(where (p.eft == allow))\n[matchers]\nm = {matcher}\n")


# Casbin's plain ACL model: no roles, one rule per subject, object and action
ACL_MODEL = casbin_model("r.sub == p.sub && r.obj == p.obj && r.act == p.act")


def require_service(available: bool, what: str) -> None:
    """Skip when a local service is missing, except under CI, where it must be there."""
    if available:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is required under CI but is not reachable")
    pytest.skip(f"{what} is not reachable on this machine")


@pytest.fixture(scope="session")
def database():
    migrate()
    with session_scope() as db:
        ensure_first_start_data(db, ADMIN_PASSWORD)
    yield engine


@pytest.fixture
def db(database):
    with Session(database, expire_on_commit=False) as session:
        yield session


def unique(prefix: str) -> str:
    return f"{prefix}_{uuid.uuid4().hex[:8]}"


@pytest.fixture
def make_org(database):
    def make(name: str | None = None, **fields) -> Organization:
        org = Organization(owner="admin", name=name or unique("org"), password_type="argon2id",
                           languages=["en", "zh"], **fields)
        with session_scope() as db:
            db.add(org)
        return org
    return make


@pytest.fixture
def make_user(database):
    def make(owner: str = "built-in", name: str | None = None, password: str = "s3cret-pass",
             password_type: str = "argon2id", salt: str = "", **fields) -> User:
        user = User(owner=owner, name=name or unique("user"), uuid=str(uuid.uuid4()),
                    password=hash_password(password, password_type, salt), password_type=password_type,
                    password_salt=salt, **fields)
        with session_scope() as db:
            db.add(user)
        return user
    return make


def reload_user(owner: str, name: str) -> User:
    with session_scope() as db:
        return db.exec(select(User).where(User.owner == owner, User.name == name)).one()


@pytest.fixture(scope="session")
def directory():
    """A real OpenLDAP slapd with 300 users on free ldap:// and ldaps:// ports (tests/ldap_server.py)."""
    from tests import ldap_server

    if not ldap_server.available():
        if os.environ.get("CI") == "true":
            pytest.fail("OpenLDAP slapd is required under CI (apt-get install slapd ldap-utils)")
        pytest.skip("OpenLDAP slapd is not installed (apt-get install slapd ldap-utils)")
    server = ldap_server.Directory(users=300).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def allow(monkeypatch):
    """Set the outbound guard's allow list for one test, as IAM_OUTBOUND_ALLOW would (empty at first)."""
    from iam_console.core import outbound

    def set_allowed(text: str) -> None:
        monkeypatch.setattr(outbound, "ALLOWED", outbound.AllowList.parse(text))

    set_allowed("")
    return set_allowed


@pytest.fixture
def fake_dns(monkeypatch):
    """Names the test resolves itself: `answers[name]` is the list of successive answers (each a
    list of addresses; the last one repeats); `asked[name]` counts the lookups. Other names
    resolve as usual."""
    answers: dict[str, list[list[str]]] = {}
    asked: Counter[str] = Counter()
    real = socket.getaddrinfo

    def getaddrinfo(host, port, family=0, type=0, proto=0, flags=0):
        if host not in answers:
            return real(host, port, family, type, proto, flags)
        asked[host] += 1
        addresses = answers[host][min(asked[host], len(answers[host])) - 1]
        return [(socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port, 0, 0)) if ":" in a
                else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, port)) for a in addresses]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return answers, asked
