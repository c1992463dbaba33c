"""What the sign-in routes answer, shared by the password, WebAuthn, SAML and upstream sign-ins
(signin/api/account.py, signin/api/webauthn.py, saml/api.py, federation/api/federation.py): the authorization request a
sign-in carries, the answer to a completed sign-in, and the pages of the SAML exchanges."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import Request
from fastapi.responses import HTMLResponse, JSONResponse

from iam_console.api.callers import with_session
from iam_console.api.envelope import ok
from iam_console.oauth import oauth
from iam_console.signin import auth, mfa, prompt

NO_STORE = {"Cache-Control": "no-store"}
PAGE_CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; frame-ancestors 'none'"


def page(body: str, status: int = 200) -> HTMLResponse:
    """A page of the SAML exchanges (one that posts a message, or a refusal): never cached, its
    own inline script only, never framed."""
    return HTMLResponse(body, status_code=status, headers={**NO_STORE, "Content-Security-Policy": PAGE_CSP})


def authorization_in(db, params: dict) -> oauth.Authorization | None:
    """The authorization request a sign-in carries in its query (clientId, responseType,
    redirectUri...), checked; None for a plain sign-in."""
    if not (params.get("clientId") or params.get("client_id")):
        return None
    return oauth.check_authorize(db, oauth.AuthorizeRequest.from_query(params))


def signed_in(db, request: Request, checked: oauth.Authorization | None, result: auth.SignedIn,
              method: str) -> JSONResponse:
    """The answer to a completed sign-in (password, second factor or WebAuthn): the user's id,
    or the authorization's code (or token) and the URL to send the browser to, unless the
    organization requires an MFA method the account has not set up (then the setup page, and
    no code yet), or the application prompts for items the account has not answered or provider
    rows it has not linked (then the prompt page, which goes on to the authorize page); with the
    session cookie."""
    user_id = f"{result.user.owner}/{result.user.name}"
    setup = mfa.required_setup_path(result.organization, result.user,
                                    f"/login/oauth/authorize?{request.url.query}") if checked else ""
    if checked is None:
        response = ok(user_id)
    elif setup:
        response = ok(user_id, setup)
    elif prompt.needed(db, checked.application, result.user):  # asked first; the authorize page answers after
        response = ok(user_id, f"/prompt/{quote(checked.application.name, safe='')}?{request.url.query}")
    else:
        # the session's own method names a second factor the sign-in completed: the ID token's acr
        answer = oauth.authorize(db, checked, result.user, method, sid=result.session_id,
                                 signed_in_at=result.signed_in_at, acr=oauth.acr_of(result.signin_method))
        response = ok(answer.code or answer.tokens.get("access_token") or answer.tokens.get("id_token"),
                      answer.url)
    return with_session(request, response, result)
