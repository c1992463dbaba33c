"""First-start data: what Casdoor seeds, generated keys, idempotence."""

import subprocess
from datetime import UTC, datetime

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from sqlmodel import Session, SQLModel, select

from iam_console.core.seed import ensure_first_start_data
from iam_console.db import make_engine, migrate, session_scope
from iam_console.identity.passwords import verify_password
from iam_console.models import Application, Cert, Organization, Provider, Row, User, to_wire
from tests.conftest import ADMIN_PASSWORD

EXPECTED = {
    "organization": [("admin", "built-in")],
    "user": [("built-in", "admin")],
    "application": [("admin", "app-built-in")],
    "cert": [("admin", "cert-built-in")],
    "provider": [("admin", "provider_balance"), ("admin", "provider_captcha_default"),
                 ("admin", "provider_payment_dummy")],
    "ldap": [("built-in", "ldap-built-in")],
    "permission": [("built-in", "permission-built-in")],
    "model": [("built-in", "api-model-built-in"), ("built-in", "user-model-built-in")],
    "adapter": [("built-in", "api-adapter-built-in"), ("built-in", "user-adapter-built-in")],
    "enforcer": [("built-in", "api-enforcer-built-in"), ("built-in", "user-enforcer-built-in")],
}


@pytest.fixture
def fresh(tmp_path):
    url = f"sqlite:///{tmp_path / 'fresh.db'}"
    migrate(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()


def snapshot(engine):
    """Every row of every table, as the wire shows it."""
    with Session(engine) as db:
        return {
            table.name: sorted(str(to_wire(row)) for row in db.exec(select(model)))
            for table, model in ((m.__table__, m) for m in _tables())
        }


def _tables():
    return [mapper.class_ for mapper in SQLModel._sa_registry.mappers if issubclass(mapper.class_, Row)]


def test_seeds_the_same_kinds_and_names_as_casdoor(fresh):
    with session_scope(fresh) as db:
        ensure_first_start_data(db, "given-password")
    with Session(fresh) as db:
        for model in _tables():
            name = model.__table__.name
            if name in EXPECTED:
                rows = sorted((r.owner, r.name) for r in db.exec(select(model)))
                assert rows == EXPECTED[name], name


def test_second_start_changes_nothing(fresh):
    with session_scope(fresh) as db:
        ensure_first_start_data(db, "")
    before = snapshot(fresh)
    with session_scope(fresh) as db:
        assert ensure_first_start_data(db, "") is None
    assert snapshot(fresh) == before


def test_generated_admin_password_is_returned_once_and_works(fresh):
    with session_scope(fresh) as db:
        password = ensure_first_start_data(db, "")
    assert password and len(password) >= 16
    with Session(fresh) as db:
        admin = db.exec(select(User).where(User.owner == "built-in", User.name == "admin")).one()
    assert admin.is_admin and admin.password_type == "argon2id"
    assert admin.password.startswith("$argon2id$") and password not in admin.password
    assert verify_password(password, admin.password, admin.password_type)


def test_configured_admin_password_is_not_echoed(database):
    with session_scope() as db:
        assert ensure_first_start_data(db, ADMIN_PASSWORD) is None
        admin = db.exec(select(User).where(User.owner == "built-in", User.name == "admin")).one()
    assert verify_password(ADMIN_PASSWORD, admin.password, "argon2id")


def test_built_in_cert_is_generated_rs256_4096_for_20_years(database):
    with session_scope() as db:
        cert = db.exec(select(Cert).where(Cert.owner == "admin", Cert.name == "cert-built-in")).one()
    certificate = x509.load_pem_x509_certificate(cert.certificate.encode())
    key = serialization.load_pem_private_key(cert.private_key.encode(), password=None)
    assert (cert.crypto_algorithm, cert.bit_size, cert.expire_in_years, cert.scope, cert.type) == (
        "RS256", 4096, 20, "JWT", "x509")
    assert key.key_size == 4096
    assert certificate.public_key().public_numbers() == key.public_key().public_numbers()
    years = (certificate.not_valid_after_utc - datetime.now(UTC)).days / 365
    assert 19.9 < years <= 20.1


def test_each_install_gets_its_own_key_pair(fresh, database):
    with session_scope(fresh) as db:
        ensure_first_start_data(db, "x")
    with Session(fresh) as a, session_scope() as b:
        one = a.exec(select(Cert.private_key).where(Cert.name == "cert-built-in")).one()
        other = b.exec(select(Cert.private_key).where(Cert.owner == "admin", Cert.name == "cert-built-in")).one()
    assert one != other


def test_application_and_organization_defaults(database):
    with session_scope() as db:
        app = db.exec(select(Application).where(Application.name == "app-built-in")).one()
        org = db.exec(select(Organization).where(Organization.name == "built-in")).one()
        providers = {p.name: (p.category, p.type) for p in db.exec(select(Provider))}
    assert len(app.client_id) == 20 and len(app.client_secret) == 40
    assert (app.organization, app.cert, app.token_format, app.expire_in_hours) == ("built-in", "cert-built-in",
                                                                                   "JWT", 168)
    assert org.password_type == "argon2id" and org.init_score == 2000 and org.enable_tour
    assert len(org.account_items) >= 47 and {i["name"] for i in org.account_items} >= {"Password", "Is admin"}
    assert providers["provider_captcha_default"] == ("Captcha", "Default")
    assert providers["provider_balance"] == ("Payment", "Balance")
    assert providers["provider_payment_dummy"] == ("Payment", "Dummy")


def test_no_private_key_is_committed():
    marker = "PRIVATE " + "KEY-----"  # spelled apart so this file does not match itself
    tracked = subprocess.run(["git", "grep", "-l", marker], capture_output=True, text=True)
    assert tracked.stdout.strip() == ""
