"""Wallet sign-in's nonce (federation/wallet.py); the sign-in itself is /api/login with `provider`
naming a Web3 provider and `code` the signed Web3 auth token (signin/api/account.py)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from iam_console.api.bodies import field, json_object
from iam_console.api.callers import client_ip
from iam_console.api.envelope import ok
from iam_console.db import session_scope
from iam_console.federation import wallet

router = APIRouter(prefix="/api/web3", tags=["wallet"])


@router.post("/nonce", summary="A nonce and the EIP-712 typed data a wallet signs to sign in")
async def nonce(request: Request) -> JSONResponse:
    """Body: application (or organization, for its default application), provider (a Web3
    provider the application lists), address, chainId. data: {nonce, typedData (the JSON to pass
    to eth_signTypedData_v4), createAt (unix seconds)}; the nonce works once, for 5 minutes."""
    body = await json_object(request)
    chain = body.get("chainid", 1)
    with session_scope() as db:
        return ok(wallet.issue_nonce(db, field(body, "application", str, ""), field(body, "organization", str, ""),
                                     field(body, "provider", str, ""), body.get("address"), chain,
                                     client_ip(request)))
