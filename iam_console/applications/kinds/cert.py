"""Certs: the key pairs tokens are signed with, generated or pasted."""

from __future__ import annotations

from sqlmodel import Session

from iam_console import models as m
from iam_console.applications import certs
from iam_console.core import builtin as b
from iam_console.core.access import Actor
from iam_console.core.kinds.common import Choice, KindRules, built_in, check_range, fixed

# what a pasted certificate and private key are checked again on
MATERIAL = {"type", "crypto_algorithm", "bit_size", "certificate", "private_key"}
DEFAULT_YEARS = 20
SCOPES = ("JWT",)
TYPES = ("x509", "Payment")
CHOICES = (Choice("scope", SCOPES), Choice("type", TYPES),
           Choice("crypto_algorithm", certs.ALGORITHMS, message="Unknown crypto algorithm: %s"))


def is_elliptic(algorithm: str) -> bool:
    """ES algorithms: the curve decides the key's size, the bit size is 0."""
    return algorithm.startswith("ES")


def settled_bit_size(algorithm: str, bit_size: str) -> str:
    """The bit size that goes with a newly chosen algorithm: 0 for ES; for RSA and PSS the
    current one when it is 1024, 2048 or 4096, else 2048."""
    if is_elliptic(algorithm):
        return "0"
    return bit_size if bit_size in {str(bits) for bits in certs.RSA_BIT_SIZES} else str(certs.DEFAULT_RSA_BITS)


def validate(db: Session, actor: Actor, row: m.Cert) -> None:
    if row.crypto_algorithm:
        certs.check_settings(row.crypto_algorithm, row.bit_size)
    if is_elliptic(row.crypto_algorithm):
        row.bit_size = 0
    check_range(row.expire_in_years, 0, None, "expire in years")


def before_save(db: Session, actor: Actor, old: m.Cert | None, row: m.Cert, changed: set[str]) -> None:
    """An x509 cert saved without its certificate (the console's form clears it and the private key
    when the algorithm or bit size changes) gets a new key pair and self-signed certificate; a
    pasted pair must parse and fit the settings. A certificate alone is kept alone: another party's
    (a SAML service provider's, naming the key its requests are signed with), which verifies and
    never signs (oauth/jwt_tokens.py and saml_idp.py ask a signing cert for its key)."""
    if row.type != "x509":
        return
    if is_elliptic(row.crypto_algorithm):
        row.bit_size = 0
    if row.certificate and not row.private_key:
        if old is None or changed & MATERIAL:
            row.expire_time = certs.not_after(certs.check_certificate(row.crypto_algorithm, row.bit_size,
                                                                      row.certificate))
        return
    if not row.certificate:
        row.expire_in_years = row.expire_in_years or DEFAULT_YEARS
        if row.expire_in_years < 0:
            return  # refused by validate
        row.certificate, row.private_key = certs.generate(row.crypto_algorithm, row.bit_size,
                                                          row.expire_in_years, row.name, row.owner)
    elif old is not None and not changed & MATERIAL:
        return
    row.expire_time = certs.not_after(certs.check_pair(row.crypto_algorithm, row.bit_size,
                                                       row.certificate, row.private_key))


RULES = KindRules(
    choices=CHOICES, validate=validate, before_save=before_save, protect=built_in(b.ADMIN_OWNER, b.BUILT_IN_CERT),
    new=fixed(displayName="New Cert - {suffix}", scope="JWT", type="x509", cryptoAlgorithm="RS256",
              bitSize=4096, expireInYears=DEFAULT_YEARS),
)
