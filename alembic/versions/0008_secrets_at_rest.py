"""Secrets at rest: token rows keep fingerprints, access secrets their hashes

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23

A token row used to hold the access token itself, readable through get-tokens; it is
found by the SHA-256 kept beside it, so the token is replaced by its fingerprint (the
first 16 hex digits of that hash: oauth/oauth.py fingerprint). A user's access
secret is only ever compared: it is replaced by "sha256:" and its SHA-256
(identity/passwords.py hash_secret). Data only; no column changes.
"""
import hashlib
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

FINGERPRINT_LENGTH = 16
SECRET_HASH_PREFIX = "sha256:"
BATCH = 1000


def upgrade() -> None:
    token = sa.table("token", sa.column("access_token", sa.Text), sa.column("access_token_hash", sa.String),
                     sa.column("refresh_token", sa.Text), sa.column("refresh_token_hash", sa.String))
    for value, hashed in (("access_token", "access_token_hash"), ("refresh_token", "refresh_token_hash")):
        op.execute(token.update().where(token.c[hashed] != "")
                   .values({value: sa.func.substr(token.c[hashed], 1, FINGERPRINT_LENGTH)}))
    user = sa.table("user", sa.column("pk", sa.Integer), sa.column("access_secret", sa.String))
    connection = op.get_bind()
    last = 0
    while True:  # in batches by key: SQL has no portable SHA-256
        rows = connection.execute(sa.select(user.c.pk, user.c.access_secret).where(
            user.c.pk > last, user.c.access_secret != "").order_by(user.c.pk).limit(BATCH)).all()
        if not rows:
            break
        for pk, secret in rows:
            if not secret.startswith(SECRET_HASH_PREFIX):
                connection.execute(user.update().where(user.c.pk == pk).values(
                    access_secret=SECRET_HASH_PREFIX + hashlib.sha256(secret.encode()).hexdigest()))
        last = rows[-1].pk


def downgrade() -> None:
    pass  # a hash cannot give back what it replaced
