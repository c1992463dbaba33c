"""Certificates (issue 4): key pairs and self-signed X.509 certificates for every
algorithm and bit size of the cert form, generated on save; pasted pairs checked;
download-cert, whose private key reaches only a global admin or the owner's admin."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import jwt
import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from fastapi.testclient import TestClient
from sqlmodel import select

from iam_console import models as m
from iam_console.api.app import api
from iam_console.applications import certs
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from tests.api.conftest import sign_in
from tests.conftest import unique

# 1024-bit RSA is on the cert form (as in Casdoor); PyJWT warns that it is short
pytestmark = pytest.mark.filterwarnings("ignore::jwt.warnings.InsecureKeyLengthWarning")
PASSWORD = "Certs-pass-1"
SETTINGS = [(alg, bits) for alg in certs.ALGORITHMS
            for bits in ((0,) if alg.startswith("ES") else certs.RSA_BIT_SIZES)
            if (alg, bits) != ("PS512", 1024)]  # too short for PSS with SHA-512: refused below
CURVES = {"ES256": ec.SECP256R1, "ES384": ec.SECP384R1, "ES512": ec.SECP521R1}


def _signs_and_verifies(algorithm: str, cert_pem: str, key_pem: str) -> x509.Certificate:
    """The key signs a JWT with the algorithm and the certificate's public key verifies it."""
    certificate = x509.load_pem_x509_certificate(cert_pem.encode())
    token = jwt.encode({"sub": "someone", "iss": "iam"}, key_pem, algorithm=algorithm)
    assert jwt.decode(token, certificate.public_key(), algorithms=[algorithm])["sub"] == "someone"
    return certificate


# --- generation, for every setting of the form ---

@pytest.mark.parametrize(("algorithm", "bit_size"), SETTINGS)
def test_every_algorithm_and_bit_size_generates_a_working_pair(algorithm, bit_size):
    cert_pem, key_pem = certs.generate(algorithm, bit_size, 3, "cert-test")
    certificate = _signs_and_verifies(algorithm, cert_pem, key_pem)
    certificate.verify_directly_issued_by(certificate)  # self-signed
    assert certificate.subject.get_attributes_for_oid(x509.NameOID.COMMON_NAME)[0].value == "cert-test"
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    if algorithm.startswith("ES"):
        assert isinstance(key, ec.EllipticCurvePrivateKey) and isinstance(key.curve, CURVES[algorithm])
    else:
        assert isinstance(key, rsa.RSAPrivateKey) and key.key_size == bit_size
    lifetime = certificate.not_valid_after_utc - datetime.now(timezone.utc)
    assert timedelta(days=3 * 365 - 1) < lifetime <= timedelta(days=3 * 365)
    assert certs.check_pair(algorithm, bit_size, cert_pem, key_pem) == certificate


@pytest.mark.parametrize(("algorithm", "bit_size", "message"), [
    ("HS256", 2048, "Unknown crypto algorithm: HS256"),
    ("RS256", 1000, "The bit size must be 1024, 2048 or 4096"),
    ("PS512", 0, "The bit size must be 1024, 2048 or 4096"),
    ("PS512", 1024, "PS512 needs a bit size of 2048 or 4096"),
])
def test_generation_refuses_what_the_form_does_not_offer(algorithm, bit_size, message):
    with pytest.raises(ServiceError) as refused:
        certs.generate(algorithm, bit_size, 20, "x")
    assert str(refused.value) == message


# --- generated on save, through the API ---

def _cert(owner: str, name: str, **fields) -> dict:
    return {"owner": owner, "name": name, "displayName": name, "scope": "JWT", "type": "x509",
            "cryptoAlgorithm": "RS256", "bitSize": 1024, "expireInYears": 0, "certificate": "", "privateKey": "",
            **fields}


def _get(client: TestClient, owner: str, name: str) -> dict | None:
    return client.get("/api/get-cert", params={"id": f"{owner}/{name}"}).json()["data"]


