"""Key pairs and self-signed X.509 certificates for token signing (cryptography)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

ALGORITHMS = ("RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512")
RSA_BIT_SIZES = (1024, 2048, 4096)
_CURVES = {"ES256": ec.SECP256R1, "ES384": ec.SECP384R1, "ES512": ec.SECP521R1}
_DIGESTS = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}


def generate(algorithm: str, bit_size: int, expire_in_years: int, common_name: str) -> tuple[str, str]:
    """Return (certificate PEM, private key PEM) for a cert form's settings."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"unsupported algorithm: {algorithm}")
    if algorithm in _CURVES:
        key = ec.generate_private_key(_CURVES[algorithm]())
    else:
        if bit_size not in RSA_BIT_SIZES:
            raise ValueError(f"bit size must be one of {RSA_BIT_SIZES} for {algorithm}")
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
