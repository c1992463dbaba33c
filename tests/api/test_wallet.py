"""Wallet sign-in over HTTP (federation/wallet.py): /api/web3/nonce issues a nonce and the typed data
to sign; /api/login with a Web3 provider and the signed Web3 auth token signs the address's
account in (signing one up the first time, where the provider row allows it). A signature by
another key, a reused, expired or foreign nonce, and altered typed data are refused."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.db import session_scope
from iam_console.federation import federation, wallet
from iam_console.models.base import utcnow
from tests.conftest import unique
from tests.wallet import SoftWallet


@pytest.fixture
def world(database):
    """An organization whose default application lists a MetaMask provider (sign-up allowed),
    a Web3Onboard one that may not sign up, and an OAuth one."""
    org, app = unique("w3org"), unique("w3app")
    with session_scope() as db:
        db.add(m.Organization(owner="admin", name=org, password_type="argon2id", default_application=app))
        db.add(m.Provider(owner=org, name=f"{org}-mm", category="Web3", type="MetaMask"))
        db.add(m.Provider(owner=org, name=f"{org}-onboard", category="Web3", type="Web3Onboard"))
        db.add(m.Provider(owner=org, name=f"{org}-gh", category="OAuth", type="GitHub"))
        db.add(m.Application(
            owner="admin", name=app, organization=org, enable_password=True, enable_sign_up=True,
            client_id=uuid.uuid4().hex, client_secret=uuid.uuid4().hex,
            providers=[{"name": f"{org}-mm", "canSignUp": True, "canSignIn": True, "canUnlink": True},
                       {"name": f"{org}-onboard", "canSignUp": False, "canSignIn": True, "canUnlink": True},
                       {"name": f"{org}-gh", "canSignUp": True, "canSignIn": True, "canUnlink": True}]))
    return org


def _nonce(client: TestClient, org: str, key: SoftWallet, provider: str = "mm", **extra) -> dict:
    return client.post("/api/web3/nonce", json={"organization": org, "provider": f"{org}-{provider}",
                                                "address": key.address, "chainId": "0x1", **extra}).json()


def _token(issued: dict, key: SoftWallet, signer: SoftWallet | None = None, **changes) -> dict:
    token = {"address": key.address, "nonce": issued["nonce"], "createAt": issued["createAt"],
             "typedData": issued["typedData"], "signature": (signer or key).sign(issued["typedData"]),
             "walletType": "MetaMask"}
    return {**token, **changes}


def _login(client: TestClient, org: str, token: dict | str, provider: str = "mm") -> dict:
    code = token if isinstance(token, str) else json.dumps(token)
    return client.post("/api/login", json={"organization": org, "provider": f"{org}-{provider}", "code": code,
                                           "type": "login"}).json()


def _users(org: str) -> list[m.User]:
    with session_scope() as db:
        return list(db.exec(select(m.User).where(m.User.owner == org)).all())


def test_a_wallet_signs_up_then_signs_in_to_the_same_account(world):
    key, client = SoftWallet(), TestClient(api)
    issued = _nonce(client, world, key)
    assert issued["status"] == "ok", issued
    data = json.loads(issued["data"]["typedData"])
    assert data["primaryType"] == "AuthRequest" and data["domain"]["chainId"] == 1
    assert data["message"]["nonce"] == issued["data"]["nonce"] and data["message"]["createAt"]
    first = _login(client, world, _token(issued["data"], key))
    assert first["status"] == "ok", first
    (user,) = _users(world)
    assert user.third_party_ids["metamask"] == key.address.lower() and first["data"] == f"{world}/{user.name}"
    assert client.get("/api/get-account").json()["data"]["name"] == user.name  # the session cookie
    again = TestClient(api)
    second = _login(again, world, _token(_nonce(again, world, key)["data"], key))
    assert second["data"] == first["data"] and len(_users(world)) == 1


def test_a_signature_by_another_key_is_refused(world):
    key, thief, client = SoftWallet(), SoftWallet(), TestClient(api)
    issued = _nonce(client, world, key)["data"]
    answer = _login(client, world, _token(issued, key, signer=thief))
    assert answer == {**answer, "status": "error", "msg": wallet.BAD_SIGNATURE}
    assert _users(world) == []
    # the nonce was spent by the refused try: the right signature now comes too late
    assert _login(client, world, _token(issued, key))["msg"] == wallet.UNKNOWN_NONCE


def test_a_nonce_works_once(world):
    key, client = SoftWallet(), TestClient(api)
    token = _token(_nonce(client, world, key)["data"], key)
    assert _login(client, world, token)["status"] == "ok"
    assert _login(TestClient(api), world, token)["msg"] == wallet.UNKNOWN_NONCE


def test_an_expired_nonce_is_refused(world):
    key, client = SoftWallet(), TestClient(api)
    issued = _nonce(client, world, key)["data"]
    with session_scope() as db:
        row = db.exec(select(m.Web3Nonce).where(m.Web3Nonce.address == key.address.lower())).one()
        assert row.expires_at - row.created_at == timedelta(minutes=wallet.NONCE_MINUTES)
        row.expires_at = utcnow() - timedelta(seconds=1)
        db.add(row)
    assert _login(client, world, _token(issued, key))["msg"] == wallet.EXPIRED_NONCE
    assert _users(world) == []


def test_altered_data_another_address_and_another_provider_are_refused(world):
    key, other, client = SoftWallet(), SoftWallet(), TestClient(api)
    issued = _nonce(client, world, key)["data"]
    altered = json.loads(issued["typedData"])
    altered["message"]["application"] = "another-app"
    forged = json.dumps(altered)
    assert _login(client, world, _token(issued, key, typedData=forged, signature=key.sign(forged)))["msg"] == \
        wallet.OTHER_DATA
    issued = _nonce(client, world, key)["data"]
    assert _login(client, world, _token(issued, other, signature=other.sign(issued["typedData"])))["msg"] == \
        wallet.BAD_SIGNATURE  # a nonce issued for one address
    issued = _nonce(client, world, key)["data"]
    assert _login(client, world, _token(issued, key), provider="onboard")["msg"] == wallet.UNKNOWN_NONCE
    assert _users(world) == []


def test_a_provider_row_without_sign_up_refuses_a_new_address(world):
    key, client = SoftWallet(), TestClient(api)
    answer = _login(client, world, _token(_nonce(client, world, key, provider="onboard")["data"], key),
                    provider="onboard")
    assert answer["status"] == "error" and "is not allowed to sign up as new account via Web3Onboard" in \
        answer["msg"], answer
    assert _users(world) == []


def test_bad_input_is_refused_with_a_clear_message(world):
    key, client = SoftWallet(), TestClient(api)
    assert _nonce(client, world, key, address="0x1234")["msg"] == "The address is not a valid Ethereum address"
    assert _nonce(client, world, key, chainId="zz")["msg"] == "The chain id is not valid"
    assert _nonce(client, world, key, provider="gh")["msg"] == federation.NOT_ENABLED % f"{world}-gh"
    assert _nonce(client, world, key, provider="none")["msg"] == f"The provider: {world}-none does not exist"
    for code in ("not json", "[]", json.dumps({"address": key.address}), "x" * (wallet.MAX_TOKEN + 1)):
        assert _login(client, world, code)["msg"] == wallet.BAD_TOKEN
    issued = _nonce(client, world, key)["data"]
    assert _login(client, world, _token(issued, key, signature="0x1234"))["msg"] == wallet.BAD_SIGNATURE
    with session_scope() as db:
        assert db.exec(select(m.Web3Nonce).where(m.Web3Nonce.address == key.address.lower())).one().used
    assert _users(world) == []


def test_the_nonce_is_stored_hashed(world):
    key, client = SoftWallet(), TestClient(api)
    issued = _nonce(client, world, key)["data"]
    with session_scope() as db:
        row = db.exec(select(m.Web3Nonce).where(m.Web3Nonce.address == key.address.lower())).one()
    assert issued["nonce"] not in row.nonce_hash and row.nonce_hash == wallet._hash(issued["nonce"])


def test_a_linked_account_with_a_second_factor_owes_it(world):
    key, client = SoftWallet(), TestClient(api)
    assert _login(client, world, _token(_nonce(client, world, key)["data"], key))["status"] == "ok"
    with session_scope() as db:
        user = db.exec(select(m.User).where(m.User.owner == world)).one()
        user.email, user.mfa_email_enabled = "w3@example.com", True
        db.add(user)
    fresh = TestClient(api)
    answer = _login(fresh, world, _token(_nonce(fresh, world, key)["data"], key))
    assert (answer["status"], answer["data"]) == ("ok", "NextMfa") and answer["data2"][0]["mfaType"] == "email"
    assert fresh.get("/api/get-account").json()["status"] == "error"  # no session before the second factor


def test_a_provider_row_without_sign_in_issues_no_nonce(world):
    with session_scope() as db:
        app = db.exec(select(m.Application).where(m.Application.organization == world)).one()
        app.providers = [{**row, "canSignIn": False} for row in app.providers]
        db.add(app)
    answer = _nonce(TestClient(api), world, SoftWallet())
    assert answer["status"] == "error" and "cannot be used to sign in" in answer["msg"], answer
