"""What the server does before it answers: migrate, then create the first-start data."""

from __future__ import annotations

from .db import migrate, session_scope
from .services.seed import announce_generated_password, ensure_first_start_data
from .settings import settings


def prepare_database() -> None:
    migrate()
    with session_scope() as db:
        generated = ensure_first_start_data(db, settings.admin_password)
    announce_generated_password(generated)


if __name__ == "__main__":
    prepare_database()
