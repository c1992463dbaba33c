"""Uploaded files: upload-resource (multipart field file: the tag avatar is a user's
picture, any other tag a file stored for an organization) and the stored files at
/files/{path}. The rules are in files/files.py."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import policy
from iam_console.core.errors import ServiceError
from iam_console.db import session_scope
from iam_console.files import files

router = APIRouter(prefix="/api", tags=["files"])
files_router = APIRouter(include_in_schema=False)
MULTIPART_ROOM = 64 * 1024


@router.post("/upload-resource", summary="Upload a file (multipart field file): a user's avatar (tag=avatar, "
             "owner, user), or any other tag's file stored for organization owner at fullFilePath")
async def upload_resource(request: Request) -> JSONResponse:
    params = request.query_params
    avatar = params.get("tag") == files.AVATAR_TAG
    with session_scope() as db:  # who is asking, before reading the body: a user for an avatar, else an admin
        (policy.require_user if avatar else policy.require_admin)(actor(db, request))
    limit = files.MAX_AVATAR_BYTES if avatar else files.MAX_FILE_BYTES
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit + MULTIPART_ROOM:
        raise ServiceError("The file is too large (at most %d MB)", limit >> 20)
    if "multipart/form-data" not in request.headers.get("content-type", ""):
        raise ServiceError("The file must be sent as multipart/form-data in the field file")
    try:
        form = await request.form(max_files=1, max_fields=10)
    except HTTPException as exc:
        raise ServiceError("The upload is not a valid multipart form: %s", exc.detail) from None
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise ServiceError("You must select a picture first!" if avatar else "You must select a file first!")
        content = await upload.read(limit + 1)
    finally:
        await form.close()
    with session_scope() as db:
        caller = actor(db, request)
        if avatar:
            url, relative = files.upload_avatar(db, caller, params.get("owner", ""), params.get("user", ""),
                                                content, audit_context(request))
        else:
            url, relative = files.upload_file(
                db, caller, params.get("owner", ""), params.get("user", ""), params.get("application", ""),
                params.get("tag", ""), params.get("parent", ""), params.get("fullFilePath", ""),
                params.get("description", ""), content, audit_context(request),
                provider=params.get("provider", ""))
    return ok(url, relative)


@files_router.get("/files/{path:path}")
async def stored_file(path: str) -> Response:
    found = files.stored_file(path)
    if found is None:
        return PlainTextResponse("Not found", status_code=404)
    target, content_type = found
    headers = {"X-Content-Type-Options": "nosniff", "Cache-Control": "public, max-age=300"}
    if not files.is_picture(content_type):
        # an uploaded page or script is never rendered on this origin: it is downloaded
        headers["Content-Disposition"] = "attachment"
        headers["Content-Security-Policy"] = "sandbox"
    return FileResponse(target, media_type=content_type, headers=headers)
