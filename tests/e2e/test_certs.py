"""Certs in the browser: the form's rules (a new algorithm clears the pair and settles the bit
size, a new bit size clears the pair, a save with an empty pair generates one), Generate, the
30-row texts, copy and the downloads, the list's filters, the global admin's organization
selector, and the rights: shared certs (owner admin) are the global admin's, an organization
admin edits their own and reads the shared ones."""

from __future__ import annotations

import re
import uuid

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from playwright.sync_api import expect

from tests.e2e.steps import as_page, choose, save


def _add(page, owner: str, **fields) -> str:
    name = f"cert-{uuid.uuid4().hex[:8]}"
    body = {"owner": owner, "name": name, "displayName": name, "scope": "JWT", "type": "x509",
            "cryptoAlgorithm": "RS256", "bitSize": 1024, "expireInYears": 1, **fields}
    answer = page.request.post("/api/add-cert", data=body, headers=as_page(page)).json()
    assert answer["status"] == "ok", answer
    return name


def _stored(page, owner: str, name: str) -> dict:
    answer = page.request.get("/api/get-cert", params={"id": f"{owner}/{name}"}).json()
    assert answer["status"] == "ok" and answer["data"], answer
    return answer["data"]


def _row(page, text: str):
    return page.locator("#list-table tbody tr").filter(has_text=text)


def test_the_algorithm_and_bit_size_rules_generate_and_save(visit, page, api_login, accounts):
    api_login(accounts.admin)
    name = _add(page, "built-in")
    visit(f"/certs/built-in/{name}")
    expect(page.locator("#field-certificate")).to_have_value(re.compile("BEGIN CERTIFICATE"))
    expect(page.locator("#field-privateKey")).to_have_value(re.compile("BEGIN PRIVATE KEY"))
    for text in ("#field-certificate", "#field-privateKey"):
        expect(page.locator(text)).to_have_attribute("rows", "30")
    expect(page.locator("#field-bitSize")).to_have_text("1024")

    # ES: no bit size (0), and the pair is cleared; the save generates a key on the curve
    choose(page, page.locator("#field-cryptoAlgorithm"), "ES384")
    expect(page.locator("#field-bitSize")).to_have_count(0)
    expect(page.locator("#field-certificate")).to_have_value("")
    expect(page.locator("#field-privateKey")).to_have_value("")
    save(page)
    stored = _stored(page, "built-in", name)
    assert stored["bitSize"] == 0 and stored["cryptoAlgorithm"] == "ES384"
    key = serialization.load_pem_private_key(stored["privateKey"].encode(), None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, ec.SECP384R1)
    expect(page.locator("#field-privateKey")).to_have_value(stored["privateKey"])

    # back to RSA: a bit size of 0 is not one of RSA's, so 2048; the pair is cleared again
    choose(page, page.locator("#field-cryptoAlgorithm"), "PS256")
    expect(page.locator("#field-bitSize")).to_have_text("2048")
    expect(page.locator("#field-certificate")).to_have_value("")
    save(page)
    assert _stored(page, "built-in", name)["bitSize"] == 2048

    # a new bit size clears the pair; RSA keeps a bit size it can have
    expect(page.locator("#field-privateKey")).to_have_value(re.compile("BEGIN PRIVATE KEY"))
    choose(page, page.locator("#field-bitSize"), "1024")
    expect(page.locator("#field-certificate")).to_have_value("")
    expect(page.locator("#field-privateKey")).to_have_value("")
    choose(page, page.locator("#field-cryptoAlgorithm"), "RS512")
    expect(page.locator("#field-bitSize")).to_have_text("1024")

    # Generate: a pair for the form's settings, valid for expireInYears, kept once saved
    page.fill("#field-expireInYears", "3")
    page.click("#cert-generate")
    expect(page.get_by_text("Generated: save to keep the new key pair")).to_be_visible()
    expect(page.locator("#field-certificate")).to_have_value(re.compile("BEGIN CERTIFICATE"))
    generated = page.locator("#field-certificate").input_value()
    save(page)
    stored = _stored(page, "built-in", name)
    assert stored["certificate"] == generated and stored["cryptoAlgorithm"] == "RS512"
    certificate = x509.load_pem_x509_certificate(generated.encode())
    assert isinstance(certificate.public_key(), rsa.RSAPublicKey) and certificate.public_key().key_size == 1024
    years = (certificate.not_valid_after_utc - certificate.not_valid_before_utc).days
    assert 3 * 365 <= years <= 3 * 365 + 1


def _download(page, ident: str) -> tuple[str, str]:
    with page.expect_download() as info:
        page.click(f"#{ident}")
    download = info.value
    with open(download.path(), encoding="utf-8") as file:
        return download.suggested_filename, file.read()


