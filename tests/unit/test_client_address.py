"""The console reads the browser's address as the API does: the websocket handshake's peer,
and X-Forwarded-For only from a proxy listed in IAM_TRUSTED_PROXIES."""

from __future__ import annotations

from types import SimpleNamespace

from iam_console.core import addresses
from iam_console.ui.state.account import client_ip


def _router(peer: str, forwarded: str = "", session_ip: str = "") -> SimpleNamespace:
    raw = {"asgi-scope-client": peer, **({"x-forwarded-for": forwarded} if forwarded else {})}
    return SimpleNamespace(headers=SimpleNamespace(raw_headers=raw), session=SimpleNamespace(client_ip=session_ip))


def test_a_spoofed_header_on_the_websocket_is_ignored(monkeypatch):
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks(""))
    assert client_ip(_router("203.0.113.5", "1.2.3.4")) == "203.0.113.5"
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks("10.0.0.0/8"))
    assert client_ip(_router("203.0.113.5", "1.2.3.4")) == "203.0.113.5"


def test_a_trusted_proxy_forwards_the_browsers_address(monkeypatch):
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks("10.0.0.0/8"))
    assert client_ip(_router("10.0.0.2", "9.9.9.9, 198.51.100.3, 10.0.0.9")) == "198.51.100.3"


def test_without_the_raw_peer_the_sessions_address_is_used(monkeypatch):
    monkeypatch.setattr(addresses, "TRUSTED", addresses.parse_networks(""))
    router = SimpleNamespace(headers=SimpleNamespace(raw_headers={}), session=SimpleNamespace(client_ip="192.0.2.4"))
    assert client_ip(router) == "192.0.2.4"


def test_every_reading_of_the_address_goes_through_one_function():
    """No module reads a request's peer or the forwarded header itself."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[2] / "iam_console"
    readers = {str(p.relative_to(root)) for p in root.rglob("*.py")
               if "request.client.host" in p.read_text() or '"x-forwarded-for"' in p.read_text().lower()
               or "session.client_ip" in p.read_text()}
    assert readers <= {"api/callers.py", "ui/state/account.py", "core/addresses.py"}, readers
