"""Token exchange (RFC 8693): a client trades an access token it was given (the subject token)
for one meant for another audience, with narrower scope, and, with an actor token, says who acts
for the subject (the `act` claim). docs/api.md, "Standards"; docs/security.md, "Token exchange".

What the server holds to:
- the client lists the grant in its grantTypes and authenticates with its secret;
- the subject token is a live access token of a user, issued through an application of the
  client's organization (a client of the built-in organization may exchange any), and meant for
  the client: its `aud` names the client, or the client is the application it was issued through;
- the audiences (`audience`: the client id of an application of the same organization;
  `resource`: a URI, checked as RFC 8707 resources are) are among those the client's
  tokenExchangeAudiences lists; they become the new token's `aud` (none asked: the client's own);
- the scope is at most the subject token's; the token lives no longer than the subject token;
- an actor token (a live access token of the same organization) makes `act` = {sub: the actor's
  subject}, and the subject token's own `act`, if it has one, nests inside: the chain of actors
  stays in the token, at most MAX_ACTORS deep. Without an actor token the subject's `act` stays.
The grant registers itself with the token endpoint (oauth.MORE_GRANTS) when this module is imported.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from sqlmodel import Session

from iam_console.core import builtin as b
from iam_console.core import lookup
from iam_console.models import Application
from iam_console.oauth import oauth, resources, tokens
from iam_console.oauth.oauth import EXCHANGE_GRANT, OAuthError

ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
# what a subject or actor token may be: this server's access tokens are JWTs, and its id tokens too
ACCEPTED_TYPES = frozenset({ACCESS_TOKEN_TYPE, "urn:ietf:params:oauth:token-type:jwt",
                            "urn:ietf:params:oauth:token-type:id_token"})
ISSUED_TYPES = frozenset({"", ACCESS_TOKEN_TYPE, "urn:ietf:params:oauth:token-type:jwt"})
MAX_ACTORS = 5  # nested `act` claims: a longer chain of delegations is refused


def _audience(aud: Any) -> list[str]:
    return [aud] if isinstance(aud, str) else [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []


def _depth(act: Any) -> int:
    depth = 0
    while isinstance(act, dict) and act:
        depth, act = depth + 1, act.get("act")
    return depth


def _presented(db: Session, client: Application, text: str, token_type: str, what: str):
    """A subject or actor token: its row, application and claims, refused unless it is a live access
    token of this server through an application of the client's organization."""
    if not text:
        raise OAuthError("invalid_request", f"The {what}_token is required")
    if token_type not in ACCEPTED_TYPES:
        raise OAuthError("invalid_request", f"The {what}_token_type is not one this server accepts")
    found = tokens.live_claims(db, text)
    if found is None:
        raise OAuthError("invalid_grant", f"The {what}_token is invalid, expired or revoked")
    if client.organization not in (found[1].organization, b.BUILT_IN_ORG):
        raise OAuthError("invalid_grant", f"The {what}_token is of another organization")
    return found


def _targets(db: Session, client: Application, audience: str, resource: str) -> list[str]:
    """The audiences asked for, each one the client may exchange for (invalid_target)."""
    allowed = {a for a in client.token_exchange_audiences if isinstance(a, str)}
    targets = []
    if audience:
        target = lookup.application_by_client_id(db, audience)
        if audience not in allowed or target is None or target.organization != client.organization:
            raise OAuthError("invalid_target", "The client may not exchange tokens for this audience")
        targets.append(audience)
    if resource:
        problem = resources.problem(db, client, resource)
        if problem:
            raise OAuthError("invalid_target", problem[0] % problem[1:])
        if resource not in allowed:
            raise OAuthError("invalid_target", "The client may not exchange tokens for this resource")
        targets.append(resource)
    return targets


def _scope(client: Application, asked: str, granted: str) -> str:
    scope = oauth.check_scope(client, asked) if asked else granted
    if not set(scope.split()) <= set(granted.split()):
        raise OAuthError("invalid_scope", "The scope exceeds the subject token's")
    return scope


def exchange_grant(db: Session, req: oauth.TokenRequest) -> dict[str, Any]:
    values = req.parameters
    client = oauth.client(db, req.client_id, req.client_secret)
    oauth._require_grant(client, EXCHANGE_GRANT)
    if values.get("requested_token_type", "") not in ISSUED_TYPES:
        raise OAuthError("invalid_request", "Only access tokens are issued by a token exchange")
    row, _, claims = _presented(db, client, values.get("subject_token", ""),
                                values.get("subject_token_type", ""), "subject")
    if not row.user:
        raise OAuthError("invalid_grant", "The subject_token must be a user's")
    if client.client_id not in _audience(claims.get("aud")) and row.application != client.name:
        raise OAuthError("invalid_grant", "The subject_token was not issued to this client")
    act = claims.get("act") if isinstance(claims.get("act"), dict) else {}
    if values.get("actor_token"):
        _, _, actor = _presented(db, client, values["actor_token"], values.get("actor_token_type", ""), "actor")
        act = {"sub": actor.get("sub"), **({"act": act} if act else {})}
    elif values.get("actor_token_type"):
        raise OAuthError("invalid_request", "actor_token_type without an actor_token")
    if _depth(act) > MAX_ACTORS:
        raise OAuthError("invalid_request", f"The delegation chain is longer than {MAX_ACTORS} actors")
    targets = _targets(db, client, values.get("audience", ""), req.resource)
    scope = _scope(client, req.scope, row.scope)
    user = oauth._usable_user(db, row.organization, row.user)
    not_after = datetime.fromtimestamp(claims["exp"], timezone.utc)
    grant = oauth._grant(db, client, scope, user, resource=req.resource, audience=tuple(targets), act=act,
                         not_after=not_after)
    answer = oauth._issue(db, grant, EXCHANGE_GRANT, refresh=False)
    answer.pop("id_token", None)
    return {**answer, "issued_token_type": ACCESS_TOKEN_TYPE}


oauth.MORE_GRANTS[EXCHANGE_GRANT] = exchange_grant
