"""Storage providers beyond the local files directory: S3-compatible object stores (AWS S3,
MinIO) through boto3. A resource uploaded with such a provider is put in its bucket, under its
pathPrefix; its URL is the provider's domain (or the endpoint and bucket) followed by the
object's key; deleting the resource deletes the object once the deletion is committed.

Every request boto3 makes goes through core/outbound.py: a `before-send` handler (botocore's
public event, the one its own Stubber answers from) sends it with `outbound.http_client` and
hands the answer back, so boto3's own connection pool never opens a connection. The endpoint is
thereby checked like any other destination (an internal MinIO must be listed in
IAM_OUTBOUND_ALLOW), on every request, at the address the connection goes to. Credentials are
required: boto3's fallback chain would otherwise ask the cloud's metadata endpoint itself.

boto3 and botocore (about 30 MB in a worker) are imported when a store is first used, not when the
server starts: most servers never use one (docs/performance.md, "Memory")."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from urllib.parse import quote, unquote, urlsplit

import httpx
import sqlalchemy as sa
from sqlmodel import Session, select

from iam_console import models as m
from iam_console.core import builtin as b
from iam_console.core import outbound
from iam_console.core.errors import ServiceError

LOCAL = "Local File System"
S3_TYPES = ("AWS S3", "MinIO")
STORAGE = "Storage"
MAX_OBJECT_BYTES = 64 * 1024 * 1024  # an answer of the object store (uploads are smaller)
log = logging.getLogger(__name__)


class _Answer:
    """An answer read whole, as botocore reads a response's raw stream."""

    def __init__(self, content: bytes) -> None:
        self._content, self._at = content, 0

    def stream(self, *_args, **_options):
        yield self.read()

    def read(self, amount: int | None = None) -> bytes:
        end = len(self._content) if amount is None else self._at + amount
        chunk, self._at = self._content[self._at:end], min(end, len(self._content))
        return chunk


def _send(request, **_kwargs):
    """botocore's `before-send`: the request goes out through the guard instead of boto3's pool."""
    from botocore.awsrequest import AWSResponse

    body = request.body
    if hasattr(body, "read"):
        body = body.read()
    headers = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in request.headers.items()
               if k.lower() != "expect"}  # no 100-continue: the body is sent at once
    try:
        with outbound.http_client(follow_redirects=False, max_bytes=MAX_OBJECT_BYTES) as client:
            answer = client.request(request.method, request.url, headers=headers, content=body or b"")
    except httpx.HTTPError as exc:
        raise ServiceError("Failed to reach the storage %s: %s", urlsplit(request.url).hostname or "",
                           str(exc) or type(exc).__name__) from None
    return AWSResponse(request.url, answer.status_code, dict(answer.headers), _Answer(answer.content))


@dataclass(frozen=True)
class S3Store:
    name: str  # the provider's
    endpoint: str
    region: str
    bucket: str
    access_key: str
    secret_key: str
    path_prefix: str
    domain: str

    def key(self, relative: str) -> str:
        return "/".join(part for part in (self.path_prefix.strip("/"), relative) if part)

    @property
    def base(self) -> str:
        if self.domain:
            domain = self.domain.rstrip("/")
            return domain if "://" in domain else f"https://{domain}"
        if self.endpoint:
            return f"{self.endpoint.rstrip('/')}/{self.bucket}"
        return f"https://{self.bucket}.s3.{self.region}.amazonaws.com"

    def url(self, key: str) -> str:
        return f"{self.base}/{quote(key)}"

    def key_of(self, url: str) -> str | None:
        """The object a URL of this store names (None: not one of its URLs)."""
        prefix = f"{self.base}/"
        return unquote(url[len(prefix):].split("?", 1)[0]) if url.startswith(prefix) else None

    def _client(self):
        import boto3
        from botocore.config import Config

        client = boto3.session.Session().client(
            "s3", endpoint_url=self.endpoint or None, region_name=self.region, aws_access_key_id=self.access_key,
            aws_secret_access_key=self.secret_key,
            config=Config(retries={"max_attempts": 1}, connect_timeout=outbound.TIMEOUT_SECONDS,
                          s3={"addressing_style": "path" if self.endpoint else "auto"}))
        client.meta.events.register("before-send.s3", _send)
        return client

    def _call(self, operation: str, **params) -> None:
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            getattr(self._client(), operation)(Bucket=self.bucket, **params)
        except ClientError as exc:
            raise ServiceError("The storage provider %s refused: %s", self.name,
                               exc.response.get("Error", {}).get("Message") or str(exc)) from None
        except BotoCoreError as exc:
            raise ServiceError("The storage provider %s failed: %s", self.name, str(exc)) from None

    def put(self, key: str, content: bytes, content_type: str) -> None:
        self._call("put_object", Key=key, Body=content, ContentType=content_type)

    def delete(self, key: str) -> None:
        self._call("delete_object", Key=key)

    def delete_after_commit(self, db: Session, key: str) -> None:
        def remove(_session) -> None:
            try:
                self.delete(key)
            except ServiceError as exc:  # the record is gone; the object stays, and is logged
                log.warning("Could not delete %s from the storage provider %s: %s", key, self.name, exc)

        sa.event.listen(db, "after_commit", remove, once=True)


def store_of(db: Session, owner: str, provider: str) -> S3Store | None:
    """The object store a provider name chooses for organization `owner` (its own provider, or a
    shared one); None: the local files directory (no provider, or a Local File System one)."""
    if not provider:
        return None
    rows = db.exec(select(m.Provider).where(m.Provider.name == provider,
                                            m.Provider.owner.in_((owner, b.ADMIN_OWNER)))).all()
    row = next((r for r in rows if r.owner == owner), rows[0] if rows else None)
    if row is None or row.category != STORAGE:
        raise ServiceError("The storage provider %s does not exist", provider)
    if row.type == LOCAL:
        return None
    if row.type not in S3_TYPES:
        raise ServiceError("The storage provider type %s is not supported", row.type)
    if not (row.bucket and row.client_id and row.client_secret):
        raise ServiceError("The storage provider %s needs a bucket, an access key and a secret", provider)
    return S3Store(row.name, row.endpoint.strip(), row.region_id or "us-east-1", row.bucket, row.client_id,
                   row.client_secret, row.path_prefix, row.domain.strip())
