"""The .xlsx uploads: upload-users, upload-roles, upload-permissions and
upload-groups (multipart field `file`). The rules are in identity/uploads.py;
this module reads the request, within MAX_UPLOAD_BYTES, and answers in the envelope."""

from __future__ import annotations

from collections.abc import Callable

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse
from starlette.datastructures import UploadFile
from starlette.exceptions import HTTPException

from iam_console import workers
from iam_console.api.callers import actor
from iam_console.api.envelope import ok
from iam_console.api.resources import audit_context
from iam_console.core import policy
from iam_console.core.errors import ServiceError
from iam_console.core.resources import Kind
from iam_console.db import session_scope
from iam_console.identity import uploads

router = APIRouter(prefix="/api", tags=["uploads"])
TOO_LARGE = "The file is too large (at most %d MB)"


def _limited(request: Request) -> Request:
    """The same request, whose body stops with an error past MAX_UPLOAD_BYTES
    (Content-Length may be missing or wrong: the bytes are counted)."""
    received = 0
    limit = uploads.MAX_UPLOAD_BYTES + 64 * 1024  # room for the multipart envelope

    async def receive():
        nonlocal received
        message = await request.receive()
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise ServiceError(TOO_LARGE, uploads.MAX_UPLOAD_BYTES >> 20)
        return message

    return Request(request.scope, receive)


def _import(kind: Kind, request: Request, upload: UploadFile) -> uploads.ImportResult:
    """Runs on a worker thread: an upload of 100,000 rows takes about a minute."""
    with session_scope() as db:
        return uploads.import_workbook(db, actor(db, request), kind, upload.file, upload.filename or "",
                                       audit_context(request))


def _upload(kind: Kind) -> Callable:
    async def handler(request: Request) -> JSONResponse:
        with session_scope() as db:  # who is asking, before reading a large body
            policy.require_admin(actor(db, request))
        declared = request.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > uploads.MAX_UPLOAD_BYTES + 64 * 1024:
            raise ServiceError(TOO_LARGE, uploads.MAX_UPLOAD_BYTES >> 20)
        if "multipart/form-data" not in request.headers.get("content-type", ""):
            raise ServiceError("The .xlsx file must be sent as multipart/form-data in the field file")
        try:
            form = await _limited(request).form(max_files=1, max_fields=10)
        except HTTPException as exc:  # Starlette's word for a malformed multipart body
            raise ServiceError("The upload is not a valid multipart form: %s", exc.detail) from None
        try:
            upload = form.get("file")
            if not isinstance(upload, UploadFile):
                raise ServiceError("The .xlsx file must be sent as multipart/form-data in the field file")
            if (upload.size or 0) > uploads.MAX_UPLOAD_BYTES:
                raise ServiceError(TOO_LARGE, uploads.MAX_UPLOAD_BYTES >> 20)
            result = await workers.run(_import, kind, request, upload)
        finally:
            await form.close()
        return ok(result.affected, {"added": result.added, "skipped": result.skipped,
                                    "ignoredColumns": result.ignored_columns}, msg=result.message())
    return handler


for _name in uploads.UPLOADABLE:
    _kind = uploads.uploadable(_name)
    router.add_api_route(f"/upload-{_kind.plural_name}", _upload(_kind), methods=["POST"],
                         name=f"upload-{_kind.plural_name}",
                         summary=f"Add {_kind.plural_name} from an .xlsx file (multipart field file; the first row "
                                 "names the fields; existing ones are skipped; one bad row refuses the file)")
