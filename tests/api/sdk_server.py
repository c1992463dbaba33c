"""A real HTTP server for tests that drive the API with official SDK clients.

`api_server` serves the FastAPI app (iam_console.api.app:api) with uvicorn on a
free loopback port, in a background thread, against the session's test
database (tests/conftest.py); `sdk` is a Casdoor Python SDK client of the
seeded application app-built-in.

Import both into a test module: `from tests.api.sdk_server import api_server, sdk  # noqa: F401`.
The server checks Origin only for requests that ride the session cookie, so the
SDK (query credentials, no cookie) is unaffected by IAM_ORIGIN."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass

import casdoor
import pytest
import uvicorn
from sqlmodel import select

from iam_console.core import builtin as b
from iam_console.db import session_scope
from iam_console.models import Application, Cert

START_TIMEOUT_SECONDS = 15.0


@dataclass(frozen=True)
class Credentials:
    """The seeded application's client credentials and its signing certificate."""

    client_id: str
    client_secret: str
    certificate: str


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="session")
def api_server(database) -> Iterator[str]:
    """The base URL (http://127.0.0.1:<port>) of the API served by uvicorn."""
    from iam_console.api.app import api

    port = _free_port()
    config = uvicorn.Config(api, host="127.0.0.1", port=port, log_level="warning", lifespan="off",
                            access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="sdk-api-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + START_TIMEOUT_SECONDS
    while not server.started:
        if not thread.is_alive():
            pytest.fail("the API server stopped while starting")
        if time.monotonic() > deadline:
            server.should_exit = True
            pytest.fail(f"the API server did not start within {START_TIMEOUT_SECONDS} s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=START_TIMEOUT_SECONDS)


def seeded_credentials() -> Credentials:
    """Read from the database: app-built-in's client id and secret, cert-built-in's certificate."""
    with session_scope() as db:
        application = db.exec(select(Application).where(
            Application.owner == b.ADMIN_OWNER, Application.name == b.BUILT_IN_APP)).one()
        cert = db.exec(select(Cert).where(Cert.owner == b.ADMIN_OWNER, Cert.name == b.BUILT_IN_CERT)).one()
        return Credentials(application.client_id, application.client_secret, cert.certificate)


@pytest.fixture
def sdk(api_server: str) -> casdoor.CasdoorSDK:
    """The official Casdoor Python SDK, signed in as the application app-built-in."""
    credentials = seeded_credentials()
    return casdoor.CasdoorSDK(
        endpoint=api_server,
        client_id=credentials.client_id,
        client_secret=credentials.client_secret,
        certificate=credentials.certificate,
        org_name=b.BUILT_IN_ORG,
        application_name=b.BUILT_IN_APP,
        front_endpoint=api_server,
    )


def stored_ids(table, owner: str, list_scope: str) -> set[tuple[str, str]]:
    """The (owner, name) rows a get-Xs?owner=<owner> should return, read from the database:
    list_scope 'owner' (that owner's rows), 'shared' (with admin's), anything else (all rows)."""
    from iam_console.db import session_scope

    statement = select(table.owner, table.name)
    if list_scope == "owner":
        statement = statement.where(table.owner == owner)
    elif list_scope == "shared":
        statement = statement.where(table.owner.in_((owner, "admin")))
    with session_scope() as db:
        return {(o, n) for o, n in db.exec(statement)}