def test_the_downloads_and_a_shared_cert_for_an_organization_admin(visit, page, context, api_login, accounts,
                                                                   server):
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=server.base_url)
    api_login(accounts.boss)
    name = _add(page, "acme", cryptoAlgorithm="ES256", bitSize=0)
    stored = _stored(page, "acme", name)
    visit(f"/certs/acme/{name}")
    expect(page.locator("#field-certificate")).to_have_value(stored["certificate"])
    page.click("#cert-copy-privateKey")
    expect(page.get_by_text("Copied to clipboard successfully")).to_be_visible()
    assert page.evaluate("navigator.clipboard.readText()") == stored["privateKey"]
    assert _download(page, "cert-download-certificate") == ("token_jwt_key.pem", stored["certificate"])
    assert _download(page, "cert-download-privateKey") == ("token_jwt_key.key", stored["privateKey"])
    expect(page.locator("#field-owner")).to_be_disabled()  # fixed to their organization
    page.fill("#field-displayName", "Acme signing")
    save(page)
    assert _stored(page, "acme", name)["displayName"] == "Acme signing"

    # the shared built-in cert: read-only, its certificate downloadable, its private key not even shown
    visit("/certs/admin/cert-built-in")
    expect(page.locator("#field-certificate")).to_have_value(re.compile("BEGIN CERTIFICATE"))
    for field in ("displayName", "certificate", "expireInYears", "name"):
        expect(page.locator(f"#field-{field}")).to_be_disabled()
    expect(page.locator("#field-cryptoAlgorithm")).to_be_disabled()
    expect(page.locator("#field-privateKey")).to_have_count(0)
    expect(page.locator("#cert-download-privateKey")).to_have_count(0)
    expect(page.locator("#cert-copy-privateKey")).to_have_count(0)
    expect(page.locator("#cert-generate")).to_be_disabled()
    filename, content = _download(page, "cert-download-certificate")
    assert filename == "token_jwt_key.pem" and "BEGIN CERTIFICATE" in content


def test_the_lists_of_a_global_and_an_organization_admin(visit, page, api_login, accounts):
    api_login(accounts.admin)
    shared = _add(page, "admin", cryptoAlgorithm="ES256", bitSize=0)
    payment = _add(page, "built-in", type="Payment", cryptoAlgorithm="", bitSize=0)
    visit("/certs")
    expect(page.locator("#list-table")).to_be_visible()
    # the global admin deletes shared certs, but never the built-in one
    page.fill("#search-value", shared)
    expect(_row(page, shared)).to_contain_text("admin (Shared)")
    expect(_row(page, shared).get_by_role("button", name="Delete")).to_be_enabled()
    page.fill("#search-value", "cert-built-in")
    expect(_row(page, "cert-built-in").get_by_role("button", name="Delete")).to_be_disabled()
    visit("/certs/admin/cert-built-in")  # it keeps its owner and name
    expect(page.locator("#field-privateKey")).to_have_value(re.compile("BEGIN PRIVATE KEY"))
    expect(page.locator("#field-owner")).to_be_disabled()
    expect(page.locator("#field-name")).to_be_disabled()
    # the type filter
    visit("/certs")
    choose(page, page.locator("#filter-type"), "Payment")
    expect(_row(page, payment)).to_have_count(1)
    assert set(page.locator("#list-table tbody tr td:nth-child(6)").all_inner_texts()) == {"Payment"}
    visit(f"/certs/admin/{shared}")
    expect(page.locator("#field-displayName")).to_be_enabled()
    expect(page.locator("#field-privateKey")).to_have_value(re.compile("BEGIN PRIVATE KEY"))
    # the global admin's organization selector: the organizations, and admin (Shared)
    moved = _add(page, "admin", cryptoAlgorithm="ES256", bitSize=0)
    visit(f"/certs/admin/{moved}")
    expect(page.locator("#field-owner")).to_have_text("admin (Shared)")
    page.click("#field-owner")
    expect(page.locator(".pick-option").filter(has_text="admin (Shared)")).to_have_count(1)
    page.fill(".pick-search input", "acme")
    page.locator(".pick-option").filter(has_text=re.compile("^acme$")).click()
    expect(page.locator("#field-owner")).to_have_text("acme")
    page.click("#edit-save")
    page.wait_for_url(re.compile(f"/certs/acme/{moved}$"))
    assert _stored(page, "acme", moved)["owner"] == "acme"

    page.context.clear_cookies()
    api_login(accounts.boss)
    own = _add(page, "acme", cryptoAlgorithm="ES256", bitSize=0)
    visit("/certs")
    expect(page.locator("#list-table")).to_be_visible()
    owners = set(page.locator("#list-table tbody tr td:nth-child(2)").all_inner_texts())
    assert owners <= {"acme", "admin (Shared)"} and "admin (Shared)" in owners
    page.fill("#search-value", shared)
    expect(_row(page, shared).get_by_role("button", name="Delete")).to_be_disabled()
    page.fill("#search-value", own)
    expect(_row(page, own).get_by_role("button", name="Delete")).to_be_enabled()
    # Add: a cert of their organization
    page.click("#list-add")
    page.wait_for_url(re.compile(r"/certs/acme/cert_\w+\?mode=add"))
    expect(page.locator("#field-owner")).to_have_value("acme")
    expect(page.locator("#field-bitSize")).to_have_text("4096")
    expect(page.locator("#field-privateKey")).to_have_value(re.compile("BEGIN PRIVATE KEY"))
    page.click("#edit-cancel")
    page.wait_for_url(re.compile(r"/certs$"))
