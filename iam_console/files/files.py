"""Uploaded files on local storage (settings.files_dir, served at /files/): users'
avatars (upload-resource with the tag avatar), and any other file an admin or an
application's client uploads for their organization (every other tag).

An avatar is a picture (checked by its first bytes, never by its name) stored at
avatar/{organization}/{user}.{ext}; a Resource row records it, and the user's
avatar URL changes through update-user's rules (the Avatar account item's
modify rule, the access policy). The row and the URL are written in the
caller's transaction; the file is written last, so a refused or failed upload
leaves nothing behind."""

from __future__ import annotations

import mimetypes
import os
import re
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

from sqlmodel import Session, select

from iam_console import models as m
from iam_console.audit.records import audit
from iam_console.core import builtin as b
from iam_console.core import crud, lookup, storage
from iam_console.core.access import Actor
from iam_console.core.errors import ServiceError
from iam_console.core.resources import REGISTRY
from iam_console.files import media, object_storage
from iam_console.settings import settings
from iam_console.signin import verifications

MAX_AVATAR_BYTES = 5 * 1024 * 1024
MAX_FILE_BYTES = 20 * 1024 * 1024
AVATAR_TAG = storage.AVATAR_FOLDER
# a stored path: relative, of plain segments (no "..", no hidden or empty ones)
SEGMENT = re.compile(r"^[^/\\\x00-\x1f\x7f]{1,200}$")
MAX_PATH = 255  # a resource's name is its path
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


def is_picture(content_type: str) -> bool:
    return content_type in CONTENT_TYPES.values()


def stored_file(relative: str) -> tuple[Path, str] | None:
    """(path, content type) of a stored file; None for anything else (outside the folder, missing).
    Pictures, videos and audio have a type of their own (a player reads it); anything else is
    served as a download."""
    root = settings.files_dir.resolve()
    try:
        target = (root / relative).resolve()
    except (OSError, ValueError):
        return None
    if root not in target.parents or not target.is_file():
        return None
    if target.relative_to(root).parts[0] in storage.private_folders():  # served by their extension
        return None
    extension = target.suffix.lstrip(".").lower()
    return target, CONTENT_TYPES.get(extension) or media.SERVED_TYPES.get(extension, "application/octet-stream")


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


def _clean_path(full_path: str) -> str:
    """The resource name of a path: its plain segments joined by "_" (a name holds no "/";
    the file is stored flat under its organization's folder, by that name)."""
    parts = [part for part in full_path.strip().split("/") if part]
    if not parts or len(full_path) > MAX_PATH or any(part in (".", "..") or part.startswith(".")
                                                     or not SEGMENT.match(part) for part in parts):
        raise ServiceError("The fullFilePath %s is not a relative path of plain names", full_path[:MAX_PATH])
    return "_".join(parts)


def _free_name(db: Session, owner: str, path: str) -> str:
    """The path, or the first "name-N.ext" no resource of the organization has yet."""
    stem, dot, extension = path.rpartition(".") if "." in path else (path, "", "")
    candidate, number = path, 0
    while db.exec(select(m.Resource.pk).where(m.Resource.owner == owner, m.Resource.name == candidate)).first():
        number += 1
        candidate = f"{stem}-{number}{dot}{extension}"
    return candidate


def upload_file(db: Session, actor: Actor, owner: str, user: str, application: str, tag: str, parent: str,
                full_path: str, description: str, content: bytes,
                request: crud.Request = crud.NO_REQUEST, *, provider: str = "",
                sniffed: tuple[str, str, str] | None = None) -> tuple[str, str]:
    """(URL, resource name) of a file stored for organization `owner`; the Resource row goes
    through add-resource's rules (the caller must be an admin of the organization, or its
    application's client; the user and application must be the organization's). `provider`
    names a storage provider (files/object_storage.py; none: the local files directory);
    `sniffed` is what files/media.py read from the content, when the caller checked it."""
    if not content:
        raise ServiceError("You must select a file first!")
    if len(content) > MAX_FILE_BYTES:
        raise ServiceError("The file is too large (at most %d MB)", MAX_FILE_BYTES >> 20)
    if not owner or "/" in owner or owner.startswith("."):
        raise ServiceError("The owner cannot be empty")
    store = object_storage.store_of(db, owner, provider)
    name = _free_name(db, owner, _clean_path(full_path))
    relative = f"{storage.RESOURCE_FOLDER}/{owner}/{name}"
    file_name = full_path.strip().rstrip("/").rsplit("/", 1)[-1]
    guessed = mimetypes.guess_type(file_name)[0] or ""
    file_type, file_format, content_type = sniffed or (
        guessed.partition("/")[0] or "unknown", file_name.rpartition(".")[2] if "." in file_name else "",
        guessed or "application/octet-stream")
    key = store.key(relative) if store else relative
    url = store.url(key) if store else f"{settings.origin}/files/{quote(relative)}"
    crud.add_record(db, actor, REGISTRY["resource"], {
        "owner": owner, "name": name, "user": user, "application": application, "tag": tag, "parent": parent,
        "provider": provider if store else "", "fileName": file_name, "fileType": file_type,
        "fileFormat": f".{file_format}" if file_format else "", "fileSize": len(content),
        "url": url, "description": description}, request)
    db.flush()
    if store:
        store.put(key, content, content_type)
    else:
        _write(relative, content)
    return url, name


def upload_listed_file(db: Session, actor: Actor, owner: str, file_name: str, content: bytes) -> tuple[str, str]:
    """The resources list's Upload: one image, video, audio, PDF, Word, Excel or CSV file,
    judged by its content (files/media.py), stored for `owner` by the signed-in user with the
    organization's storage provider (the first of its default application's Providers list, else
    its own, else a shared one; none: the local files directory)."""
    if not content:
        raise ServiceError("You must select a file first!")
    sniffed = media.sniff(content, file_name)
    organization = lookup.organization(db, owner)
    chosen = verifications.first_provider(db, owner, verifications.default_application(db, organization),
                                          object_storage.STORAGE)
    provider = chosen.name if chosen else ""
    # the uploader and the built-in application, where they belong to that organization
    user = actor.user.name if actor.user and actor.user.owner == owner else ""
    application = b.BUILT_IN_APP if owner == b.BUILT_IN_ORG else ""
    return upload_file(db, actor, owner, user, application, "custom", "ResourceListPage", file_name, "",
                       content, provider=provider, sniffed=sniffed)