def _stored(owner: str, name: str) -> m.Cert | None:
    with session_scope() as db:
        return db.exec(select(m.Cert).where(m.Cert.owner == owner, m.Cert.name == name)).first()


@pytest.fixture
def org_admin(make_org, make_user) -> tuple[str, TestClient]:
    org = make_org()
    make_user(owner=org.name, name="boss", password=PASSWORD, is_admin=True)
    return org.name, sign_in(org.name, "boss", PASSWORD)


def test_adding_a_cert_without_its_pem_generates_them(admin):
    name = unique("cert")
    assert admin.post("/api/add-cert", json=_cert("built-in", name)).json()["data"] == "Affected"
    saved = _get(admin, "built-in", name)
    certificate = _signs_and_verifies("RS256", saved["certificate"], saved["privateKey"])
    assert saved["expireInYears"] == 20  # the form's default for 0
    expires = datetime.fromisoformat(saved["expireTime"].replace("Z", "+00:00"))
    assert abs(expires - certificate.not_valid_after_utc) < timedelta(seconds=1)
    assert certificate.public_key().key_size == 1024


def test_an_es_cert_has_no_bit_size(admin):
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name, cryptoAlgorithm="ES384", bitSize=2048))
    saved = _get(admin, "built-in", name)
    assert saved["bitSize"] == 0
    _signs_and_verifies("ES384", saved["certificate"], saved["privateKey"])


def test_clearing_the_pem_on_update_regenerates_them(admin):
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name))
    first = _get(admin, "built-in", name)
    # what the console's form sends after the algorithm changes: both cleared
    changed = {**first, "cryptoAlgorithm": "PS256", "bitSize": 2048, "certificate": "", "privateKey": ""}
    assert admin.post("/api/update-cert", params={"id": f"built-in/{name}"}, json=changed).json()["data"] == "Affected"
    second = _get(admin, "built-in", name)
    assert second["certificate"] != first["certificate"] and second["privateKey"] != first["privateKey"]
    assert _signs_and_verifies("PS256", second["certificate"], second["privateKey"]).public_key().key_size == 2048
    # an update that leaves the pair alone keeps it
    admin.post("/api/update-cert", params={"id": f"built-in/{name}"}, json={**second, "displayName": "renamed"})
    assert _get(admin, "built-in", name)["certificate"] == second["certificate"]


def test_a_cert_that_is_not_x509_is_left_alone(admin):
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name, type="Payment", cryptoAlgorithm="", bitSize=0))
    saved = _get(admin, "built-in", name)
    assert (saved["certificate"], saved["privateKey"]) == ("", "")


@pytest.mark.parametrize(("fields", "message"), [
    ({"cryptoAlgorithm": "XS256"}, "Unknown crypto algorithm: XS256"),
    ({"cryptoAlgorithm": "RS384", "bitSize": 3000}, "The bit size must be 1024, 2048 or 4096"),
    ({"type": "SSL"}, "The type must be x509 or Payment"),
    ({"scope": "SAML"}, "The scope must be JWT"),
])
def test_generation_on_save_refuses_unknown_settings(admin, fields, message):
    name = unique("cert")
    answer = admin.post("/api/add-cert", json=_cert("built-in", name, **fields)).json()
    assert answer["status"] == "error" and answer["msg"] == message
    assert _stored("built-in", name) is None


# --- a pasted pair ---

RS_1024 = certs.generate("RS256", 1024, 1, "pasted")
OTHER_RS_1024 = certs.generate("RS256", 1024, 1, "other")
ES_256 = certs.generate("ES256", 0, 1, "pasted-es")


def test_a_pasted_pair_is_kept_and_its_expiry_read(admin):
    name = unique("cert")
    cert_pem, key_pem = RS_1024
    assert admin.post("/api/add-cert", json=_cert("built-in", name, certificate=cert_pem, privateKey=key_pem,
                                                  expireInYears=1)).json()["data"] == "Affected"
    saved = _get(admin, "built-in", name)
    assert (saved["certificate"], saved["privateKey"]) == RS_1024
    not_after = x509.load_pem_x509_certificate(cert_pem.encode()).not_valid_after_utc
    assert datetime.fromisoformat(saved["expireTime"].replace("Z", "+00:00")) == not_after.replace(microsecond=0)


