"""download-cert: a cert's certificate or private key as a PEM file, as the
console's cert page offers them. Read through crud.get_record, so the access
rules and the private key's masking apply; a refusal answers in the envelope."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import Response

from iam_console.api.callers import actor
from iam_console.core import crud, policy, wire
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.db import session_scope

router = APIRouter(prefix="/api", tags=["certs"])

# file parameter -> (wire key, download name), the names Casdoor's console uses
FILES = {
    "certificate": ("certificate", "token_jwt_key.pem"),
    "privateKey": ("privateKey", "token_jwt_key.key"),
}
PEM = "application/x-pem-file"


@router.get("/download-cert", response_class=Response,
            responses={200: {"content": {PEM: {}}, "description": "The PEM file, or the error envelope"}})
async def download_cert(request: Request) -> Response:
    """?id=owner/name&file=certificate|privateKey: the private key only for a
    global admin or an admin of the cert's (own, not shared) organization."""
    owner, name = crud.split_id(request.query_params.get("id", ""))
    which = request.query_params.get("file", "certificate")
    if which not in FILES:
        raise ServiceError("The file must be certificate or privateKey")
    key, filename = FILES[which]
    with session_scope() as db:
        cert = crud.get_record(db, actor(db, request), REGISTRY["cert"], owner, name)
    if cert is None:
        raise ServiceError("The cert: %s does not exist", f"{owner}/{name}")
    content = cert.get(key) or ""
    if content == wire.MASK:
        raise ServiceError(policy.UNAUTHORIZED)
    if not content:
        raise ServiceError("The cert: %s has no %s", f"{owner}/{name}", which)
    return Response(content, media_type=PEM, headers={
        "Content-Disposition": f'attachment; filename="{filename}"', "Cache-Control": "no-store"})
