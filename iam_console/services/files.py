"""Uploaded files on local storage (settings.files_dir, served at /files/), and
users' avatars (upload-resource with the tag avatar).

An avatar is a picture (checked by its first bytes, never by its name) stored at
avatar/{organization}/{user}.{ext}; a Resource row records it, and the user's
avatar URL changes through update-user's rules (the Avatar account item's
modify rule, the access policy). The row and the URL are written in the
caller's transaction; the file is written last, so a refused or failed upload
leaves nothing behind."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from sqlmodel import Session, select

from .. import models as m
from ..settings import settings
from . import crud
from .access import Actor
from .errors import ServiceError
from .records import audit
from .resources import REGISTRY

MAX_AVATAR_BYTES = 5 * 1024 * 1024
AVATAR_TAG = "avatar"
# first bytes -> (extension, content type); SVG is refused: it can carry scripts
PICTURES = (
    (b"\x89PNG\r\n\x1a\n", "png", "image/png"),
    (b"\xff\xd8\xff", "jpg", "image/jpeg"),
    (b"GIF87a", "gif", "image/gif"),
    (b"GIF89a", "gif", "image/gif"),
)
CONTENT_TYPES = {"png": "image/png", "jpg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}


def picture_format(content: bytes) -> str:
    """The picture's extension, from its content."""
    for magic, extension, _ in PICTURES:
        if content.startswith(magic):
            return extension
    if content[:4] == b"RIFF" and content[8:12] == b"WEBP":
        return "webp"
    raise ServiceError("The avatar must be a PNG, JPEG, GIF or WebP picture")


def stored_file(relative: str) -> tuple[Path, str] | None:
    """(path, content type) of a stored file; None for anything else (outside the folder, missing)."""
    root = settings.files_dir.resolve()
    try:
        target = (root / relative).resolve()
    except (OSError, ValueError):
        return None
    if root not in target.parents or not target.is_file():
        return None
    return target, CONTENT_TYPES.get(target.suffix.lstrip(".").lower(), "application/octet-stream")


def _write(relative: str, content: bytes) -> None:
    """The file in place at once (a temporary file renamed), never half written."""
    root = settings.files_dir.resolve()
    target = (root / relative).resolve()
    if root not in target.parents:
        raise ServiceError("The file path %s is not allowed", relative)
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=".upload-")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    for extension in CONTENT_TYPES:  # a previous avatar of another format goes
        if extension != target.suffix.lstrip("."):
            target.with_suffix(f".{extension}").unlink(missing_ok=True)


def upload_avatar(db: Session, actor: Actor, owner: str, name: str, content: bytes,
                  request: crud.Request = crud.NO_REQUEST) -> tuple[str, str]:
    """(URL, stored path) of the user's new avatar."""
    if not content:
        raise ServiceError("You must select a picture first!")
    if len(content) > MAX_AVATAR_BYTES:
        raise ServiceError("The picture is too large (at most %d MB)", MAX_AVATAR_BYTES >> 20)
    extension = picture_format(content)
    if not owner or not name or "/" in owner + name or owner in (".", "..") or name in (".", ".."):
        raise ServiceError("The user: %s/%s doesn't exist", owner, name)
    relative = f"{AVATAR_TAG}/{owner}/{name}.{extension}"
    url = f"{settings.origin}/files/{quote(relative)}?t={time.time_ns() // 1_000_000}"
    if crud.update_record(db, actor, REGISTRY["user"], owner, name, {"avatar": url}, request) != crud.AFFECTED:
        raise ServiceError("The user: %s/%s doesn't exist", owner, name)
    resource_name = f"{AVATAR_TAG}_{name}"
    row = db.exec(select(m.Resource).where(m.Resource.owner == owner, m.Resource.name == resource_name)).first()
    row = row or m.Resource(owner=owner, name=resource_name)
    row.user, row.application, row.tag = name, "app-built-in", AVATAR_TAG
    row.file_name, row.file_type, row.file_format = f"{name}.{extension}", "image", f".{extension}"
    row.file_size, row.url = len(content), url
    db.add(row)
    audit(db, organization=owner, user=actor.id, action="upload-resource", request_uri=request.uri,
          client_ip=request.client_ip, language=request.language,
          obj={"owner": owner, "user": name, "tag": AVATAR_TAG, "fullFilePath": relative, "size": len(content)})
    db.flush()
    _write(relative, content)
    return url, relative