@pytest.mark.parametrize(("fields", "message"), [
    ({"certificate": RS_1024[0], "privateKey": OTHER_RS_1024[1]}, "The private key does not match the certificate"),
    ({"certificate": ES_256[0], "privateKey": RS_1024[1]}, "The private key does not match the certificate"),
    ({"certificate": RS_1024[0], "privateKey": RS_1024[1], "bitSize": 2048}, "The private key has 1024 bits, not 2048"),
    ({"certificate": ES_256[0], "privateKey": ES_256[1], "cryptoAlgorithm": "RS256"},
     "The private key does not fit the crypto algorithm RS256"),
    ({"certificate": ES_256[0], "privateKey": ES_256[1], "cryptoAlgorithm": "ES384"},
     "The private key does not fit the crypto algorithm ES384"),
    ({"certificate": "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----", "privateKey": RS_1024[1]},
     "The certificate is not a valid PEM X.509 certificate"),
])
def test_a_pasted_pair_that_does_not_fit_is_refused_and_nothing_written(admin, fields, message):
    name = unique("cert")
    answer = admin.post("/api/add-cert", json=_cert("built-in", name, **fields)).json()
    assert answer["status"] == "error" and answer["msg"] == message, answer
    assert _stored("built-in", name) is None


def test_a_certificate_alone_is_kept_alone(admin):
    """Another party's certificate (a SAML service provider's): stored without a key, none made up."""
    name = unique("cert")
    answer = admin.post("/api/add-cert", json=_cert("built-in", name, certificate=RS_1024[0])).json()
    assert answer["data"] == "Affected", answer
    stored = _stored("built-in", name)
    assert (stored.certificate, stored.private_key) == (RS_1024[0], "")
    not_after = x509.load_pem_x509_certificate(RS_1024[0].encode()).not_valid_after_utc
    assert stored.expire_time.replace(tzinfo=timezone.utc) == not_after.replace(microsecond=0)
    # kept on an update that leaves it alone; a key pasted later must be its own
    renamed = admin.post("/api/update-cert", params={"id": f"built-in/{name}"},
                         json={**_get(admin, "built-in", name), "displayName": "sp"}).json()
    assert renamed["data"] == "Affected", renamed
    assert _stored("built-in", name).private_key == ""
    wrong = admin.post("/api/update-cert", params={"id": f"built-in/{name}"}, json={
        "owner": "built-in", "name": name, "privateKey": OTHER_RS_1024[1]}).json()
    assert wrong["msg"] == "The private key does not match the certificate"
    # a certificate alone that does not fit the settings, or is none, is refused and nothing written
    for fields, message in (({"cryptoAlgorithm": "ES256"}, "The certificate's key does not fit the crypto algorithm "
                                                           "ES256"),
                            ({"bitSize": 2048}, "The certificate's key has 1024 bits, not 2048")):
        other = unique("cert")
        refused = admin.post("/api/add-cert", json=_cert("built-in", other, certificate=RS_1024[0], **fields)).json()
        assert refused["msg"] == message and _stored("built-in", other) is None
    garbage = admin.post("/api/add-cert", json=_cert("built-in", unique("cert"), certificate="not a cert")).json()
    assert garbage["msg"] == "The certificate is not a valid PEM X.509 certificate"


def test_the_masked_private_key_sent_back_keeps_the_stored_one(admin):
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name, certificate=RS_1024[0], privateKey=RS_1024[1]))
    answer = admin.post("/api/update-cert", params={"id": f"built-in/{name}"}, json={
        "owner": "built-in", "name": name, "displayName": "renamed", "privateKey": "***"}).json()
    assert answer["data"] == "Affected", answer
    assert _stored("built-in", name).private_key == RS_1024[1]


