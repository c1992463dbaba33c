"""OAuth Client ID Metadata Documents: a client id that is the https URL of the client's metadata,
fetched through the outbound guard from a local HTTPS stand-in, kept for a while, and only for an
organization that opted in (oauth/metadata_documents.py)."""

from __future__ import annotations

import json
import ssl
import uuid

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.core import lookup
from iam_console.db import session_scope
from iam_console.oauth import metadata_documents
from tests.api.test_oauth import PASSWORD, REDIRECT, exchange, make_app, pkce
from tests.ldap_server import _certificate
from tests.sinks import HttpSink


def unique_resource() -> str:
    """A resource URI of this test's organization alone (an organization's resources are its own)."""
    return f"https://mcp-{uuid.uuid4().hex[:8]}.example.com/mcp"


@pytest.fixture
def tls(tmp_path, monkeypatch, allow):
    """An HTTPS stand-in's context for localhost, trusted by the fetches of this test alone."""
    cert, key = _certificate(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(cert, key)
    monkeypatch.setattr(metadata_documents, "VERIFY", ssl.create_default_context(cafile=str(cert)))
    allow("127.0.0.1")
    return server


@pytest.fixture
def mcp() -> str:
    return unique_resource()


@pytest.fixture
def org(make_org, make_user, mcp):
    organization = make_org(protected_resources=[mcp], client_metadata_documents=True)
    make_user(owner=organization.name, name="alice", password=PASSWORD)
    return organization.name


def document_for(sink: HttpSink, **changes) -> str:
    """The sink serves a client's metadata document; its URL (a path of its own: ports repeat)."""
    client_id = getattr(sink, "client_id", f"https://localhost:{sink.port}/oauth/{uuid.uuid4().hex[:8]}.json")
    sink.client_id = client_id
    sink.body = json.dumps({"client_id": client_id, "client_name": "MCP agent", "redirect_uris": [REDIRECT],
                            "grant_types": ["authorization_code", "refresh_token"],
                            "token_endpoint_auth_method": "none", **changes}).encode()
    return client_id


def sign_in(client_id: str, org: str, challenge: str, resource: str) -> dict:
    return TestClient(api).post("/api/login", params={
        "clientId": client_id, "responseType": "code", "redirectUri": REDIRECT, "scope": "openid", "state": "s",
        "code_challenge": challenge, "code_challenge_method": "S256", "resource": resource},
        json={"organization": org, "username": "alice", "password": PASSWORD, "type": "code"}).json()


def stored(client_id: str) -> m.Application | None:
    with session_scope() as db:
        return db.exec(select(m.Application).where(m.Application.client_id == client_id)).first()


def test_a_document_client_signs_in_with_pkce_and_is_fetched_once(tls, org, mcp):
    with HttpSink(tls=tls) as sink:
        client_id = document_for(sink)
        verifier, challenge = pkce()
        answer = sign_in(client_id, org, challenge, mcp)
        assert answer["status"] == "ok", answer
        assert len(sink.calls) == 1 and sink.calls[0].path == client_id.split(str(sink.port))[1]
        row = stored(client_id)
        assert row.organization == org and row.display_name == "MCP agent" and row.registration_access_token
        app = m.Application(name=row.name, client_id=client_id)
        status, tokens = exchange(app, answer["data"], verifier, resource=mcp)
        assert status == 200, tokens
        # within the cache time the stored copy answers: no second fetch
        assert sign_in(client_id, org, pkce()[1], mcp)["status"] == "ok"
        assert len(sink.calls) == 1


def test_a_stale_copy_is_fetched_again(tls, org, mcp, monkeypatch):
    with HttpSink(tls=tls) as sink:
        client_id = document_for(sink)
        first = sign_in(client_id, org, pkce()[1], mcp)
        assert first["status"] == "ok", first
        monkeypatch.setattr(metadata_documents, "CACHE_SECONDS", 0)
        document_for(sink, client_name="Renamed agent")
        answer = sign_in(client_id, org, pkce()[1], mcp)
        assert answer["status"] == "ok", answer
        assert len(sink.calls) == 2 and stored(client_id).display_name == "Renamed agent"


BAD = [
    ({"client_id": "https://elsewhere.example.com/client.json"}, "client_id is not its URL"),
    ({"token_endpoint_auth_method": "client_secret_basic"}, "public client"),
    ({"redirect_uris": ["http://attacker.example.com/cb"]}, "redirect_uris"),
    ({"redirect_uris": ["https://agent.example.com/cb#x"]}, "redirect_uris"),
    ({"grant_types": ["client_credentials"]}, "grant_types"),
]


@pytest.mark.parametrize(("changes", "reason"), BAD, ids=range(len(BAD)))
def test_a_wrong_document_is_refused_and_nothing_stored(tls, org, mcp, changes, reason):
    with HttpSink(tls=tls) as sink:
        client_id = document_for(sink, **changes)
        answer = sign_in(client_id, org, pkce()[1], mcp)
        assert answer["status"] == "error" and reason in answer["msg"], answer
        assert stored(client_id) is None


def test_not_json_and_errors_of_the_host_are_refused(tls, org, mcp):
    with HttpSink(tls=tls, body=b"<html>") as sink:
        client_id = f"https://localhost:{sink.port}/{uuid.uuid4().hex[:8]}.json"
        assert "not JSON" in sign_in(client_id, org, pkce()[1], mcp)["msg"]
    with HttpSink(tls=tls, status=404) as sink:
        client_id = f"https://localhost:{sink.port}/{uuid.uuid4().hex[:8]}.json"
        assert "HTTP 404" in sign_in(client_id, org, pkce()[1], mcp)["msg"]
        assert stored(client_id) is None


def test_the_outbound_guard_refuses_a_private_address(org, mcp, allow):
    allow("")  # nothing internal allowed: the guard refuses loopback before connecting
    with HttpSink() as sink:
        client_id = f"https://localhost:{sink.port}/{uuid.uuid4().hex[:8]}.json"
        answer = sign_in(client_id, org, pkce()[1], mcp)
        assert answer["status"] == "error" and "could not be fetched" in answer["msg"], answer
        assert sink.calls == [] and stored(client_id) is None


def test_only_an_organization_that_opted_in_takes_them(tls, make_org, make_user):
    closed = unique_resource()
    org = make_org(protected_resources=[closed]).name
    make_user(owner=org, name="alice", password=PASSWORD)
    with HttpSink(tls=tls) as sink:
        client_id = document_for(sink)
        answer = sign_in(client_id, org, pkce()[1], resource=closed)
        assert answer["status"] == "error" and "not accepted" in answer["msg"], answer
        assert sink.calls == []


def test_client_ids_that_are_no_document_url_are_unknown_clients(org, mcp):
    for client_id in ("http://localhost/client.json", "https://agent.example.com", "https://a.example.com/../x",
                      "https://agent.example.com/" + "x" * 100):
        assert not metadata_documents.is_document_url(client_id), client_id
        answer = sign_in(client_id, org, pkce()[1], mcp)
        assert answer["status"] == "error" and answer["msg"] == "Invalid client_id", answer
    lookup.forget()


def test_discovery_says_where_documents_are_taken(org, make_org):
    http = TestClient(api)
    opted_in = make_app(org)
    closed = make_app(make_org().name)
    assert http.get(f"/.well-known/{opted_in.name}/openid-configuration").json()[
        "client_id_metadata_document_supported"] is True
    assert "client_id_metadata_document_supported" not in http.get(
        f"/.well-known/{closed.name}/oauth-authorization-server").json()
    assert http.get("/.well-known/oauth-authorization-server").json()["client_id_metadata_document_supported"] is True
