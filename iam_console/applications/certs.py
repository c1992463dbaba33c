"""Key pairs and self-signed X.509 certificates for token signing (cryptography)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

from iam_console import cpu_work
from iam_console.core.errors import ServiceError

ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
RSA_BIT_SIZES = (1024, 2048, 4096)
DEFAULT_RSA_BITS = 2048  # what an RSA or PSS cert falls back to from a bit size it cannot have
_CURVES = {"ES256": ec.SECP256R1, "ES384": ec.SECP384R1, "ES512": ec.SECP521R1}
_DIGESTS = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


def check_settings(algorithm: str, bit_size: int) -> None:
    """The cert form's algorithm and bit size (ES: the curve decides, bit size ignored)."""
    if algorithm not in ALGORITHMS:
        raise ServiceError("Unknown crypto algorithm: %s", algorithm)
    if algorithm not in _CURVES and bit_size not in RSA_BIT_SIZES:
        raise ServiceError("The bit size must be 1024, 2048 or 4096")
    if algorithm == "PS512" and bit_size < 2048:
        # RSASSA-PSS with SHA-512 and a salt as long as the hash needs 130 bytes of modulus
        raise ServiceError("PS512 needs a bit size of 2048 or 4096")


def generate(algorithm: str, bit_size: int, expire_in_years: int, common_name: str,
             organization: str = "") -> tuple[str, str]:
    """Return (certificate PEM, private key PEM) for a cert form's settings. An RSA key above
    2048 bits is made in a child process, as one of `organization`'s calls: making a 4096-bit key
    keeps the interpreter lock for about a second (iam_console/cpu_work.py)."""
    check_settings(algorithm, bit_size)
    if algorithm not in _CURVES and cpu_work.big_rsa(bit_size):
        return cpu_work.run(organization, _generate, algorithm, bit_size, expire_in_years, common_name)
    return _generate(algorithm, bit_size, expire_in_years, common_name)


def _generate(algorithm: str, bit_size: int, expire_in_years: int, common_name: str) -> tuple[str, str]:
    if algorithm in _CURVES:
        key = ec.generate_private_key(_CURVES[algorithm]())
    else:
        key = rsa.generate_private_key(public_exponent=65537, key_size=bit_size)
    name = x509.Name([
        x509.NameAttribute(NameOID.COMMON_NAME, common_name),
        x509.NameAttribute(NameOID.ORGANIZATION_NAME, "IAM Console"),
    ])
    now = datetime.now(timezone.utc)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - timedelta(minutes=5))
        .not_valid_after(now + timedelta(days=365 * max(expire_in_years, 1)))
        .sign(key, _DIGESTS[algorithm[2:]]())
    )
    cert_pem = certificate.public_bytes(serialization.Encoding.PEM).decode()
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    return cert_pem, key_pem


def parse_certificate(cert_pem: str) -> x509.Certificate:
    try:
        return x509.load_pem_x509_certificate(cert_pem.encode())
    except ValueError:
        raise ServiceError("The certificate is not a valid PEM X.509 certificate") from None


def parse_private_key(key_pem: str):
    try:
        return serialization.load_pem_private_key(key_pem.encode(), password=None)
    except (ValueError, TypeError, UnsupportedAlgorithm):
        # TypeError: encrypted with a password
        raise ServiceError("The private key is not a valid unencrypted PEM private key") from None


def _spki(public_key) -> bytes:
    return public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)


def check_pair(algorithm: str, bit_size: int, cert_pem: str, key_pem: str) -> x509.Certificate:
    """A pasted certificate and private key: both parse, the key is of the
    algorithm's family (RSA for RS/PS and of the bit size, the algorithm's curve
    for ES) and is the certificate's. Returns the parsed certificate."""
    check_settings(algorithm, bit_size)
    certificate = parse_certificate(cert_pem)
    key = parse_private_key(key_pem)
    _check_fit(algorithm, bit_size, key, "private key")
    if _spki(key.public_key()) != _certified(certificate):
        raise ServiceError("The private key does not match the certificate")
    return certificate


def check_certificate(algorithm: str, bit_size: int, cert_pem: str) -> x509.Certificate:
    """A pasted certificate without its private key (another party's: a SAML service provider's,
    whose signatures it checks): it parses and its public key fits the settings as a key would."""
    check_settings(algorithm, bit_size)
    certificate = parse_certificate(cert_pem)
    _certified(certificate)
    _check_fit(algorithm, bit_size, certificate.public_key(), "certificate's key")
    return certificate


def _certified(certificate: x509.Certificate) -> bytes:
    try:
        return _spki(certificate.public_key())
    except (ValueError, UnsupportedAlgorithm):
        raise ServiceError("The certificate is not a valid PEM X.509 certificate") from None


def _check_fit(algorithm: str, bit_size: int, key, what: str) -> None:
    """A private or public key of the algorithm's family, and of the bit size for RSA and PSS."""
    if algorithm in _CURVES:
        fits = isinstance(key, ec.EllipticCurvePrivateKey | ec.EllipticCurvePublicKey) \
            and isinstance(key.curve, _CURVES[algorithm])
    else:
        fits = isinstance(key, rsa.RSAPrivateKey | rsa.RSAPublicKey)
    if not fits:
        raise ServiceError(f"The {what} does not fit the crypto algorithm %s", algorithm)
    if algorithm not in _CURVES and key.key_size != bit_size:
        raise ServiceError(f"The {what} has %d bits, not %d", key.key_size, bit_size)


def not_after(certificate: x509.Certificate) -> datetime:
    """When the certificate expires (UTC)."""
    return certificate.not_valid_after_utc
