"""Wallet sign-in in the browser with a software wallet: an injected `window.ethereum` whose key
the test holds (tests/wallet.py; the signing happens in Python through an exposed function). The
first sign-in signs the address up and lands signed in, the second finds the same account; the
token kept under Web3AuthToken_<address> cannot be posted again and is cleared at sign-out. A
signature by another key is refused; no wallet, and a wallet that refuses, are told in place."""

from __future__ import annotations

import json
import re
import secrets
import uuid
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest
from playwright.sync_api import expect

from tests.e2e.axe import serious
from tests.e2e.steps import server_db
from tests.wallet import SoftWallet

CALLBACK = "http://127.0.0.1:9/callback"  # nothing listens: Playwright answers the navigation
WALLET = """
window.ethereum = {
  isMetaMask: true,
  request: async ({ method, params }) => {
    const answer = await window.iamTestWallet(method, params || []);
    if (answer && answer.error) throw { code: 4001, message: answer.error };
    return answer.result;
  },
};
"""


class Wallet:
    """What the injected wallet answers: the key's address, and signatures by `signer`."""

    def __init__(self) -> None:
        self.key = SoftWallet()
        self.signer = self.key
        self.refuse = False

    def __call__(self, method: str, params: list) -> dict:
        if self.refuse:
            return {"error": "User rejected the request."}
        if method == "eth_requestAccounts":
            return {"result": [self.key.address]}
        if method == "eth_chainId":
            return {"result": "0x1"}
        if method == "eth_signTypedData_v4":
            assert params[0] == self.key.address
            return {"result": self.signer.sign(params[1])}
        return {"error": f"unsupported {method}"}


@pytest.fixture
def org(server):
    from iam_console.models import Application, Organization, Provider

    org, app = f"w3-{uuid.uuid4().hex[:6]}", f"w3-app-{uuid.uuid4().hex[:6]}"
    with server_db(server) as db:
        db.add(Organization(owner="admin", name=org, display_name=org, password_type="argon2id",
                            default_application=app))
        db.add(Provider(owner=org, name=f"{org}-mm", display_name="MetaMask", category="Web3", type="MetaMask"))
        db.add(Provider(owner=org, name=f"{org}-onboard", display_name="Web3-Onboard", category="Web3",
                        type="Web3Onboard"))
        db.add(Application(owner="admin", name=app, organization=org, enable_password=True, enable_sign_up=True,
                           client_id=f"{org}-client", client_secret=uuid.uuid4().hex, cert="cert-built-in",
                           redirect_uris=[CALLBACK], grant_types=["authorization_code"], token_format="JWT",
                           signin_methods=[{"name": "Password", "displayName": "Password", "rule": "All"}],
                           providers=[{"name": f"{org}-mm", "canSignUp": True, "canSignIn": True,
                                       "canUnlink": True},
                                      {"name": f"{org}-onboard", "canSignUp": True, "canSignIn": True,
                                       "canUnlink": True}]))
    return org


@pytest.fixture
def wallet(page) -> Wallet:
    held = Wallet()
    page.expose_function("iamTestWallet", held)
    page.add_init_script(WALLET)
    return held


def _stored(page) -> dict:
    return page.evaluate("""() => Object.fromEntries(Object.keys(localStorage)
        .filter((k) => k.startsWith("Web3AuthToken_")).map((k) => [k, localStorage.getItem(k)]))""")


def _users(server, org: str) -> list:
    from sqlmodel import select

    from iam_console.models import User

    with server_db(server) as db:
        return list(db.exec(select(User.name).where(User.owner == org)).all())


def test_a_wallet_signs_up_signs_in_and_its_token_goes_at_sign_out(server, visit, page, context, org, wallet):
    visit(f"/login/{org}")
    button = page.locator(f".login-wallet[data-provider='{org}-mm']")
    expect(button).to_have_text("Sign in with MetaMask")
    assert serious(page) == []
    button.click()
    expect(page).not_to_have_url(re.compile(r"/login"), timeout=15_000)
    address = wallet.key.address
    account = page.request.get("/api/get-account").json()["data"]
    assert (account["owner"], account["name"], account["metamask"]) == (org, address.lower(), address.lower())
    stored = _stored(page)
    token = json.loads(stored[f"Web3AuthToken_{address}"])
    assert token["address"] == address and token["walletType"] == "MetaMask" and token["signature"]
    assert json.loads(token["typedData"])["message"]["nonce"] == token["nonce"]
    # the kept token cannot sign in again: its nonce is spent
    replayed = page.request.post("/api/login", data={"organization": org, "provider": f"{org}-mm",
                                                     "code": stored[f"Web3AuthToken_{address}"]}).json()
    assert replayed["msg"] == "The nonce is unknown or has already been used, please sign in again"

    visit.live()  # the page the sign-in went on to is hydrated before its menu is used
    page.click("#user-menu")
    page.click("#logout")
    expect(page).to_have_url(re.compile(r"/login"))
    assert _stored(page) == {}
    visit(f"/login/{org}")
    page.locator(".login-wallet").first.click()
    expect(page).not_to_have_url(re.compile(r"/login"), timeout=15_000)
    assert page.request.get("/api/get-account").json()["data"]["name"] == address.lower()
    assert _users(server, org) == [address.lower()]


def test_a_signature_by_another_key_is_refused(server, visit, page, org, wallet):
    wallet.signer = SoftWallet()
    visit(f"/login/{org}")
    page.locator(".login-wallet").first.click()
    expect(page.locator("#login-error")).to_have_text("The signature does not match the address", timeout=15_000)
    assert _users(server, org) == []


def test_a_refusing_wallet_is_told(visit, page, org, wallet):
    wallet.refuse = True
    visit(f"/login/{org}")
    page.locator(f".login-wallet[data-provider='{org}-mm']").click()
    expect(page.locator("#login-error")).to_have_text(
        "Failed to obtain MetaMask authorization: User rejected the request.")
    page.locator(f".login-wallet[data-provider='{org}-onboard']").click()
    expect(page.locator("#login-error")).to_have_text(
        "Failed to obtain Web3-Onboard authorization: User rejected the request.")


def test_without_a_wallet_the_page_says_so(visit, page, org):
    visit(f"/login/{org}")
    page.locator(".login-wallet").first.click()
    expect(page.locator("#login-error")).to_have_text("MetaMask plugin not detected")


def test_the_authorize_page_answers_its_request_after_the_wallet_signs(server, visit, page, context, org, wallet):
    def arrived(route) -> None:
        route.fulfill(status=200, content_type="text/html", body="<p id='callback'>the client</p>")

    context.route(re.compile(r"^http://127\.0\.0\.1:9/"), arrived)
    state = secrets.token_urlsafe(8)
    visit("/login/oauth/authorize?" + urlencode({"client_id": f"{org}-client", "response_type": "code",
                                                 "redirect_uri": CALLBACK, "scope": "openid", "state": state}))
    page.locator(".authorize-wallet").first.click()
    expect(page.locator("#callback")).to_be_visible(timeout=15_000)
    query = parse_qs(urlsplit(page.url).query)
    assert query["state"] == [state] and query["code"][0]
    assert _users(server, org) == [wallet.key.address.lower()]
