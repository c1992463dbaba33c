"""Uploaded files: upload-resource (for now the tag avatar: a user's picture,
multipart field file) and the stored files at /files/{path}. The rules are in
services/files.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from ..db import session_scope
from ..services import files, policy
from ..services.errors import ServiceError
from .callers import actor
from .envelope import ok
from .resources import audit_context

router = APIRouter(prefix="/api", tags=["files"])
files_router = APIRouter(include_in_schema=False)
MULTIPART_ROOM = 64 * 1024


@router.post("/upload-resource", summary="Upload a user's avatar (tag=avatar, owner, user; multipart field file)")
async def upload_resource(request: Request) -> JSONResponse:
    params = request.query_params
    with session_scope() as db:  # who is asking, before reading the body
        policy.require_user(actor(db, request))
    if params.get("tag") != files.AVATAR_TAG:
        raise ServiceError("Only avatars can be uploaded here (tag=avatar)")
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > files.MAX_AVATAR_BYTES + MULTIPART_ROOM:
        raise ServiceError("The picture is too large (at most %d MB)", files.MAX_AVATAR_BYTES >> 20)
    if "multipart/form-data" not in request.headers.get("content-type", ""):
        raise ServiceError("The picture must be sent as multipart/form-data in the field file")
    try:
        form = await request.form(max_files=1, max_fields=10)
    except HTTPException as exc:
        raise ServiceError("The upload is not a valid multipart form: %s", exc.detail) from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ServiceError("You must select a picture first!")
        content = await upload.read(files.MAX_AVATAR_BYTES + 1)
    finally:
        await form.close()
    with session_scope() as db:
        url, relative = files.upload_avatar(db, actor(db, request), params.get("owner", ""),
                                            params.get("user", ""), content, audit_context(request))
    return ok(url, relative)


@files_router.get("/files/{path:path}")
async def stored_file(path: str) -> Response:
    found = files.stored_file(path)
    if found is None:
        return PlainTextResponse("Not found", status_code=404)
    target, content_type = found
    return FileResponse(target, media_type=content_type,
                        headers={"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=300"})
