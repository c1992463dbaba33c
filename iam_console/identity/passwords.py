"""Password hashing: every hash type Casdoor stores verifies here.

New hashes use the organization's type; argon2id (OWASP parameters) is the
default for anything unset. Salted SHA/MD5 forms exist only so that imported
users can sign in and be re-hashed.
"""

from __future__ import annotations

import base64
import ctypes
import hashlib
import hmac
import secrets

import bcrypt
from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

DEFAULT_TYPE = "argon2id"
TYPES = ("plain", "salt", "sha512-salt", "md5-salt", "bcrypt", "pbkdf2-salt", "argon2id", "pbkdf2-django")

# OWASP's recommendation for argon2id (m=19 MiB, t=2, p=1).
_argon2 = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)


def _reuse_hash_memory() -> None:
    """argon2id takes 19 MiB for each hash. glibc serves a block that large with a fresh
    mmap and unmaps it afterwards, so every sign-in faults 4,864 pages in again (3-4 ms
    of a 23 ms verification, measured by bench/oauth_grants.py under granian). Above
    the mmap threshold's reach, the block comes from the heap and is reused."""
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:
        return  # not glibc: nothing to tune
    m_trim_threshold, m_mmap_threshold = -1, -3  # mallopt's parameter numbers
    libc.mallopt(m_mmap_threshold, 32 << 20)
    libc.mallopt(m_trim_threshold, 64 << 20)


_reuse_hash_memory()
_BCRYPT_COST = 10
_PBKDF2_SALT_ITERATIONS = 27500
_DJANGO_ITERATIONS = 260000


def new_salt() -> str:
    """A per-user salt: 20 hex characters, as Casdoor makes them."""
    return secrets.token_hex(10)


def _double_digest(algorithm: str, password: str, salt: str) -> str:
    inner = hashlib.new(algorithm, password.encode()).hexdigest()
    if not salt:
        return inner
    return hashlib.new(algorithm, (inner + salt).encode()).hexdigest()


_DIGESTS = {"salt": "sha256", "sha512-salt": "sha512", "md5-salt": "md5"}


def hash_password(password: str, type_: str = DEFAULT_TYPE, salt: str = "") -> str:
    """Hash with a given type; the salt is used only by the types that take one."""
    type_ = type_ or DEFAULT_TYPE
    if type_ == "plain":
        return password
    if type_ in _DIGESTS:
        return _double_digest(_DIGESTS[type_], password, salt)
    if type_ == "bcrypt":
        return bcrypt.hashpw(password.encode(), bcrypt.gensalt(_BCRYPT_COST)).decode()
    if type_ == "pbkdf2-salt":
        key = hashlib.pbkdf2_hmac(
            "sha256", password.encode(), base64.b64decode(salt + "=" * (-len(salt) % 4)),
            _PBKDF2_SALT_ITERATIONS, 64,
        )
        return base64.b64encode(key).decode()
    if type_ == "argon2id":
        return _argon2.hash(password)
    if type_ == "pbkdf2-django":
        django_salt = salt or secrets.token_urlsafe(12)
        key = hashlib.pbkdf2_hmac("sha256", password.encode(), django_salt.encode(), _DJANGO_ITERATIONS, 32)
        return f"pbkdf2_sha256${_DJANGO_ITERATIONS}${django_salt}${base64.b64encode(key).decode()}"
    raise ValueError(f"unknown password type: {type_}")


def _matches(password: str, stored: str, type_: str, salt: str) -> bool:
    if type_ == "bcrypt":
        try:
            return bcrypt.checkpw(password.encode(), stored.encode())
        except ValueError:
            return False
    if type_ == "argon2id":
        try:
            return _argon2.verify(stored, password)
        except (VerificationError, InvalidHashError):
            return False
    if type_ == "pbkdf2-django":
        try:
            _, iterations, django_salt, encoded = stored.split("$", 3)
            key = hashlib.pbkdf2_hmac("sha256", password.encode(), django_salt.encode(), int(iterations), 32)
        except ValueError:
            return False
        return hmac.compare_digest(base64.b64encode(key).decode(), encoded)
    if type_ in _DIGESTS and not salt:
        # Casdoor also accepts the double digest for an empty salt.
        double = _double_digest(_DIGESTS[type_], hashlib.new(_DIGESTS[type_], password.encode()).hexdigest(), "")
        if hmac.compare_digest(double, stored):
            return True
    try:
        candidate = hash_password(password, type_, salt)
    except (ValueError, TypeError):
        return False
    return hmac.compare_digest(candidate.encode(), stored.encode())


def verify_password(password: str, stored: str, type_: str, user_salt: str = "", org_salt: str = "") -> bool:
    """True when the password matches under the organization's salt or the user's."""
    if not stored or type_ not in TYPES:
        return False
    salts = [org_salt, user_salt] if org_salt else [user_salt]
    return any(_matches(password, stored, type_, salt) for salt in dict.fromkeys(salts))


def needs_rehash(stored: str, stored_type: str, wanted_type: str) -> bool:
    """A user whose hash type (or argon2 parameters) differs from the organization's is re-hashed."""
    wanted = wanted_type or DEFAULT_TYPE
    if stored_type != wanted:
        return True
    return wanted == "argon2id" and _argon2.check_needs_rehash(stored)


# Secrets the server generates and only ever compares (a user's access secret) are stored as
# their SHA-256: they are random, so a fast hash keeps them as safe as a slow one would, and
# every API call made with one stays cheap.
SECRET_HASH_PREFIX = "sha256:"


def hash_secret(secret: str) -> str:
    return SECRET_HASH_PREFIX + hashlib.sha256(secret.encode()).hexdigest() if secret else ""


def secret_matches(stored: str, given: str) -> bool:
    return bool(stored and given) and hmac.compare_digest(stored.encode(), hash_secret(given).encode())