def test_an_update_to_a_mismatched_pair_changes_nothing(admin):
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name, certificate=RS_1024[0], privateKey=RS_1024[1]))
    for fields in ({"privateKey": OTHER_RS_1024[1]}, {"cryptoAlgorithm": "ES256"}):
        answer = admin.post("/api/update-cert", params={"id": f"built-in/{name}"},
                            json={"owner": "built-in", "name": name, **fields}).json()
        assert answer["status"] == "error", answer
    stored = _stored("built-in", name)
    assert (stored.certificate, stored.private_key, stored.crypto_algorithm) == (*RS_1024, "RS256")


# --- download-cert ---

def _download(client: TestClient, owner: str, name: str, which: str):
    return client.get("/api/download-cert", params={"id": f"{owner}/{name}", "file": which})


def _is_file(answer, filename: str, content: str) -> bool:
    return (answer.status_code == 200 and answer.headers["content-type"].startswith("application/x-pem-file")
            and answer.headers["content-disposition"] == f'attachment; filename="{filename}"'
            and answer.text == content)


def test_the_owner_admin_and_the_global_admin_download_both_files(admin, org_admin):
    org, boss = org_admin
    name = unique("cert")
    assert boss.post("/api/add-cert", json=_cert(org, name, cryptoAlgorithm="ES256")).json()["data"] == "Affected"
    stored = _stored(org, name)
    for client in (admin, boss):
        assert _is_file(_download(client, org, name, "certificate"), "token_jwt_key.pem", stored.certificate)
        assert _is_file(_download(client, org, name, "privateKey"), "token_jwt_key.key", stored.private_key)
    assert _download(admin, org, name, "privateKey").headers["cache-control"] == "no-store"


def test_an_organization_admin_gets_no_shared_private_key(org_admin):
    _, boss = org_admin
    with session_scope() as db:
        shared = db.exec(select(m.Cert).where(m.Cert.owner == "admin", m.Cert.name == "cert-built-in")).one()
    assert _is_file(_download(boss, "admin", "cert-built-in", "certificate"), "token_jwt_key.pem", shared.certificate)
    refused = _download(boss, "admin", "cert-built-in", "privateKey").json()
    assert refused["status"] == "error" and refused["msg"] == "Unauthorized operation"
    assert shared.private_key not in str(refused)


def test_no_other_organization_or_user_downloads_a_private_key(admin, org_admin, make_org, make_user):
    org, boss = org_admin
    name = unique("cert")
    boss.post("/api/add-cert", json=_cert(org, name, cryptoAlgorithm="ES256"))
    other = make_org()
    make_user(owner=other.name, name="boss", password=PASSWORD, is_admin=True)
    make_user(owner=org, name="alice", password=PASSWORD)
    callers = {"another organization's admin": sign_in(other.name, "boss", PASSWORD),
               "an ordinary user of the organization": sign_in(org, "alice", PASSWORD)}
    # another organization's cert is answered as a missing one; an ordinary user reads no cert at all
    refusals = {"another organization's admin": f"The cert: {org}/{name} does not exist",
                "an ordinary user of the organization": "Unauthorized operation"}
    for who, client in callers.items():
        for which in ("privateKey", "certificate"):
            answer = _download(client, org, name, which).json()
            assert answer["status"] == "error" and answer["msg"] == refusals[who], (who, which, answer)
    anonymous = _download(TestClient(api), org, name, "privateKey").json()
    assert anonymous["status"] == "error" and anonymous["data"] == "Please login first"


def test_download_refuses_what_it_cannot_serve(admin):
    missing = _download(admin, "built-in", "no-such-cert", "certificate").json()
    assert missing["status"] == "error" and missing["msg"] == "The cert: built-in/no-such-cert does not exist"
    unknown = _download(admin, "admin", "cert-built-in", "publicKey").json()
    assert unknown["status"] == "error" and unknown["msg"] == "The file must be certificate or privateKey"
    bad_id = admin.get("/api/download-cert", params={"file": "certificate"}).json()
    assert bad_id["status"] == "error"
    name = unique("cert")
    admin.post("/api/add-cert", json=_cert("built-in", name, type="Payment", cryptoAlgorithm="", bitSize=0))
    empty = _download(admin, "built-in", name, "privateKey").json()
    assert empty["status"] == "error" and "has no privateKey" in empty["msg"]


