"""The cert page's Generate: a new key pair and self-signed certificate for the settings on the
form, for those who may change the cert (a shared one, owned by 'admin': the global admin only).
Nothing is stored here: the pair goes into the form, and Save stores it through update-cert's
rules, which check that the pair fits the settings."""

from __future__ import annotations

from sqlmodel import Session

from iam_console.applications import certs
from iam_console.applications.kinds.cert import DEFAULT_YEARS, is_elliptic
from iam_console.core import crud, policy
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.kinds.common import check_range
from iam_console.core.resources import REGISTRY


def check_may_change(db: Session, actor: Actor, owner: str, name: str) -> None:
    """Refuse unless the actor may update the cert owner/name (as update-cert would)."""
    kind = REGISTRY["cert"]
    row = crud.readable_row(db, actor, kind, owner, name)
    if row is None:
        raise ServiceError("The cert: %s does not exist", f"{owner}/{name}")
    policy.check_write(actor, kind, row, row)


def new_pair(algorithm: str, bit_size: int, expire_in_years: int, common_name: str,
             organization: str = "") -> tuple[str, str, int]:
    """(certificate PEM, private key PEM, years it is valid for), as a save with empty keys would
    generate them: an ES key has no bit size, and 0 years means the default. `organization`: whose
    work it is (the cert's owner; certs.generate)."""
    check_range(expire_in_years, 0, None, "expire in years")
    years = expire_in_years or DEFAULT_YEARS
    cert_pem, key_pem = certs.generate(algorithm, 0 if is_elliptic(algorithm) else bit_size, years, common_name,
                                       organization)
    return cert_pem, key_pem, years
