"""Every Casdoor hash type verifies; new hashes are argon2id; rehash decisions."""

import base64
import hashlib

import bcrypt
import pytest
from argon2 import PasswordHasher

from iam_console.identity.passwords import TYPES, hash_password, needs_rehash, new_salt, verify_password

PASSWORD = "correct horse battery staple"


@pytest.mark.parametrize("type_", TYPES)
def test_round_trip_for_every_type(type_):
    salt = new_salt()
    stored = hash_password(PASSWORD, type_, salt)
    assert verify_password(PASSWORD, stored, type_, user_salt=salt)
    assert not verify_password(PASSWORD + "x", stored, type_, user_salt=salt)


def test_default_is_argon2id_with_owasp_parameters():
    stored = hash_password(PASSWORD)
    assert stored.startswith("$argon2id$v=19$m=19456,t=2,p=1$")


def test_salted_sha256_matches_casdoor_construction():
    salt = "0123456789abcdef0123"
    inner = hashlib.sha256(PASSWORD.encode()).hexdigest()
    casdoor = hashlib.sha256((inner + salt).encode()).hexdigest()
    assert verify_password(PASSWORD, casdoor, "salt", user_salt=salt)
    # the organization's salt is tried as well as the user's
    assert verify_password(PASSWORD, casdoor, "salt", user_salt="other", org_salt=salt)


def test_unsalted_digest_accepts_the_double_digest_form():
    single = hashlib.sha256(PASSWORD.encode()).hexdigest()
    double = hashlib.sha256(single.encode()).hexdigest()
    assert verify_password(PASSWORD, single, "salt")
    assert verify_password(PASSWORD, double, "salt")


def test_bcrypt_2a_hashes_from_go_verify():
    stored = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(10)).decode().replace("$2b$", "$2a$", 1)
    assert verify_password(PASSWORD, stored, "bcrypt")


def test_casdoor_argon2id_parameters_verify():
    stored = PasswordHasher(time_cost=1, memory_cost=65536, parallelism=2).hash(PASSWORD)
    assert verify_password(PASSWORD, stored, "argon2id")
    assert needs_rehash(stored, "argon2id", "argon2id")  # weaker parameters get upgraded


def test_pbkdf2_salt_is_keycloak_style():
    salt = "0123456789abcdef0123"
    key = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), base64.b64decode(salt), 27500, 64)
    assert verify_password(PASSWORD, base64.b64encode(key).decode(), "pbkdf2-salt", user_salt=salt)


def test_pbkdf2_django_reads_iterations_and_salt_from_the_hash():
    key = hashlib.pbkdf2_hmac("sha256", PASSWORD.encode(), b"abc", 1000, 32)
    stored = f"pbkdf2_sha256$1000$abc${base64.b64encode(key).decode()}"
    assert verify_password(PASSWORD, stored, "pbkdf2-django")


@pytest.mark.parametrize("stored,type_", [("", "argon2id"), ("x", "unknown"), ("garbage", "bcrypt"),
                                         ("garbage", "argon2id"), ("a$b", "pbkdf2-django")])
def test_broken_or_unknown_hashes_never_verify(stored, type_):
    assert not verify_password(PASSWORD, stored, type_)


def test_rehash_when_the_organization_type_differs():
    assert needs_rehash("x", "md5-salt", "argon2id")
    assert not needs_rehash(hash_password(PASSWORD), "argon2id", "argon2id")
    assert not needs_rehash("plain-value", "plain", "plain")
