"""The token page's parse box: a pasted JWT's header and claims, and whether its signature
verifies against the cert of the token's application (valid, invalid or expired). Nothing is
stored and nothing is looked up by the pasted token: it is judged only against the cert of an
application the viewer may read."""

from __future__ import annotations

import json
from dataclasses import dataclass

import jwt
from sqlmodel import Session

from iam_console import models as m
from iam_console.core import crud
from iam_console.core.access import Actor
from iam_console.core.resources import REGISTRY
from iam_console.oauth import jwt_tokens

MAX_TOKEN = 20_000
VALID, INVALID, EXPIRED = "valid", "invalid", "expired"
# what is wrong with a text that is no JWT, in the reader's words (the parser's own messages name
# Python codecs and paddings)
NOT_THREE_PARTS = "This is not a JWT: a JWT has three parts separated by dots, this text has %s"
BAD_HEADER = "This is not a JWT: its first part, the header, is not base64url-encoded JSON"
BAD_CLAIMS = "This is not a JWT: its second part, the claims, is not base64url-encoded JSON"


@dataclass(frozen=True)
class Parsed:
    header: str = ""  # pretty JSON
    claims: str = ""
    verdict: str = ""  # valid | invalid | expired ("" when it could not be parsed)
    reason: str = ""  # why it is invalid, or the parser's message (a catalog template of `args`)
    args: tuple[str, ...] = ()


def parse(db: Session, actor: Actor, text: str, application: str) -> Parsed:
    token = "".join(text.split())
    if not token:
        return Parsed(reason="The token is empty")
    if len(token) > MAX_TOKEN:
        return Parsed(reason="The token is too long")
    parts = token.count(".") + 1
    if parts != 3:
        return Parsed(reason=NOT_THREE_PARTS, args=(str(parts),))
    try:
        header = jwt.get_unverified_header(token)
    except jwt.PyJWTError:
        return Parsed(reason=BAD_HEADER)
    try:
        claims = jwt.decode(token, options={"verify_signature": False})
    except jwt.PyJWTError:
        return Parsed(reason=BAD_CLAIMS)
    shown = {"header": json.dumps(header, indent=2, ensure_ascii=False),
             "claims": json.dumps(claims, indent=2, ensure_ascii=False, default=str)}
    row = crud.readable_row(db, actor, REGISTRY["application"], "admin", application)
    if not isinstance(row, m.Application):
        return Parsed(**shown, verdict=INVALID, reason="The application %s does not exist",
                      args=(application,))
    refresh = header.get("alg") == jwt_tokens.REFRESH_ALGORITHM
    try:
        jwt_tokens.verify(db, token, row, refresh=refresh)
        return Parsed(**shown, verdict=VALID)
    except jwt_tokens.InvalidToken as exc:
        reason = str(exc)
    try:
        jwt_tokens.verify(db, token, row, refresh=refresh, check_expiry=False)
        return Parsed(**shown, verdict=EXPIRED, reason=reason)
    except jwt_tokens.InvalidToken:
        return Parsed(**shown, verdict=INVALID, reason=reason)