# --- rights: shared certs (owner admin) are the global admin's; an organization admin edits their own ---

def _ok(answer) -> bool:
    body = answer.json()
    return body["status"] == "ok" and body["data"] == "Affected"


def test_an_organization_admin_edits_their_own_certs_and_never_a_shared_one(admin, org_admin):
    org, boss = org_admin
    own, shared = unique("cert"), unique("cert")
    assert _ok(boss.post("/api/add-cert", json=_cert(org, own, cryptoAlgorithm="ES256")))
    assert _ok(admin.post("/api/add-cert", json=_cert("admin", shared, cryptoAlgorithm="ES256")))
    mine = _get(boss, org, own)
    assert _ok(boss.post("/api/update-cert", params={"id": f"{org}/{own}"}, json={**mine, "displayName": "mine"}))
    theirs = _get(boss, "admin", shared)  # readable: the shared certs are offered to every organization
    assert theirs is not None and theirs["privateKey"] == "***"
    refusals = [
        boss.post("/api/update-cert", params={"id": f"admin/{shared}"}, json={**theirs, "displayName": "taken"}),
        boss.post("/api/delete-cert", json=theirs),
        boss.post("/api/add-cert", json=_cert("admin", unique("cert"), cryptoAlgorithm="ES256")),
        boss.post("/api/update-cert", params={"id": f"{org}/{own}"}, json={**mine, "owner": "admin"}),
    ]
    for answer in refusals:
        body = answer.json()
        assert body["status"] == "error", body
    assert _stored("admin", shared).display_name == shared and _stored(org, own) is not None
    # the global admin edits and deletes the shared cert
    assert _ok(admin.post("/api/update-cert", params={"id": f"admin/{shared}"},
                          json={**_get(admin, "admin", shared), "displayName": "shared"}))
    assert _stored("admin", shared).display_name == "shared"
    assert _ok(admin.post("/api/delete-cert", json=_get(admin, "admin", shared)))


def test_generate_is_for_those_who_may_change_the_cert(admin, org_admin):
    from iam_console.applications import cert_keys
    from iam_console.core.access import Actor

    org, _ = org_admin
    with session_scope() as db:
        boss = Actor(user=db.exec(select(m.User).where(m.User.owner == org, m.User.name == "boss")).one())
        god = Actor(user=db.exec(select(m.User).where(m.User.owner == "built-in", m.User.name == "admin")).one())
        with pytest.raises(ServiceError) as refused:
            cert_keys.check_may_change(db, boss, "admin", "cert-built-in")
        assert str(refused.value) == "Unauthorized operation"
        with pytest.raises(ServiceError) as missing:
            cert_keys.check_may_change(db, boss, "built-in", "cert-built-in")  # out of reach: as if missing
        assert str(missing.value) == "The cert: built-in/cert-built-in does not exist"
        cert_keys.check_may_change(db, god, "admin", "cert-built-in")
    cert_pem, key_pem, years = cert_keys.new_pair("PS384", 1024, 0, "generated")
    assert years == 20  # 0 years: the default, as a save with empty keys
    certificate = _signs_and_verifies("PS384", cert_pem, key_pem)
    assert certificate.public_key().key_size == 1024
    lifetime = certificate.not_valid_after_utc - datetime.now(timezone.utc)
    assert timedelta(days=20 * 365 - 1) < lifetime <= timedelta(days=20 * 365)
    _, es_key, _ = cert_keys.new_pair("ES512", 4096, 2, "generated")  # ES: the curve, whatever the bit size
    assert isinstance(serialization.load_pem_private_key(es_key.encode(), None).curve, ec.SECP521R1)
    with pytest.raises(ServiceError):
        cert_keys.new_pair("RS256", 1024, -1, "x")
