"""Who is calling: for now, the console's session cookie."""

from __future__ import annotations

from fastapi import Request
from sqlmodel import Session

from ..models import AuthSession, User
from ..services.auth import account_for_token

SESSION_COOKIE = "iam_session"


def client_ip(request: Request) -> str:
    return request.client.host if request.client else ""


def session_token(request: Request) -> str:
    return request.cookies.get(SESSION_COOKIE, "")


def signed_in(db: Session, request: Request) -> tuple[User, AuthSession] | None:
    return account_for_token(db, session_token(request))
